/* Plain-data helpers. Everything the server sends is untrusted: check its shape before use. */

export const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
export const str = (v) => (typeof v === 'string' ? v : '');
export const isPrimitive = (v) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
export const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
export const pad2 = (n) => String(n).padStart(2, '0');

/** The patient context a card shows: the one its approval is bound to (bound_context), else its session's. */
export const patientContext = (card) => (isObj(card.bound_context) ? card.bound_context : isObj(card.session) ? card.session : {});

/** Canonical JSON (sorted keys) for equality checks. */
export function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObj(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v === undefined ? null : v);
}

/** One-line JSON, cut to `max` characters. */
export function compact(v, max = 160) {
  let s;
  try { s = JSON.stringify(v); } catch (_) { s = String(v); }
  if (s === undefined) s = 'null';
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
