/* What a call does, in a clinician's words: "New prescription", "Discontinue medication",
 * "Record vital signs", from the tool's name and its op (the verb the agent sent).
 *
 * A tool named for an action ("record_vitals", "send_email") reads as that action; an op
 * that says more than create / update / send ("discontinue", "delete") takes the action's
 * place ("change_medication" · "discontinue": "Discontinue medication"). A tool named for a
 * thing ("ehr.medication_order") reads as "New medication order" under create. A few tools
 * of the built-in catalog read better said outright (WORDED). The tool and op themselves
 * stay on the card, in its technical details. */

// Tools of the built-in catalog (registry/policy/catalog.py) whose name says it less well.
const WORDED = {
  'prescribe_medication create': 'New prescription',
  'record_vitals': 'Record vital signs',
  'sync_ehr': 'Send to the partner hospital record',
  'run_script': 'Run an analysis script',
};

// Ops that add nothing to a tool named for its action.
const PLAIN_OPS = new Set(['', 'create', 'add', 'new', 'update', 'send', 'sign', 'submit', 'read', 'get', 'run', 'execute', 'write']);

// The first word of a tool named for an action.
const VERBS = new Set([
  'add', 'administer', 'admit', 'amend', 'append', 'archive', 'bill', 'book', 'cancel', 'change', 'create',
  'delete', 'discharge', 'discontinue', 'dispense', 'edit', 'get', 'list', 'lookup', 'notify', 'order', 'parse',
  'prescribe', 'purge', 'read', 'record', 'refer', 'remove', 'renew', 'request', 'revoke', 'run', 'schedule',
  'search', 'send', 'set', 'sign', 'start', 'stop', 'submit', 'suspend', 'sync', 'transfer', 'update', 'upload',
  'void', 'write',
]);

// How an op reads at the head of a thing's name.
const OP_WORDS = { create: 'New', add: 'Add', new: 'New', update: 'Change', amend: 'Amend', delete: 'Delete', send: 'Send', sign: 'Sign' };

const words = (name) => name.split(/[._\-\s]+/).filter(Boolean).map((w) => w.toLowerCase());
const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** A short clinical label for `tool` called with `op`; '' when there is no tool name to go on. */
export function actionLabel(tool, op) {
  const name = typeof tool === 'string' ? tool.trim() : '';
  const verb = typeof op === 'string' ? op.trim().toLowerCase() : '';
  if (!name) return '';
  const worded = WORDED[`${name} ${verb}`] || (PLAIN_OPS.has(verb) ? WORDED[name] : undefined);
  if (worded) return worded;
  // A namespace ("ehr.", "lab.") says where, not what; a bare verb ("notes.append") keeps it as its object.
  const segments = name.split('.');
  const last = words(segments[segments.length - 1]);
  const said = last.length === 1 && segments.length > 1 && VERBS.has(last[0]) ? [...last, ...words(segments.slice(0, -1).join('.'))] : last;
  const opWords = words(verb).join(' ');
  if (VERBS.has(said[0])) {
    // "change_medication" · "discontinue": the op says what the change is.
    return capital(PLAIN_OPS.has(verb) ? said.join(' ') : [opWords, ...said.slice(1)].join(' '));
  }
  const head = OP_WORDS[verb] || capital(opWords);
  return capital([head, ...said].filter(Boolean).join(' '));
}

// ---------------------------------------------------------------- a call's leading values

// Arg names that say what a call is about, in the order a clinician reads an order: the
// thing, how much, how often. Other args follow in the card's order.
const LEADING = [
  /^(drug|medication|medicine|vaccine|test|tests|panel|procedure|item|product|name|title|subject)$/,
  /^(dose|amount|strength|quantity|volume|rate)(_|$)/,
  /^(frequency|schedule|interval|when|date)$/,
];
// A number whose name ends in a unit reads with it: dose_mg 500 is "500 mg", dose_mg_per_kg 5 is
// "5 mg/kg". A name that ends in "per" and one unit says a rate of something it does not name
// (infusions_per_h): that number reads alone, never as "3 h".
const UNITS = 'mg|mcg|ug|g|kg|ml|l|mmol|units|iu|min|minutes|h|hours|days|weeks';
const UNIT = new RegExp(`(?:^|_)(${UNITS})(?:_per_(${UNITS}|m2|day|dose))?$`, 'i');
const RATE_OF_UNNAMED = /(?:^|_)per_[^_]+$/i;
const UNIT_TEXT = { ml: 'mL', l: 'L', ug: 'mcg', iu: 'IU', m2: 'm²' };
const unitText = (unit) => UNIT_TEXT[unit.toLowerCase()] || unit.toLowerCase();
// The args that name the patient (the line says who already), besides the card's locked ones.
const PATIENT_KEYS = new Set(['patient_ref', 'patient_id', 'mrn', 'nhs_number']);
const VALUE_MAX = 40;
const LEADING_MAX = 3;

const rankOf = (key) => {
  const name = key.toLowerCase();
  const at = LEADING.findIndex((re) => re.test(name));
  return at < 0 ? LEADING.length : at;
};

/** {text, cut}: how a value reads on a line, and whether it was cut there. The page draws a cut's
 * ellipsis itself: in the text it would be a character the agent did not write (and one the
 * inbox marks as a look-alike). */
export function valueText(key, value) {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const unit = key.match(UNIT);
    if (!unit || (!unit[2] && RATE_OF_UNNAMED.test(key))) return { text: String(value), cut: false };
    return { text: `${value} ${unitText(unit[1])}${unit[2] ? `/${unitText(unit[2])}` : ''}`, cut: false };
  }
  if (typeof value !== 'string') return { text: '', cut: false }; // a flag or a nested value says nothing without its name
  const chars = Array.from(value.replace(/\s+/g, ' ').trim()); // whole characters: a cut never splits a pair
  return chars.length > VALUE_MAX ? { text: chars.slice(0, VALUE_MAX - 1).join(''), cut: true } : { text: chars.join(''), cut: false };
}

/** The first few plain values of a call's args, as a queue line shows them ("amoxicillin", "500 mg",
 * "8-hourly"), each as {text, cut}: what it is about first, then how much and how often, then the rest
 * in order; never the args that name the patient (`locked`, and the usual names of a patient's identifier). */
export function leadingValues(args, locked = []) {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return [];
  const skip = new Set(locked);
  const keys = Object.keys(args).filter((k) => !skip.has(k) && !PATIENT_KEYS.has(k.toLowerCase()));
  const ordered = keys.map((key, at) => ({ key, at, rank: rankOf(key) }))
    .sort((a, b) => a.rank - b.rank || a.at - b.at);
  const out = [];
  for (const { key } of ordered) {
    const value = valueText(key, args[key]);
    if (value.text) out.push(value);
    if (out.length === LEADING_MAX) break;
  }
  return out;
}
