/* Building DOM from untrusted data: createElement and text nodes only, never innerHTML. */

let uidCounter = 0;

/** A page-unique id for label/aria wiring. */
export const uid = (prefix) => `${prefix}-${++uidCounter}`;

/** createElement with attributes; string children become text nodes (never parsed as HTML). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') el.className = value;
      else if (value === true) el.setAttribute(key, '');
      else el.setAttribute(key, String(value));
    }
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) el.append(child);
  }
  return el;
}
