/* A tool call's arguments: shown as read-only text, edited as JSON, compared as a diff. */
import { h } from './dom.js';
import { revealed } from './reveal.js';
import { canonical, compact, has, isObj, isPrimitive } from './values.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const DIFF_SIGNS = { added: '+', removed: '−', changed: '~' };

/** Show args as a key/value list (objects) or pretty JSON (anything else). */
export function renderArgs(container, args) {
  if (!isObj(args)) {
    container.replaceChildren(h('pre', { class: 'args__json' }, revealed(JSON.stringify(args === undefined ? null : args, null, 2))));
    return;
  }
  const keys = Object.keys(args);
  if (!keys.length) {
    container.replaceChildren(h('p', { class: 'args__none' }, 'No arguments'));
    return;
  }
  const rows = keys.map((key) => {
    const v = args[key];
    let dd;
    if (typeof v === 'string') dd = h('dd', { class: 'args__value args__value--text' }, revealed(v));
    else if (isPrimitive(v) || v === null) dd = h('dd', { class: 'args__value args__value--literal' }, JSON.stringify(v));
    else dd = h('dd', { class: 'args__value' }, tree(v));
    return h('div', { class: 'args__row', 'data-key': key }, h('dt', { class: 'args__key' }, revealed(key)), dd);
  });
  container.replaceChildren(h('dl', { class: 'args__list' }, ...rows));
}

/** A nested value as an indented tree: every key and value in full, wrapping, no scroll box. */
function tree(v) {
  if (typeof v === 'string') return h('span', { class: 'args__leaf args__leaf--text' }, revealed(v));
  if (!Array.isArray(v) && !isObj(v)) return h('span', { class: 'args__leaf args__leaf--literal' }, JSON.stringify(v === undefined ? null : v));
  const keys = Object.keys(v);
  if (!keys.length) return h('span', { class: 'args__leaf args__leaf--literal' }, Array.isArray(v) ? '[]' : '{}');
  const items = keys.map((key) => h('li', { class: 'args__node' },
    h('span', { class: 'args__node-key' }, Array.isArray(v) ? `${Number(key) + 1}.` : revealed(key)), ' ', tree(v[key])));
  return h(Array.isArray(v) ? 'ol' : 'ul', { class: 'args__tree' }, ...items);
}

/** Parse the editor text: a JSON object the server will accept, or a reason why not. */
export function parseArgs(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `Not valid JSON: ${err.message}` };
  }
  if (!isObj(value)) return { ok: false, error: 'Arguments must be a JSON object: { "name": value, … }' };
  const dup = findDuplicateKey(text);
  if (dup !== null) return { ok: false, error: `Duplicate key "${dup}": each key may appear only once.` };
  const big = findUnsafeInteger(value);
  if (big !== null) return { ok: false, error: `The number ${big} is too large to keep exactly (limit ±${MAX_SAFE}).` };
  return { ok: true, value };
}

// JSON.parse silently keeps the last of duplicate keys; the server refuses them. Only
// called on text that already parsed, so a light scan is enough.
function findDuplicateKey(text) {
  const stack = []; // Set of keys per open object, null per open array
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const keys = stack[stack.length - 1];
      if (keys && expectKey) {
        const key = JSON.parse(text.slice(i, j + 1));
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === '{') {
      stack.push(new Set());
      expectKey = true;
    } else if (c === '[') {
      stack.push(null);
      expectKey = false;
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') {
      expectKey = stack[stack.length - 1] instanceof Set;
    }
  }
  return null;
}

function findUnsafeInteger(v) {
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) > MAX_SAFE ? v : null;
  if (Array.isArray(v) || isObj(v)) {
    for (const item of Object.values(v)) {
      const found = findUnsafeInteger(item);
      if (found !== null) return found;
    }
  }
  return null;
}

/** Per-path changes between two args objects: added / removed / changed. */
export function diffArgs(before, after, path = [], out = []) {
  if (isObj(before) && isObj(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of keys) {
      const p = path.concat(key);
      if (!has(after, key)) out.push({ op: 'removed', path: p, before: before[key] });
      else if (!has(before, key)) out.push({ op: 'added', path: p, after: after[key] });
      else diffArgs(before[key], after[key], p, out);
    }
  } else if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    before.forEach((item, i) => diffArgs(item, after[i], path.concat(i), out));
  } else if (canonical(before) !== canonical(after)) {
    out.push({ op: 'changed', path, before, after });
  }
  return out;
}

export function pathText(path) {
  return path.reduce((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '') || '(all)';
}

export function renderDiff(container, changes) {
  if (!changes.length) {
    container.replaceChildren(h('p', { class: 'diff__none' }, 'No changes yet — edit the values above.'));
    return;
  }
  const items = changes.map((c) => {
    const path = pathText(c.path);
    const parts = [h('span', { class: 'diff__sign', 'aria-label': c.op }, DIFF_SIGNS[c.op]), h('span', { class: 'diff__path' }, revealed(path))];
    if (c.op !== 'added') parts.push(h('del', { class: 'diff__before' }, revealed(compact(c.before))));
    if (c.op === 'changed') parts.push(h('span', { class: 'diff__arrow', 'aria-hidden': 'true' }, '→'));
    if (c.op !== 'removed') parts.push(h('ins', { class: 'diff__after' }, revealed(compact(c.after))));
    return h('li', { class: `diff__item diff__item--${c.op}`, 'data-op': c.op, 'data-path': path }, ...parts);
  });
  const n = changes.length;
  container.replaceChildren(
    h('p', { class: 'diff__title' }, `${n} change${n === 1 ? '' : 's'} from the requested arguments`),
    h('ul', { class: 'diff__list' }, ...items),
  );
}
