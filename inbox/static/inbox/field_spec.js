/* A clarification's resume schema (JSON Schema + Condor hints) read as field specs:
 * which control each property gets and its limits. Malformed hints degrade to free text. */
import { has, isObj, isPrimitive, pad2, str } from './values.js';

// The one place that names the schema's extension keys.
// Adjust here when approvals/resume_schemas.py settles its extension key names.
const HINTS = {
  widget: ['x-condor-widget', 'x-widget'],
  min: ['formatMinimum', 'x-condor-min', 'formatExclusiveMinimum'],
  max: ['formatMaximum', 'x-condor-max', 'formatExclusiveMaximum'],
};
const firstHint = (prop, keys) => keys.map((k) => prop[k]).find((v) => v !== undefined && v !== null);
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** Describe the control for one schema property. */
export function fieldSpec(name, rawProp, required) {
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

/** A schema bound (or default) as the value an <input type=date|datetime-local> understands.
 * date-time bounds are instants (RFC 3339 with offset), shown in the reviewer's zone;
 * the inputs have minute precision, so a minimum rounds up to stay inside it. */
export function boundFor(kind, raw, isMin) {
  if (typeof raw !== 'string') return undefined;
  if (kind === 'date') {
    const day = raw.slice(0, 10);
    return DATE_RE.test(day) && Number.isFinite(Date.parse(day)) ? day : undefined;
  }
  if (DATE_RE.test(raw)) return `${raw}T00:00`;
  let t = Date.parse(raw);
  if (!Number.isFinite(t)) return undefined;
  if (isMin && t % 60000 !== 0) t += 60000 - (((t % 60000) + 60000) % 60000);
  const d = new Date(t);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}T${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}
