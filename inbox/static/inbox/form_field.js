/* One control of a clarification form, built from a field spec (see field_spec.js). */
import { h, uid } from './dom.js';
import { boundFor } from './field_spec.js';
import { revealed, revealedText } from './reveal.js';
import { isPrimitive, pad2 } from './values.js';

/** datetime-local value (no zone) -> RFC 3339 with the reviewer's offset. */
function toRfc3339(local) {
  const d = new Date(local);
  if (!Number.isFinite(d.getTime())) return local;
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off);
  return `${local.length === 16 ? `${local}:00` : local}${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}

/** The schema default as the control's initial value ('' when it does not fit). */
function initialValue(spec) {
  const value = spec.defaultValue;
  if ((spec.kind === 'date' || spec.kind === 'datetime') && typeof value === 'string') return boundFor(spec.kind, value, false) || '';
  return isPrimitive(value) ? String(value) : '';
}

/** Build one form field: {spec, el, read() -> {present, value}, validate() -> message|'', showError(message), focus()}. */
export function buildField(spec) {
  const id = uid('field');
  const errId = uid('err');
  const descId = spec.description ? uid('desc') : null;
  const describedBy = [descId, errId].filter(Boolean).join(' ');
  const error = h('p', { class: 'field__error', id: errId, hidden: true });
  const desc = descId ? h('p', { class: 'field__desc', id: descId }, revealed(spec.description)) : null;
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
        ...spec.options.map((o) => h('option', { value: String(o.value) }, revealedText(o.label))));
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
      control = h('div', { class: 'choices' }, ...inputs.map((input, i) => h('label', { class: 'choice', for: input.id }, input, h('span', { class: 'choice__label' }, revealed(spec.options[i].label)))));
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
        min: spec.min, max: spec.max, step: spec.step, required: spec.required, value: initialValue(spec),
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
        min: spec.min, max: spec.max, required: spec.required, value: initialValue(spec),
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
    default: { // text, textarea, lines
      const multiline = spec.kind !== 'text';
      control = multiline
        ? h('textarea', { ...common, class: 'input input--textarea', rows: spec.kind === 'lines' ? 3 : 4, required: spec.required, maxlength: spec.maxLength })
        : h('input', { ...common, type: spec.inputType, class: 'input', required: spec.required, maxlength: spec.maxLength, value: initialValue(spec) });
      if (multiline) control.value = initialValue(spec);
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
      h('legend', { class: 'field__label' }, revealed(spec.label), req), desc, control, error);
  } else if (spec.kind === 'boolean') {
    el = h('div', { class: 'field field--check', 'data-field': spec.name },
      h('label', { class: 'choice', for: id }, control, h('span', { class: 'choice__label' }, revealed(spec.label), req)), desc, error);
  } else {
    el = h('div', { class: 'field', 'data-field': spec.name },
      h('label', { class: 'field__label', for: id }, revealed(spec.label), req), desc, control, error);
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
