/* The form a reviewer fills in to answer a clarification, built from its resume schema. */
import { h } from './dom.js';
import { fieldSpec } from './field_spec.js';
import { buildField } from './form_field.js';
import { isObj } from './values.js';

/** { el, fields, submit, actions } for a resume schema; an unusable schema gives a confirm-only form. */
export function buildClarificationForm(schema) {
  const props = isObj(schema) && isObj(schema.properties) ? schema.properties : {};
  const required = new Set(isObj(schema) && Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : []);
  const fields = Object.keys(props).map((name) => buildField(fieldSpec(name, props[name], required.has(name))));
  const submit = h('button', { type: 'submit', class: 'btn btn--primary', 'data-testid': 'clarify-submit' }, 'Send answer');
  const actions = h('div', { class: 'card__actions' }, submit,
    required.size ? h('span', { class: 'card__hint' }, '* required') : null);
  const el = h('form', { class: 'card__form', 'data-testid': 'clarify-form', novalidate: true },
    ...fields.map((f) => f.el),
    fields.length ? null : h('p', { class: 'field__desc' }, 'No fields requested — send to confirm.'),
    actions);
  return { el, fields, submit, actions };
}

/** Validate every field (showing its message) and gather the answered ones. */
export function collectValues(form) {
  const values = {};
  let firstInvalid = null;
  for (const field of form.fields) {
    const message = field.validate();
    field.showError(message);
    if (message && !firstInvalid) firstInvalid = field;
    const { present, value } = field.read();
    if (present) values[field.spec.name] = value;
  }
  return { values, firstInvalid };
}
