/* Condor reviewer inbox.
 *
 * Cards arrive over the inbox websocket (snapshot / card.added / card.updated /
 * card.removed); decisions go to the REST decision endpoint. Everything the server
 * sends is untrusted clinical data, so the DOM is built with createElement and
 * textContent only — never innerHTML.
 *
 * Built to stay smooth with hundreds of cards: one entry per approval id owns its DOM
 * node, a change touches only that node, reordering moves only nodes that are out of
 * place, and one shared 1 s timer rewrites countdown text only when it changes.
 */
(() => {
  'use strict';

  const root = document.getElementById('inbox');
  if (!root) return;

  const cfg = {
    wsPath: root.dataset.wsPath || '/ws/inbox/',
    decisionUrl: root.dataset.decisionUrlTemplate || '/api/v1/approvals/{id}/decision/',
    username: root.dataset.username || '',
  };
  const BACKOFF_MIN_MS = 500;
  const BACKOFF_MAX_MS = 10000;
  const PING_EVERY_S = 25;
  const URGENT_S = 60;
  const TOAST_MS = 10000;
  const MAX_TOASTS = 4;
  const MAX_SAFE = Number.MAX_SAFE_INTEGER;
  const CHECK_FIELDS = 'Check the highlighted fields.';

  const listEl = root.querySelector('[data-testid="card-list"]');
  const emptyEl = root.querySelector('[data-testid="empty-state"]');
  const countEl = root.querySelector('[data-testid="pending-count"]');
  const summaryEl = root.querySelector('[data-testid="pending-summary"]');
  const feedbackEl = root.querySelector('[data-testid="inbox-feedback"]');
  const staleEl = root.querySelector('[data-testid="stale-notice"]');
  const connEl = document.querySelector('[data-testid="connection-state"]');
  const baseTitle = document.title;

  const entries = new Map(); // approval id -> entry (card data + the DOM it owns)
  const entryOf = new WeakMap(); // card element -> entry
  let order = []; // ids in display order
  let selectedId = null;
  let lastIndex = 0; // where the selection was, so j/k resume there after a removal
  let loaded = false; // until the first snapshot, "nothing waiting" would be a lie
  // Ids this page decided successfully. A snapshot built just before our decision
  // committed must not resurrect the card (deciding it again could only fail).
  const decidedHere = new Set();

  // ---------------------------------------------------------------- small helpers

  let uidCounter = 0;
  const uid = (prefix) => `${prefix}-${++uidCounter}`;
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  const str = (v) => (typeof v === 'string' ? v : '');
  const isPrimitive = (v) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
  const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
  const pad2 = (n) => String(n).padStart(2, '0');

  /** createElement with attributes; string children become text nodes (never parsed as HTML). */
  function h(tag, attrs, ...children) {
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

  function timeOf(iso, fallback) {
    // Python's isoformat() has microseconds; the ECMAScript date format allows milliseconds.
    const t = typeof iso === 'string' ? Date.parse(iso.replace(/(\.\d{3})\d+/, '$1')) : NaN;
    return Number.isFinite(t) ? t : fallback;
  }

  /** Canonical JSON (sorted keys) for equality checks. */
  function canonical(v) {
    if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
    if (isObj(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
    return JSON.stringify(v === undefined ? null : v);
  }

  function compact(v, max = 160) {
    let s;
    try { s = JSON.stringify(v); } catch (_) { s = String(v); }
    if (s === undefined) s = 'null';
    return s.length > max ? `${s.slice(0, max - 1)}…` : s;
  }

  function clockTime(ms) {
    if (!Number.isFinite(ms)) return '';
    const d = new Date(ms);
    return `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
  }

  function formatLeft(seconds) {
    if (seconds >= 3600) return `${Math.floor(seconds / 3600)} h ${pad2(Math.floor((seconds % 3600) / 60))} min left`;
    return `${Math.floor(seconds / 60)}:${pad2(seconds % 60)} left`;
  }

  function cardLabel(card) {
    const session = isObj(card.session) ? card.session : {};
    const what = [str(card.tool) || 'Request', str(card.op)].filter(Boolean).join(' · ');
    const who = str(session.patient_ref) || str(session.title);
    return who ? `${what} (${who})` : what;
  }

  // ---------------------------------------------------------------- feedback

  /** Announce a short message in the shared aria-live region. kind: success|info|error. */
  function announce(text, kind = 'info') {
    const close = h('button', { type: 'button', class: 'toast__close', 'aria-label': 'Dismiss message' }, '×');
    const toast = h('div', { class: `toast toast--${kind}`, 'data-kind': kind, 'data-testid': 'feedback-message' },
      h('p', { class: 'toast__text' }, text), close);
    toast.expiresAt = kind === 'error' ? Infinity : Date.now() + TOAST_MS;
    close.addEventListener('click', () => toast.remove());
    feedbackEl.append(toast);
    while (feedbackEl.children.length > MAX_TOASTS) feedbackEl.firstElementChild.remove();
  }

  function expireToasts(now) {
    for (const toast of Array.from(feedbackEl.children)) {
      if (toast.expiresAt <= now) toast.remove();
    }
  }

  // ---------------------------------------------------------------- args: parse, diff

  /** Parse the editor text: a JSON object the server will accept, or a reason why not. */
  function parseArgs(text) {
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
  function diffArgs(before, after, path = [], out = []) {
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

  function pathText(path) {
    return path.reduce((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '') || '(all)';
  }

  function renderDiff(container, changes) {
    if (!changes.length) {
      container.replaceChildren(h('p', { class: 'diff__none' }, 'No changes yet — edit the values above.'));
      return;
    }
    const items = changes.map((c) => {
      const path = h('span', { class: 'diff__path' }, pathText(c.path));
      const sign = { added: '+', removed: '−', changed: '~' }[c.op];
      const label = { added: 'added', removed: 'removed', changed: 'changed' }[c.op];
      const parts = [h('span', { class: 'diff__sign', 'aria-label': label }, sign), path];
      if (c.op !== 'added') parts.push(h('del', { class: 'diff__before' }, compact(c.before)));
      if (c.op === 'changed') parts.push(h('span', { class: 'diff__arrow', 'aria-hidden': 'true' }, '→'));
      if (c.op !== 'removed') parts.push(h('ins', { class: 'diff__after' }, compact(c.after)));
      return h('li', { class: `diff__item diff__item--${c.op}`, 'data-op': c.op, 'data-path': pathText(c.path) }, ...parts);
    });
    const n = changes.length;
    container.replaceChildren(
      h('p', { class: 'diff__title' }, `${n} change${n === 1 ? '' : 's'} from the requested arguments`),
      h('ul', { class: 'diff__list' }, ...items),
    );
  }

  function renderArgs(container, args) {
    if (isObj(args)) {
      const keys = Object.keys(args);
      if (!keys.length) {
        container.replaceChildren(h('p', { class: 'args__none' }, 'No arguments'));
        return;
      }
      const rows = keys.map((key) => {
        const v = args[key];
        let dd;
        if (typeof v === 'string') dd = h('dd', { class: 'args__value args__value--text' }, v);
        else if (isPrimitive(v) || v === null) dd = h('dd', { class: 'args__value args__value--literal' }, JSON.stringify(v));
        else dd = h('dd', { class: 'args__value' }, h('pre', { class: 'args__json' }, JSON.stringify(v, null, 2)));
        return h('div', { class: 'args__row', 'data-key': key }, h('dt', { class: 'args__key' }, key), dd);
      });
      container.replaceChildren(h('dl', { class: 'args__list' }, ...rows));
    } else {
      container.replaceChildren(h('pre', { class: 'args__json' }, JSON.stringify(args === undefined ? null : args, null, 2)));
    }
  }

  // ---------------------------------------------------------------- clarification forms

  // The one place that maps the resume schema (JSON Schema + Condor hints) to controls.
  // Adjust here when approvals/resume_schemas.py settles its extension key names.
  const HINTS = {
    widget: ['x-condor-widget', 'x-widget'],
    min: ['formatMinimum', 'x-condor-min', 'formatExclusiveMinimum'],
    max: ['formatMaximum', 'x-condor-max', 'formatExclusiveMaximum'],
  };
  const firstHint = (prop, keys) => keys.map((k) => prop[k]).find((v) => v !== undefined && v !== null);

  /** Describe the control for one schema property; malformed hints degrade to free text. */
  function fieldSpec(name, rawProp, required) {
    const prop = isObj(rawProp) ? rawProp : {};
    const types = (Array.isArray(prop.type) ? prop.type : [prop.type]).filter((t) => t && t !== 'null');
    const type = types[0] || (readOptions(prop) ? 'string' : undefined);
    const widget = str(firstHint(prop, HINTS.widget));
    const spec = {
      name,
      label: str(prop.title) || name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
      description: str(prop.description),
      required,
      kind: 'text',
      inputType: 'text',
      defaultValue: prop.default,
    };
    const int = (v) => (Number.isInteger(v) && v >= 0 ? v : undefined);
    const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

    if (type === 'array') {
      const options = readOptions(prop.items);
      if (options) return Object.assign(spec, { kind: 'checkboxes', options, minItems: int(prop.minItems), maxItems: int(prop.maxItems) });
      return Object.assign(spec, { kind: 'lines' });
    }
    const options = readOptions(prop);
    if (options) return Object.assign(spec, { kind: widget === 'radio' ? 'radio' : 'select', options });
    if (type === 'boolean') return Object.assign(spec, { kind: 'boolean' });
    if (type === 'number' || type === 'integer') {
      const integer = type === 'integer';
      const multipleOf = num(prop.multipleOf);
      return Object.assign(spec, {
        kind: 'number',
        integer,
        min: num(prop.minimum) ?? num(prop.exclusiveMinimum),
        max: num(prop.maximum) ?? num(prop.exclusiveMaximum),
        step: integer ? (Number.isInteger(multipleOf) && multipleOf > 0 ? multipleOf : 1) : (multipleOf > 0 ? multipleOf : 'any'),
      });
    }
    const format = str(prop.format);
    if (format === 'date' || format === 'date-time') {
      const kind = format === 'date' ? 'date' : 'datetime';
      return Object.assign(spec, {
        kind,
        min: boundFor(kind, firstHint(prop, HINTS.min), true),
        max: boundFor(kind, firstHint(prop, HINTS.max), false),
      });
    }
    if (widget === 'textarea') return Object.assign(spec, { kind: 'textarea', minLength: int(prop.minLength), maxLength: int(prop.maxLength) });
    const inputType = { email: 'email', uri: 'url' }[format] || 'text';
    return Object.assign(spec, { inputType, minLength: int(prop.minLength), maxLength: int(prop.maxLength) });
  }

  /** Options from enum (+ legacy enumNames) or oneOf/anyOf of {const, title}; null if none/malformed. */
  function readOptions(schema) {
    if (!isObj(schema)) return null;
    if (Array.isArray(schema.enum) && schema.enum.length && schema.enum.every(isPrimitive)) {
      const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
      return schema.enum.map((value, i) => ({ value, label: str(names[i]) || String(value) }));
    }
    for (const key of ['oneOf', 'anyOf']) {
      const list = schema[key];
      if (Array.isArray(list) && list.length && list.every((o) => isObj(o) && has(o, 'const') && isPrimitive(o.const))) {
        return list.map((o) => ({ value: o.const, label: str(o.title) || String(o.const) }));
      }
    }
    return null;
  }

  const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

  /** A schema bound as the value an <input type=date|datetime-local> understands.
   * date-time bounds are instants (RFC 3339 with offset), shown in the reviewer's zone;
   * the inputs have minute precision, so a minimum rounds up to stay inside it. */
  function boundFor(kind, raw, isMin) {
    if (typeof raw !== 'string') return undefined;
    if (kind === 'date') {
      const day = raw.slice(0, 10);
      return DATE_RE.test(day) && Number.isFinite(Date.parse(day)) ? day : undefined;
    }
    if (DATE_RE.test(raw)) return `${raw}T00:00`;
    let t = Date.parse(raw);
    if (!Number.isFinite(t)) return undefined;
    if (isMin && t % 60000 !== 0) t += 60000 - (((t % 60000) + 60000) % 60000);
    return localInputValue(new Date(t));
  }

  function localInputValue(d) {
    return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}T${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
  }

  /** datetime-local value (no zone) -> RFC 3339 with the reviewer's offset. */
  function toRfc3339(local) {
    const d = new Date(local);
    if (!Number.isFinite(d.getTime())) return local;
    const off = -d.getTimezoneOffset();
    const sign = off >= 0 ? '+' : '-';
    const abs = Math.abs(off);
    return `${local.length === 16 ? `${local}:00` : local}${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
  }

  function fromDefault(kind, value) {
    if (kind === 'datetime' && typeof value === 'string') return boundFor('datetime', value, false) || '';
    if (kind === 'date' && typeof value === 'string') return boundFor('date', value, false) || '';
    return isPrimitive(value) ? String(value) : '';
  }

  /** Build one form field: {el, read() -> {present, value}, validate() -> message|'', focus()}. */
  function buildField(spec) {
    const id = uid('field');
    const errId = uid('err');
    const descId = spec.description ? uid('desc') : null;
    const describedBy = [descId, errId].filter(Boolean).join(' ');
    const error = h('p', { class: 'field__error', id: errId, hidden: true });
    const desc = descId ? h('p', { class: 'field__desc', id: descId }, spec.description) : null;
    const req = spec.required ? h('span', { class: 'field__req' }, h('span', { 'aria-hidden': 'true' }, '*'), h('span', { class: 'visually-hidden' }, ' (required)')) : null;
    const common = { id, name: spec.name, 'aria-describedby': describedBy, 'data-kind': spec.kind };
    const absent = { present: false };
    let control;
    let read;
    let validate = () => '';
    let focusable;
    let group = false;

    switch (spec.kind) {
      case 'select': {
        control = h('select', { ...common, class: 'input', required: spec.required },
          h('option', { value: '' }, spec.required ? 'Choose…' : '— none —'),
          // value= is the option's own value (handy for tests); reads go by position, keeping its JSON type.
          ...spec.options.map((o) => h('option', { value: String(o.value) }, o.label)));
        const preset = spec.options.findIndex((o) => o.value === spec.defaultValue);
        if (preset >= 0) control.selectedIndex = preset + 1;
        read = () => (control.selectedIndex < 1 ? absent : { present: true, value: spec.options[control.selectedIndex - 1].value });
        validate = () => (spec.required && control.selectedIndex < 1 ? 'Choose an option.' : '');
        break;
      }
      case 'radio':
      case 'checkboxes': {
        group = true;
        const multi = spec.kind === 'checkboxes';
        const defaults = multi ? (Array.isArray(spec.defaultValue) ? spec.defaultValue : []) : [spec.defaultValue];
        const inputs = spec.options.map((o, i) => h('input', {
          type: multi ? 'checkbox' : 'radio',
          class: 'choice__input',
          id: uid('opt'),
          name: spec.name,
          value: String(o.value),
          'data-index': String(i),
          'data-kind': spec.kind,
          required: !multi && spec.required,
          checked: defaults.some((d) => d === o.value),
        }));
        control = h('div', { class: 'choices' }, ...inputs.map((input, i) => h('label', { class: 'choice', for: input.id }, input, h('span', { class: 'choice__label' }, spec.options[i].label))));
        focusable = inputs[0];
        const picked = () => inputs.filter((input) => input.checked).map((input) => spec.options[Number(input.dataset.index)].value);
        if (multi) {
          read = () => {
            const values = picked();
            return values.length || spec.required ? { present: true, value: values } : absent;
          };
          validate = () => {
            const n = picked().length;
            if (spec.required && n === 0 && !(spec.minItems === 0)) return 'Choose at least one.';
            if (spec.minItems !== undefined && n < spec.minItems && (n > 0 || spec.required)) return `Choose at least ${spec.minItems}.`;
            if (spec.maxItems !== undefined && n > spec.maxItems) return `Choose at most ${spec.maxItems}.`;
            return '';
          };
        } else {
          read = () => {
            const values = picked();
            return values.length ? { present: true, value: values[0] } : absent;
          };
          validate = () => (spec.required && picked().length === 0 ? 'Choose an option.' : '');
        }
        break;
      }
      case 'boolean': {
        control = h('input', { ...common, type: 'checkbox', class: 'choice__input', checked: spec.defaultValue === true });
        read = () => ({ present: true, value: control.checked });
        break;
      }
      case 'number': {
        control = h('input', {
          ...common, type: 'number', class: 'input input--number', inputmode: spec.integer ? 'numeric' : 'decimal',
          min: spec.min, max: spec.max, step: spec.step, required: spec.required, value: fromDefault('number', spec.defaultValue),
        });
        read = () => (control.value === '' ? absent : { present: true, value: control.valueAsNumber });
        validate = () => {
          if (control.validity.badInput) return 'Enter a number.';
          if (control.value === '') return spec.required ? 'Required.' : '';
          const v = control.valueAsNumber;
          if (!Number.isFinite(v)) return 'Enter a number.';
          if (spec.integer && !Number.isInteger(v)) return 'Enter a whole number.';
          if (spec.min !== undefined && v < spec.min) return `Must be at least ${spec.min}.`;
          if (spec.max !== undefined && v > spec.max) return `Must be at most ${spec.max}.`;
          return '';
        };
        break;
      }
      case 'date':
      case 'datetime': {
        const isDate = spec.kind === 'date';
        control = h('input', {
          ...common, type: isDate ? 'date' : 'datetime-local', class: 'input input--date',
          min: spec.min, max: spec.max, required: spec.required, value: fromDefault(spec.kind, spec.defaultValue),
        });
        read = () => (control.value === '' ? absent : { present: true, value: isDate ? control.value : toRfc3339(control.value) });
        validate = () => {
          if (control.validity.badInput) return isDate ? 'Enter a complete date.' : 'Enter a complete date and time.';
          if (control.value === '') return spec.required ? 'Required.' : '';
          const show = (v) => v.replace('T', ' ');
          // Same-format ISO strings compare correctly as strings.
          if (spec.min && control.value < spec.min) return `Must be on or after ${show(spec.min)}.`;
          if (spec.max && control.value > spec.max) return `Must be on or before ${show(spec.max)}.`;
          return '';
        };
        break;
      }
      case 'textarea':
      case 'lines':
      case 'text':
      default: {
        const multiline = spec.kind !== 'text';
        control = multiline
          ? h('textarea', { ...common, class: 'input input--textarea', rows: spec.kind === 'lines' ? 3 : 4, required: spec.required, maxlength: spec.maxLength })
          : h('input', { ...common, type: spec.inputType, class: 'input', required: spec.required, maxlength: spec.maxLength, value: fromDefault('text', spec.defaultValue) });
        if (multiline && isPrimitive(spec.defaultValue)) control.value = String(spec.defaultValue);
        if (spec.kind === 'lines') {
          read = () => {
            const lines = control.value.split('\n').map((s) => s.trim()).filter(Boolean);
            return lines.length || spec.required ? { present: true, value: lines } : absent;
          };
        } else {
          read = () => (control.value.trim() === '' ? absent : { present: true, value: control.value });
        }
        validate = () => {
          const v = control.value.trim();
          if (!v) return spec.required ? 'Required.' : '';
          if (spec.minLength !== undefined && control.value.length < spec.minLength) return `Enter at least ${spec.minLength} characters.`;
          if (spec.inputType !== 'text' && !control.checkValidity()) return control.validationMessage;
          return '';
        };
      }
    }
    focusable = focusable || control;

    let el;
    if (group) {
      el = h('fieldset', { class: 'field field--group', 'data-field': spec.name, 'aria-describedby': describedBy },
        h('legend', { class: 'field__label' }, spec.label, req), desc, control, error);
    } else if (spec.kind === 'boolean') {
      el = h('div', { class: 'field field--check', 'data-field': spec.name },
        h('label', { class: 'choice', for: id }, control, h('span', { class: 'choice__label' }, spec.label, req)), desc, error);
    } else {
      el = h('div', { class: 'field', 'data-field': spec.name },
        h('label', { class: 'field__label', for: id }, spec.label, req), desc, control, error);
    }

    const showError = (message) => {
      error.textContent = message;
      error.hidden = !message;
      el.classList.toggle('field--invalid', Boolean(message));
      const targets = group ? el.querySelectorAll('input') : [control];
      for (const t of targets) {
        if (message) t.setAttribute('aria-invalid', 'true');
        else t.removeAttribute('aria-invalid');
      }
    };
    return { spec, el, read, validate, showError, focus: () => focusable.focus() };
  }

  function buildClarificationForm(entry, schema) {
    const props = isObj(schema) && isObj(schema.properties) ? schema.properties : {};
    const required = new Set(isObj(schema) && Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : []);
    const fields = Object.keys(props).map((name) => buildField(fieldSpec(name, props[name], required.has(name))));
    const submit = h('button', { type: 'submit', class: 'btn btn--primary', 'data-testid': 'clarify-submit' }, 'Send answer');
    const form = h('form', { class: 'card__form', 'data-testid': 'clarify-form', novalidate: true },
      ...fields.map((f) => f.el),
      fields.length ? null : h('p', { class: 'field__desc' }, 'No fields requested — send to confirm.'),
      h('div', { class: 'card__actions' }, submit,
        required.size ? h('span', { class: 'card__hint' }, '* required') : null));
    entry.form = { el: form, fields, submit };
    entry.refs.formSlot.replaceChildren(form);
  }

  function collectValues(entry) {
    const values = {};
    let firstInvalid = null;
    for (const field of entry.form.fields) {
      const message = field.validate();
      field.showError(message);
      if (message && !firstInvalid) firstInvalid = field;
      const { present, value } = field.read();
      if (present) values[field.spec.name] = value;
    }
    return { values, firstInvalid };
  }

  // ---------------------------------------------------------------- card DOM

  function kindOf(card) {
    return card.reason_code === 'clarification' ? 'clarification' : 'approval';
  }

  function createEntry(card) {
    const entry = {
      id: card.id,
      kind: kindOf(card),
      card: null,
      json: '',
      schemaKey: null,
      refs: {},
      el: null,
      mode: 'view', // view | reject | edit
      busy: false,
      expired: false,
      urgent: false,
      countdownText: '',
      dirty: false,
      removedInfo: null,
      edit: { valid: false, value: null, changes: [] },
      form: null,
    };
    buildSkeleton(entry);
    applyCard(entry, card);
    return entry;
  }

  function buildSkeleton(entry) {
    const r = entry.refs;
    const titleId = uid('card-title');
    r.tier = h('span', { class: 'badge', 'data-testid': 'tier-badge' });
    r.kindBadge = h('span', { class: 'badge badge--question' }, 'Needs an answer');
    r.tool = h('span', { class: 'card__tool', 'data-testid': 'card-tool' });
    r.op = h('span', { class: 'card__op', 'data-testid': 'card-op' });
    r.countdownText = document.createTextNode('');
    r.countdown = h('span', { class: 'countdown', 'data-testid': 'countdown' }, r.countdownText);
    r.session = h('span', { class: 'meta__session', 'data-testid': 'card-session' });
    r.patient = h('span', { class: 'meta__patient', 'data-testid': 'card-patient' });
    r.client = h('span', { class: 'meta__client', 'data-testid': 'card-client' });
    r.requested = h('time', { class: 'meta__time' });
    r.ruleId = h('code', { class: 'card__rule-id', 'data-testid': 'card-rule' });
    r.explanation = h('span', { class: 'card__explanation', 'data-testid': 'card-explanation' });
    r.question = h('p', { class: 'card__question', 'data-testid': 'card-question' });
    r.args = h('div', { class: 'args', 'data-testid': 'card-args' });
    r.argsBlock = h('section', { class: 'card__args', 'aria-label': 'Arguments' }, h('h3', { class: 'card__section-title' }, 'Arguments'), r.args);
    r.error = h('p', { class: 'card__error', role: 'alert', 'data-testid': 'card-error', hidden: true });
    r.body = h('div', { class: 'card__body' });

    entry.el = h('article', {
      class: `card card--${entry.kind}`,
      'data-testid': 'approval-card',
      'data-kind': entry.kind,
      tabindex: '-1',
      'aria-labelledby': titleId,
    },
    h('header', { class: 'card__head' },
      h('div', { class: 'card__badges' }, r.tier, entry.kind === 'clarification' ? r.kindBadge : null),
      h('h2', { class: 'card__title', id: titleId }, r.tool, ' ', r.op),
      r.countdown),
    // The ' ' text nodes keep words apart for screen readers (flex layout ignores them).
    h('p', { class: 'card__meta' },
      h('span', { class: 'visually-hidden' }, 'Patient '), r.patient, ' ',
      h('span', { class: 'meta__sep', 'aria-hidden': 'true' }, '·'), ' ', r.session, ' ',
      h('span', { class: 'meta__sep', 'aria-hidden': 'true' }, '·'), ' ', h('span', { class: 'meta__by' }, 'requested by ', r.client), ' ',
      h('span', { class: 'meta__sep', 'aria-hidden': 'true' }, '·'), ' ', r.requested),
    h('p', { class: 'card__rule' }, r.ruleId, ' ', r.explanation),
    r.question,
    r.argsBlock,
    r.body,
    r.error);
    entry.el.dataset.approvalId = entry.id;
    entryOf.set(entry.el, entry);

    if (entry.kind === 'approval') buildApprovalControls(entry);
    else r.formSlot = r.body;
  }

  function buildApprovalControls(entry) {
    const r = entry.refs;
    r.approve = h('button', { type: 'button', class: 'btn btn--approve', 'data-action': 'approve', 'data-testid': 'approve' }, 'Approve');
    r.reject = h('button', { type: 'button', class: 'btn btn--reject', 'data-action': 'open-reject', 'data-testid': 'reject', 'aria-expanded': 'false' }, 'Reject…');
    r.edit = h('button', { type: 'button', class: 'btn', 'data-action': 'open-edit', 'data-testid': 'edit', 'aria-expanded': 'false' }, 'Edit args');
    r.actions = h('div', { class: 'card__actions', 'data-testid': 'card-actions' }, r.approve, r.reject, r.edit);

    const reasonId = uid('reason');
    r.reason = h('textarea', { id: reasonId, class: 'input input--textarea', rows: 2, name: 'reason', 'data-role': 'reason', 'data-testid': 'reject-reason', required: true, placeholder: 'Why should this not go ahead?' });
    r.rejectSubmit = h('button', { type: 'button', class: 'btn btn--reject-solid', 'data-action': 'reject', 'data-testid': 'reject-submit', disabled: true }, 'Reject request');
    r.rejectPanel = h('div', { class: 'panel panel--reject', 'data-testid': 'reject-panel', hidden: true },
      h('label', { class: 'field__label', for: reasonId }, 'Reason for rejecting', h('span', { class: 'field__req' }, ' (required)')),
      r.reason,
      h('div', { class: 'card__actions' }, r.rejectSubmit,
        h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'cancel', 'data-testid': 'reject-cancel' }, 'Cancel')));

    const editorId = uid('editor');
    const statusId = uid('editor-status');
    r.editor = h('textarea', {
      id: editorId, class: 'input input--code', rows: 8, spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off',
      'data-role': 'editor', 'data-testid': 'args-editor', 'aria-describedby': statusId,
    });
    r.editStatus = h('p', { class: 'editor__status', id: statusId, 'data-testid': 'args-editor-error' });
    r.diff = h('div', { class: 'diff', 'data-testid': 'args-diff' });
    r.approveEdited = h('button', { type: 'button', class: 'btn btn--approve', 'data-action': 'approve-edited', 'data-testid': 'approve-edited', disabled: true }, 'Approve edited');
    r.editPanel = h('div', { class: 'panel panel--edit', 'data-testid': 'edit-panel', hidden: true },
      h('label', { class: 'field__label', for: editorId }, 'Arguments to approve (JSON object)'),
      r.editor, r.editStatus, r.diff,
      h('div', { class: 'card__actions' }, r.approveEdited,
        h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'cancel', 'data-testid': 'edit-cancel' }, 'Cancel')));

    r.body.append(r.editPanel, r.rejectPanel, r.actions);
  }

  /** Write card data into the entry's existing DOM (text nodes and small subtrees only). */
  function applyCard(entry, card) {
    const json = canonical(card);
    if (json === entry.json) return false;
    const prev = entry.card;
    entry.card = card;
    entry.json = json;
    const r = entry.refs;
    const session = isObj(card.session) ? card.session : {};
    const client = isObj(card.client) ? card.client : {};
    const tier = card.hitl_tier === 'high' || card.hitl_tier === 'low' ? card.hitl_tier : 'none';

    entry.tierRank = { high: 0, low: 1, none: 2 }[tier];
    entry.expiresMs = timeOf(card.expires_at, Infinity);
    entry.requestedMs = timeOf(card.requested_at, 0);

    entry.el.dataset.tier = tier;
    r.tier.textContent = { high: 'High risk', low: 'Low risk', none: '' }[tier];
    r.tier.className = `badge badge--${tier}`;
    r.tier.hidden = tier === 'none';
    r.tool.textContent = str(card.tool) || 'unknown tool';
    r.op.textContent = str(card.op);
    r.op.hidden = !str(card.op);
    r.patient.textContent = str(session.patient_ref) || 'No patient ref';
    r.session.textContent = str(session.title) || 'Untitled session';
    r.client.textContent = str(client.name) || 'unknown client';
    r.requested.textContent = Number.isFinite(timeOf(card.requested_at, NaN)) ? `at ${clockTime(entry.requestedMs)}` : '';
    r.requested.dateTime = str(card.requested_at);
    r.countdown.title = Number.isFinite(entry.expiresMs) ? `Expires at ${clockTime(entry.expiresMs)}` : '';
    r.ruleId.textContent = str(card.rule_id);
    r.ruleId.hidden = !str(card.rule_id);
    r.explanation.textContent = str(card.explanation);
    // The clarification question; resume_schemas.py also puts it in the schema's description.
    const question = str(card.message) || (entry.kind === 'clarification' && isObj(card.resume_schema) ? str(card.resume_schema.description) : '');
    r.question.textContent = question;
    r.question.hidden = !question;

    if (!prev || canonical(prev.args) !== canonical(card.args)) {
      renderArgs(r.args, card.args);
      if (entry.mode === 'edit') validateEdit(entry);
    }
    if (entry.kind === 'clarification') {
      const schemaKey = canonical(card.resume_schema);
      // Rebuilding would wipe what the reviewer typed; keep their form if they started.
      if (schemaKey !== entry.schemaKey && !entry.dirty) {
        entry.schemaKey = schemaKey;
        buildClarificationForm(entry, card.resume_schema);
      }
      // The args of a clarification are context; the question is what matters.
      r.argsBlock.hidden = !isObj(card.args) || !Object.keys(card.args).length;
    }
    updateClock(entry, Date.now());
    syncControls(entry);
    return true;
  }

  function syncControls(entry) {
    const r = entry.refs;
    const locked = entry.busy || entry.expired;
    if (entry.kind === 'approval') {
      r.approve.disabled = locked;
      r.reject.disabled = locked;
      r.edit.disabled = locked;
      r.rejectSubmit.disabled = locked || !r.reason.value.trim();
      r.approveEdited.disabled = locked || !entry.edit.valid || !entry.edit.changes.length;
    } else if (entry.form) {
      entry.form.submit.disabled = locked;
    }
    entry.el.classList.toggle('is-busy', entry.busy);
    if (entry.busy) entry.el.setAttribute('aria-busy', 'true');
    else entry.el.removeAttribute('aria-busy');
  }

  function updateClock(entry, now) {
    const finite = Number.isFinite(entry.expiresMs);
    const left = finite ? Math.ceil((entry.expiresMs - now) / 1000) : Infinity;
    const text = !finite ? 'No expiry' : left <= 0 ? 'Expired' : formatLeft(left);
    if (text !== entry.countdownText) {
      entry.countdownText = text;
      entry.refs.countdownText.data = text;
    }
    const urgent = left > 0 && left < URGENT_S;
    if (urgent !== entry.urgent) {
      entry.urgent = urgent;
      entry.el.classList.toggle('is-urgent', urgent);
    }
    const expired = left <= 0;
    if (expired !== entry.expired) {
      entry.expired = expired;
      entry.el.classList.toggle('is-expired', expired);
      syncControls(entry);
    }
  }

  function setMode(entry, mode) {
    if (entry.kind !== 'approval') return;
    const r = entry.refs;
    entry.mode = mode;
    r.rejectPanel.hidden = mode !== 'reject';
    r.editPanel.hidden = mode !== 'edit';
    r.actions.hidden = mode !== 'view';
    r.reject.setAttribute('aria-expanded', String(mode === 'reject'));
    r.edit.setAttribute('aria-expanded', String(mode === 'edit'));
    entry.el.dataset.mode = mode;
  }

  function openReject(entry) {
    if (entry.kind !== 'approval' || entry.busy || entry.expired) return;
    setMode(entry, 'reject');
    select(entry.id, { focus: false });
    syncControls(entry);
    entry.refs.reason.focus();
  }

  function openEdit(entry) {
    if (entry.kind !== 'approval' || entry.busy || entry.expired) return;
    const r = entry.refs;
    // Keep a draft across reject/edit switches; only Cancel throws it away.
    if (!r.editor.value) {
      r.editor.value = JSON.stringify(isObj(entry.card.args) ? entry.card.args : {}, null, 2);
      r.editor.rows = Math.min(18, Math.max(6, r.editor.value.split('\n').length + 1));
    }
    setMode(entry, 'edit');
    select(entry.id, { focus: false });
    validateEdit(entry);
    r.editor.focus();
  }

  function cancelMode(entry) {
    const r = entry.refs;
    if (entry.mode === 'reject') r.reason.value = '';
    if (entry.mode === 'edit') {
      r.editor.value = '';
      r.diff.replaceChildren();
      r.editStatus.textContent = '';
      entry.edit = { valid: false, value: null, changes: [] };
    }
    entry.dirty = false;
    setMode(entry, 'view');
    syncControls(entry);
    entry.el.focus({ preventScroll: true });
  }

  function validateEdit(entry) {
    const r = entry.refs;
    const result = parseArgs(r.editor.value);
    if (result.ok) {
      const changes = diffArgs(isObj(entry.card.args) ? entry.card.args : {}, result.value);
      entry.edit = { valid: true, value: result.value, changes };
      r.editStatus.textContent = 'Valid JSON object.';
      r.editStatus.className = 'editor__status editor__status--ok';
      r.editor.removeAttribute('aria-invalid');
      renderDiff(r.diff, changes);
      r.diff.hidden = false;
    } else {
      entry.edit = { valid: false, value: null, changes: [] };
      r.editStatus.textContent = result.error;
      r.editStatus.className = 'editor__status editor__status--error';
      r.editor.setAttribute('aria-invalid', 'true');
      r.diff.hidden = true;
    }
    syncControls(entry);
  }

  // ---------------------------------------------------------------- list bookkeeping

  function compareEntries(a, b) {
    return a.tierRank - b.tierRank
      || (a.expiresMs === b.expiresMs ? 0 : a.expiresMs < b.expiresMs ? -1 : 1)
      || a.requestedMs - b.requestedMs
      || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  /** Sort, then move only the nodes that are out of place (usually none). */
  function reorder() {
    const sorted = Array.from(entries.values()).sort(compareEntries);
    order = sorted.map((e) => e.id);
    let cursor = listEl.firstElementChild;
    for (const entry of sorted) {
      if (entry.el === cursor) cursor = cursor.nextElementSibling;
      else listEl.insertBefore(entry.el, cursor);
    }
    refreshSummary();
  }

  function refreshSummary() {
    const n = entries.size;
    emptyEl.hidden = !loaded || n > 0;
    listEl.hidden = n === 0;
    // Only long lists skip off-screen rendering; short ones stay fully painted (print, screenshots).
    listEl.classList.toggle('cards--long', n > 40);
    countEl.textContent = String(n);
    let high = 0;
    let questions = 0;
    for (const e of entries.values()) {
      if (e.tierRank === 0) high += 1;
      if (e.kind === 'clarification') questions += 1;
    }
    const parts = [];
    if (high) parts.push(`${high} high risk`);
    if (questions) parts.push(`${questions} need${questions === 1 ? 's' : ''} an answer`);
    summaryEl.textContent = parts.join(' · ');
    document.title = n ? `(${n}) ${baseTitle}` : baseTitle;
  }

  function isPendingCard(card) {
    return isObj(card) && typeof card.id === 'string' && card.id !== '' && (card.status === undefined || card.status === 'pending');
  }

  function upsert(card) {
    if (!isObj(card) || typeof card.id !== 'string' || !card.id) return false;
    if (!isPendingCard(card)) {
      removeCard(card.id, { status: card.status, decided_by: card.decided_by });
      return false;
    }
    if (decidedHere.has(card.id)) return false;
    const existing = entries.get(card.id);
    if (existing) {
      if (kindOf(card) !== existing.kind) {
        // A different kind of card under the same id: rebuild it rather than patch.
        dropEntry(existing);
      } else {
        applyCard(existing, card);
        return true;
      }
    }
    const entry = createEntry(card);
    entries.set(card.id, entry);
    return true;
  }

  function applySnapshot(cards) {
    const list = Array.isArray(cards) ? cards : [];
    const keep = new Set(list.filter(isPendingCard).map((c) => c.id));
    for (const entry of Array.from(entries.values())) {
      if (!keep.has(entry.id)) removeCard(entry.id, { status: null, decided_by: null }, { reorder: false });
    }
    for (const card of list) upsert(card);
    reorder();
  }

  function isWorkingOn(entry) {
    return entry.id === selectedId || entry.mode !== 'view' || entry.dirty || entry.el.contains(document.activeElement);
  }

  function removalPhrase(info) {
    const by = info && typeof info.decided_by === 'string' && info.decided_by ? info.decided_by : null;
    switch (info && info.status) {
      case 'approved': return by ? `Approved by ${by}` : 'Approved elsewhere';
      case 'rejected': return by ? `Rejected by ${by}` : 'Rejected elsewhere';
      case 'expired': return 'Expired';
      case 'consumed': return 'Already used by the agent';
      default: return 'No longer waiting';
    }
  }

  /** The server says this card is gone (decided elsewhere, consumed, expired). */
  function removeCard(id, info, { reorder: doReorder = true } = {}) {
    const entry = entries.get(id);
    if (!entry) return;
    if (entry.busy) {
      // Our own decision is in flight; its answer says who won and announces it.
      entry.removedInfo = info;
    } else if (isWorkingOn(entry)) {
      announce(`${removalPhrase(info)}: ${cardLabel(entry.card)} was removed from your inbox.`, info && info.status === 'expired' ? 'error' : 'info');
    }
    dropEntry(entry);
    if (doReorder) refreshSummary();
  }

  function dropEntry(entry) {
    const hadFocus = entry.el.contains(document.activeElement);
    const index = order.indexOf(entry.id);
    if (index >= 0) order.splice(index, 1);
    if (selectedId === entry.id) {
      selectedId = null;
      lastIndex = Math.max(0, index);
    }
    entries.delete(entry.id);
    entry.el.remove();
    if (hadFocus) listEl.focus({ preventScroll: true });
  }

  // ---------------------------------------------------------------- selection, keyboard

  function select(id, { focus = true } = {}) {
    const prev = selectedId !== null ? entries.get(selectedId) : null;
    if (prev && prev.id !== id) {
      prev.el.classList.remove('is-selected');
      prev.el.removeAttribute('aria-current');
    }
    const entry = entries.get(id);
    if (!entry) return;
    selectedId = id;
    entry.el.classList.add('is-selected');
    entry.el.setAttribute('aria-current', 'true');
    if (focus) {
      entry.el.focus({ preventScroll: true });
      entry.el.scrollIntoView({ block: 'nearest' });
    }
  }

  function move(delta) {
    if (!order.length) return;
    const at = selectedId !== null ? order.indexOf(selectedId) : -1;
    let next;
    if (at >= 0) next = at + delta;
    else next = delta > 0 ? lastIndex : lastIndex - 1; // the card that took the removed one's place
    next = Math.max(0, Math.min(order.length - 1, next));
    select(order[next]);
  }

  function isTyping(target) {
    return target instanceof Element && (target.isContentEditable || Boolean(target.closest('input, textarea, select')));
  }

  function onKeydown(ev) {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const fromCard = ev.target instanceof Element ? ev.target.closest('article.card') : null;
    if (ev.key === 'Escape') {
      const entry = (fromCard && entryOf.get(fromCard)) || entries.get(selectedId);
      if (entry && entry.mode !== 'view') {
        ev.preventDefault();
        cancelMode(entry);
      }
      return;
    }
    if (isTyping(ev.target)) return;
    const selected = selectedId !== null ? entries.get(selectedId) : null;
    switch (ev.key) {
      case 'j': move(1); break;
      case 'k': move(-1); break;
      case 'a':
        if (selected && selected.kind === 'approval' && selected.mode === 'view') approve(selected);
        break;
      case 'r':
        if (selected) openReject(selected);
        break;
      case 'e':
        if (selected) openEdit(selected);
        break;
      default:
        return;
    }
    ev.preventDefault();
  }

  // ---------------------------------------------------------------- decisions

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    const input = document.querySelector('input[name="csrfmiddlewaretoken"]');
    return input ? input.value : '';
  }

  function approve(entry) {
    if (entry.busy || entry.expired) return;
    submitDecision(entry, { approved: true }, `Approved: ${cardLabel(entry.card)}.`);
  }

  function reject(entry) {
    const reason = entry.refs.reason.value.trim();
    if (!reason || entry.busy || entry.expired) {
      entry.refs.reason.focus();
      return;
    }
    submitDecision(entry, { approved: false, reason }, `Rejected: ${cardLabel(entry.card)}.`);
  }

  function approveEdited(entry) {
    validateEdit(entry);
    if (!entry.edit.valid || !entry.edit.changes.length || entry.busy || entry.expired) return;
    const n = entry.edit.changes.length;
    submitDecision(entry, { approved: true, edited_args: entry.edit.value },
      `Approved with ${n} edit${n === 1 ? '' : 's'}: ${cardLabel(entry.card)}.`);
  }

  function answer(entry) {
    if (entry.busy || entry.expired) return;
    const { values, firstInvalid } = collectValues(entry);
    if (firstInvalid) {
      firstInvalid.focus();
      showCardError(entry, CHECK_FIELDS);
      return;
    }
    submitDecision(entry, { values }, `Answer sent: ${cardLabel(entry.card)}.`);
  }

  function showCardError(entry, message) {
    entry.refs.error.textContent = message;
    entry.refs.error.hidden = !message;
  }

  async function submitDecision(entry, body, successText) {
    entry.busy = true;
    entry.removedInfo = null;
    showCardError(entry, '');
    syncControls(entry);
    const url = cfg.decisionUrl.replace('{id}', encodeURIComponent(entry.id));
    let res;
    let data = null;
    try {
      res = await fetch(url, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRFToken': csrfToken() },
        body: JSON.stringify(body),
      });
      data = await res.json().catch(() => null);
    } catch (_) {
      res = null;
    }
    entry.busy = false;
    const label = cardLabel(entry.card);
    const stillShown = entries.get(entry.id) === entry;
    const detail = isObj(data) && typeof data.detail === 'string' ? data.detail : '';
    const code = isObj(data) && typeof data.error === 'string' ? data.error : '';

    if (res && res.ok) {
      decidedHere.add(entry.id);
      if (stillShown) dropEntry(entry);
      refreshSummary();
      announce(successText, 'success');
      return;
    }
    if (res && (res.status === 409 || res.status === 404 || res.status === 410)) {
      // Someone else decided first, it expired, or it is gone: it cannot be decided here.
      if (stillShown) dropEntry(entry);
      refreshSummary();
      const who = entry.removedInfo ? ` ${removalPhrase(entry.removedInfo)}.` : '';
      const why = res.status === 409 ? 'was already decided or has expired' : 'no longer exists';
      announce(`Not applied — ${label} ${why}.${who}${detail ? ` ${detail}` : ''} It has been removed from your inbox.`, 'error');
      return;
    }
    if (res && res.status === 422 && (code === 'resume_schema_rejected' || !code)) {
      if (stillShown) dropEntry(entry);
      refreshSummary();
      announce(`The run could not accept this answer and has failed — ${label}.${detail ? ` ${detail}` : ''}`, 'error');
      return;
    }

    let message;
    if (!res) message = 'Network problem — your decision was not confirmed. Your input is kept; try again.';
    else if (res.status === 400) message = `Condor could not accept this decision: ${detail || 'the request was invalid.'} Your input is kept.`;
    else if (res.status === 403) {
      message = detail
        ? `Not permitted: ${detail}`
        : 'Not permitted — your session may have expired. Reload the page to sign in again; your input is kept until then.';
    } else message = `Condor could not record the decision (HTTP ${res.status}${detail ? `: ${detail}` : ''}). Your input is kept; try again.`;

    if (!stillShown) {
      // Removed by the server while our request was in flight.
      announce(`${removalPhrase(entry.removedInfo)}: ${label} was removed; your decision was not applied.`, 'error');
      return;
    }
    syncControls(entry);
    showCardError(entry, message);
    announce(`${label}: ${message}`, 'error');
  }

  // ---------------------------------------------------------------- DOM events (delegated)

  function entryFromEvent(ev) {
    const el = ev.target instanceof Element ? ev.target.closest('article.card') : null;
    return el ? entryOf.get(el) : undefined;
  }

  listEl.addEventListener('click', (ev) => {
    const entry = entryFromEvent(ev);
    if (!entry) return;
    if (entry.id !== selectedId) select(entry.id, { focus: false });
    const button = ev.target.closest('button[data-action]');
    if (!button || button.disabled) return;
    switch (button.dataset.action) {
      case 'approve': approve(entry); break;
      case 'open-reject': openReject(entry); break;
      case 'open-edit': openEdit(entry); break;
      case 'reject': reject(entry); break;
      case 'approve-edited': approveEdited(entry); break;
      case 'cancel': cancelMode(entry); break;
      default: break;
    }
  });

  listEl.addEventListener('focusin', (ev) => {
    const entry = entryFromEvent(ev);
    if (entry && entry.id !== selectedId) select(entry.id, { focus: false });
  });

  listEl.addEventListener('input', (ev) => {
    const entry = entryFromEvent(ev);
    if (!entry) return;
    const role = ev.target.dataset && ev.target.dataset.role;
    if (role === 'editor') {
      entry.dirty = true;
      validateEdit(entry);
    } else if (role === 'reason') {
      entry.dirty = ev.target.value.trim() !== '';
      syncControls(entry);
    } else {
      entry.dirty = true;
      const field = ev.target.closest('.field');
      if (field && field.classList.contains('field--invalid') && entry.form) {
        const f = entry.form.fields.find((x) => x.el === field);
        if (f) f.showError(f.validate());
        if (!entry.form.el.querySelector('.field--invalid') && entry.refs.error.textContent === CHECK_FIELDS) showCardError(entry, '');
      }
    }
  });
  listEl.addEventListener('change', (ev) => {
    const entry = entryFromEvent(ev);
    if (entry && entry.kind === 'clarification') entry.dirty = true;
  });

  listEl.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const entry = entryFromEvent(ev);
    if (entry && entry.kind === 'clarification') answer(entry);
  });

  listEl.addEventListener('keydown', (ev) => {
    // Ctrl/Cmd+Enter submits the reject reason or the edited args.
    if (ev.key !== 'Enter' || !(ev.ctrlKey || ev.metaKey)) return;
    const entry = entryFromEvent(ev);
    const role = ev.target.dataset && ev.target.dataset.role;
    if (!entry) return;
    if (role === 'reason') { ev.preventDefault(); reject(entry); }
    if (role === 'editor') { ev.preventDefault(); approveEdited(entry); }
  });

  document.addEventListener('keydown', onKeydown);

  // ---------------------------------------------------------------- websocket

  const conn = { ws: null, attempt: 0, timer: null, failures: 0 };

  function setConnection(state) {
    if (!connEl) return;
    connEl.dataset.state = state;
    const text = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' }[state];
    connEl.querySelector('.conn__text').textContent = text;
    const stale = state === 'reconnecting';
    root.classList.toggle('is-stale', stale);
    if (staleEl) staleEl.hidden = !stale;
  }

  function handleFrame(msg) {
    if (!isObj(msg)) return;
    switch (msg.type) {
      case 'snapshot':
        loaded = true;
        applySnapshot(msg.cards);
        conn.attempt = 0;
        setConnection('live');
        break;
      case 'card.added':
      case 'card.updated':
        if (upsert(msg.card)) reorder();
        break;
      case 'card.removed':
        if (typeof msg.id === 'string') removeCard(msg.id, { status: msg.status, decided_by: msg.decided_by });
        break;
      default:
        break; // pong and future frame types
    }
  }

  function connect() {
    clearTimeout(conn.timer);
    conn.timer = null;
    if (conn.ws) return;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    let ws;
    try {
      ws = new WebSocket(`${scheme}//${location.host}${cfg.wsPath}`);
    } catch (_) {
      scheduleReconnect();
      return;
    }
    conn.ws = ws;
    ws.addEventListener('message', (ev) => {
      if (ws !== conn.ws || typeof ev.data !== 'string') return;
      let msg;
      try { msg = JSON.parse(ev.data); } catch (_) { return; }
      handleFrame(msg);
    });
    ws.addEventListener('close', () => {
      if (ws !== conn.ws) return;
      conn.ws = null;
      setConnection('reconnecting');
      scheduleReconnect();
    });
  }

  function scheduleReconnect() {
    if (conn.timer) return;
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** conn.attempt);
    conn.attempt += 1;
    // A little jitter so a restarted server is not hit by every reviewer at once.
    const delay = Math.min(BACKOFF_MAX_MS, base * (0.85 + Math.random() * 0.3));
    conn.timer = setTimeout(connect, delay);
  }

  function reconnectNow() {
    if (conn.ws) return;
    conn.attempt = 0;
    connect();
  }

  window.addEventListener('online', reconnectNow);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') {
      tick();
      reconnectNow();
    }
  });

  // ---------------------------------------------------------------- the one timer

  let ticks = 0;
  function tick() {
    const now = Date.now();
    for (const entry of entries.values()) updateClock(entry, now);
    expireToasts(now);
    ticks += 1;
    if (ticks % PING_EVERY_S === 0 && conn.ws && conn.ws.readyState === WebSocket.OPEN) {
      conn.ws.send('{"type":"ping"}');
    }
  }

  refreshSummary();
  setConnection('connecting');
  setInterval(tick, 1000);
  connect();
})();
