/* What a call does, in a clinician's words: "New prescription", "Discontinue medication",
 * "Record vital signs", from the tool's name and its op (the verb the agent sent).
 *
 * A tool named for an action ("record_vitals", "send_email") reads as that action; an op
 * that says more than create / update / send ("discontinue", "delete") takes the action's
 * place ("change_medication" · "discontinue": "Discontinue medication"). A tool named for a
 * thing ("ehr.medication_order") reads as "New medication order" under create. A few tools
 * of the built-in catalog read better said outright (WORDED). The tool and op themselves
 * stay on the card, in its technical details. */

// Tools of the built-in catalog (approvals/policy/catalog.py) whose name says it less well.
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
