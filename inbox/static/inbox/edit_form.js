/* Editing a card's args field by field: where every argument is a plain
 * value — a number, a boolean, a string, null — "Edit args" can show one form field per
 * argument instead of the JSON editor, typed by the value it holds (form_field.js, the
 * same controls a clarification's form uses). It opens that way on a phone, where
 * typing JSON is hard; elsewhere the reviewer switches to it. Nested args keep the JSON
 * editor: a form of forms would hide their shape.
 *
 * Arguments with hidden or look-alike characters are not flat here either: the JSON
 * editor shows those characters as \uXXXX escapes, a text field would hide them. */
import { h } from './dom.js';
import { fieldSpec } from './field_spec.js';
import { buildField } from './form_field.js';
import { containsHidden } from './reveal.js';
import { isObj, isPrimitive } from './values.js';

const MAX_FIELDS = 60;
const LONG_TEXT = 60;
const PHONE = '(max-width: 720px)';

/** Args a form can edit: an object of at most MAX_FIELDS plain values. */
export const isFlat = (args) => isObj(args) && Object.keys(args).length > 0 && Object.keys(args).length <= MAX_FIELDS
  && Object.values(args).every((v) => v === null || isPrimitive(v)) && !containsHidden(args);

/** Field by field is where editing starts on a phone. */
export const prefersFields = () => window.matchMedia(PHONE).matches;

const LOCKED_NOTE = 'Names the patient: it cannot be changed.';

/** The schema property a value's field is built from: its type, and its value as the default. */
function propertyFor(key, value, locked) {
  if (typeof value === 'number') return { title: key, type: 'number', default: value, ...(locked ? { description: LOCKED_NOTE } : {}) };
  if (typeof value === 'boolean') return { title: key, type: 'boolean', default: value, ...(locked ? { description: LOCKED_NOTE } : {}) };
  const text = value === null ? '' : value;
  const note = [locked ? LOCKED_NOTE : '', value === null ? 'Empty stays null.' : ''].filter(Boolean).join(' ');
  return {
    title: key, type: 'string', default: text,
    ...(text.length > LONG_TEXT || text.includes('\n') ? { 'x-condor-widget': 'textarea' } : {}),
    ...(note ? { description: note } : {}),
  };
}

/** A locked argument's field: shown, not editable (the server refuses a change to it anyway). */
function lock(field) {
  for (const control of field.el.querySelectorAll('input, select, textarea')) {
    control.readOnly = true;
    if (control.type === 'checkbox') control.disabled = true; // a checkbox ignores readonly
  }
  field.el.classList.add('field--locked');
  field.el.dataset.locked = 'true';
}

/** { el, read() -> {value, firstInvalid} } for flat `args`; `locked`: the keys that name the patient. */
export function buildArgsForm(args, locked = []) {
  const fields = Object.keys(args).map((key) => ({
    key,
    original: args[key],
    locked: locked.includes(key),
    // Numbers must stay numbers: an empty one is an error, not a removed argument.
    field: buildField(fieldSpec(key, propertyFor(key, args[key], locked.includes(key)), typeof args[key] === 'number')),
  }));
  for (const f of fields) if (f.locked) lock(f.field);
  const el = h('div', { class: 'args-form', 'data-role': 'args-form', 'data-testid': 'args-form' }, ...fields.map((f) => f.field.el));
  const read = () => {
    const value = {};
    let firstInvalid = null;
    for (const { key, original, locked: fixed, field } of fields) {
      if (fixed) {
        value[key] = original;
        continue;
      }
      const message = field.validate();
      field.showError(message);
      if (message && !firstInvalid) firstInvalid = field;
      const got = field.read();
      // A cleared text field is the empty string again (or null, if it was null): never a dropped key.
      value[key] = got.present ? got.value : original === null ? null : '';
    }
    return { value, firstInvalid };
  };
  return { el, read };
}
