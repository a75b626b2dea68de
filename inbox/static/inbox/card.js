/* One card: the entry that owns its DOM, patched in place once built.
 *
 * An entry holds the card's data from the start (the queue lines read it), but its full
 * DOM is built only when the card is shown — opened in the queue, or in the full
 * layout (buildCardDom): an inbox with hundreds of cards loaded builds a handful. */
import { renderArgs } from './args.js';
import { applyClaim, buildClaim, claimLapsed } from './claim.js';
import { buildApprovalControls, buildClarificationControls, buildStopPanel, noEdit, renderWithdrawn, syncControls, validateEdit } from './controls.js';
import { applyContext, buildContext } from './context.js';
import { actionLabel } from './labels.js';
import { applyQuorum, buildQuorum, noteQuorum } from './quorum.js';
import { clockTime, countdownAt, timeOf } from './countdown.js';
import { h, uid } from './dom.js';
import { argsCut, renderCutArgs, withLoadedArgs } from './full_args.js';
import { buildTarget, setTarget } from './names.js';
import { containsHidden, revealedText, setRevealed } from './reveal.js';
import { buildClarificationForm } from './schema_form.js';
import { applyTechnical, buildTechnical } from './technical.js';
import { canonical, isObj, patientContext, str } from './values.js';
import { applyWhy, buildWhy } from './why.js';

const entryOf = new WeakMap(); // card element -> entry

/** The entry whose card contains `target`, if any. */
export function entryAt(target) {
  const el = target instanceof Element ? target.closest('article.card') : null;
  return el ? entryOf.get(el) : undefined;
}

export function kindOf(card) {
  return card.reason_code === 'clarification' ? 'clarification' : 'approval';
}

/** "tool · op (patient)" for messages about this card. */
export function cardLabel(card) {
  const session = isObj(card.session) ? card.session : {};
  const what = [str(card.tool) || 'Request', str(card.op)].filter(Boolean).join(' · ');
  const who = str(patientContext(card).patient_ref) || str(session.title);
  return revealedText(who ? `${what} (${who})` : what);
}

export function createEntry(card) {
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
    edit: noEdit(),
    form: null,
    withdrawn: [], // what stopping this card's run would withdraw besides this card (runs.js)
    run: null, // where it sits in its run, as applyRun was last told
    approvedByMe: false, // four eyes: this reviewer's approval is counted (quorum.js)
    myApprovalCount: '', // ...said as "You approved (1 of 2)"
    myApprovalText: '', // ...and "You approved (1 of 2) — waiting for a second reviewer"
    approvedHere: null, // ...as the server said (409) for this payload hash, before the card did
    gone: null, // withdrawn while the reviewer worked on it: {text}, kept on screen (withdrawn.js)
  };
  applyCard(entry, card);
  return entry;
}

/** Build the card's DOM from its data, the first time it is shown; true if it was built now. */
export function buildCardDom(entry) {
  if (entry.el) return false;
  buildSkeleton(entry);
  const card = entry.card;
  Object.assign(entry, { card: null, json: '', countdownText: '', urgent: false, expired: false });
  applyCard(entry, card);
  if (entry.run) applyRun(entry, entry.run);
  return true;
}

function buildSkeleton(entry) {
  const r = entry.refs;
  const titleId = uid('card-title');
  r.tier = h('span', { class: 'badge', 'data-testid': 'tier-badge' });
  // Review teams (SPEC 10): who is working the card, and how far its four eyes have got.
  r.claim = h('span', { class: 'badge badge--claim', 'data-testid': 'card-claim', hidden: true });
  r.quorum = h('span', { class: 'badge badge--quorum', 'data-testid': 'card-quorum', hidden: true });
  r.escalated = h('span', { class: 'badge badge--escalated', 'data-testid': 'card-escalated', hidden: true }, 'Escalated');
  r.action = h('span', { class: 'card__action', 'data-testid': 'card-action' });
  r.countdownText = document.createTextNode('');
  r.countdown = h('span', { class: 'countdown', 'data-testid': 'countdown' }, r.countdownText);
  r.session = h('span', { class: 'meta__session', 'data-testid': 'card-session' });
  r.patient = h('span', { class: 'meta__patient', 'data-testid': 'card-patient' });
  r.client = h('span', { class: 'meta__client', 'data-testid': 'card-client' });
  r.requested = h('time', { class: 'meta__time' });
  r.question = h('p', { class: 'card__question', 'data-testid': 'card-question' });
  r.warning = h('p', { class: 'card__warning', role: 'note', 'data-testid': 'card-hidden-warning', hidden: true },
    'This card contains hidden or look-alike characters, or right-to-left letters among digits or other text. They are shown as ⟨U+…⟩ marks: check the values before deciding.');
  r.args = h('div', { class: 'args', 'data-testid': 'card-args' });
  r.argsBlock = h('section', { class: 'card__args', 'aria-label': 'Arguments' }, h('h3', { class: 'card__section-title' }, 'Arguments'), r.args);
  r.error = h('p', { class: 'card__error', role: 'alert', 'data-testid': 'card-error', hidden: true });
  // The run this card belongs to: its other open cards, and the way to stop it.
  r.runLabel = h('span', { class: 'card__run-label', 'data-testid': 'card-run-label' });
  r.runOthers = h('span', { class: 'card__run-others', 'data-testid': 'card-run-others' });
  r.stopOpen = h('button', { type: 'button', class: 'btn btn--quiet btn--small', 'data-action': 'open-stop', 'data-testid': 'stop-run', 'aria-expanded': 'false' }, 'Stop run…');
  r.runBar = h('div', { class: 'card__run', 'data-testid': 'card-run' }, r.runLabel, ' ', r.runOthers, r.stopOpen);
  r.body = h('div', { class: 'card__body' });
  const sep = () => h('span', { class: 'meta__sep', 'aria-hidden': 'true' }, '·');

  entry.el = h('article', {
    class: `card card--${entry.kind}`,
    'data-testid': 'approval-card',
    'data-kind': entry.kind,
    tabindex: '-1',
    'aria-labelledby': titleId,
  },
  h('header', { class: 'card__head' },
    h('div', { class: 'card__badges' }, r.tier,
      entry.kind === 'clarification' ? h('span', { class: 'badge badge--question' }, 'Needs an answer') : null,
      r.escalated, r.claim, r.quorum),
    h('h2', { class: 'card__title', id: titleId }, r.action),
    r.countdown),
  // The ' ' text nodes keep words apart for screen readers (flex layout ignores them).
  h('p', { class: 'card__meta' },
    h('span', { class: 'visually-hidden' }, 'Patient '), r.patient, ' ',
    sep(), ' ', r.session, ' ',
    sep(), ' ', h('span', { class: 'meta__by' }, 'requested by ', r.client), ' ',
    sep(), ' ', r.requested),
  buildWhy(r),
  buildContext(r),
  r.warning,
  r.runBar,
  r.question,
  r.argsBlock,
  buildTechnical(r),
  buildClaim(entry),
  buildQuorum(entry),
  r.body,
  r.error,
  buildTarget(r));
  entry.el.dataset.approvalId = entry.id;
  entryOf.set(entry.el, entry);

  if (entry.kind === 'approval') {
    buildApprovalControls(entry);
    r.body.append(r.myApproval); // why Approve is off once this reviewer approved (quorum.js)
  } else {
    buildClarificationControls(entry);
  }
  buildStopPanel(entry);
}

/** Show where the card sits in its run: `pos` is only | first | middle | last among the run's cards here. */
export function applyRun(entry, { pos, withdrawn }) {
  const r = entry.refs;
  entry.withdrawn = withdrawn;
  entry.run = { pos, withdrawn };
  if (!entry.el) return;
  if (entry.el.dataset.runPos !== pos) entry.el.dataset.runPos = pos;
  const label = 'Agent run'; // its id is in the card's technical details
  if (r.runLabel.textContent !== label) r.runLabel.textContent = label;
  const text = withdrawn.length ? `· also open in this run: ${withdrawn.join('; ')}` : '· the only open card of this run';
  if (r.runOthers.textContent !== text) r.runOthers.textContent = text;
  renderWithdrawn(entry);
}

/** Write card data into the entry's existing DOM (text nodes and small subtrees only). */
export function applyCard(entry, card) {
  card = withLoadedArgs(entry, card); // args loaded by "Show all" stay while the payload is the same
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
  entry.runId = str(card.run_id);
  entry.escalated = Boolean(str(card.escalated_at)); // escalated cards go first (list.js)
  if (!entry.el) {
    noteQuorum(entry, card); // the queue line says "You approved (1 of 2)"
    updateClock(entry, Date.now()); // the queue line shows the time left
    return true;
  }

  entry.el.dataset.tier = tier;
  entry.el.dataset.runId = entry.runId;
  r.tier.textContent = { high: 'High risk', low: 'Low risk', none: '' }[tier];
  r.tier.className = `badge badge--${tier}`;
  r.tier.hidden = tier === 'none';
  // Every string an agent or client chose is shown revealed (reveal.js), and any of them,
  // anywhere in the card, raises the warning.
  r.warning.hidden = !containsHidden(card);
  setRevealed(r.action, actionLabel(str(card.tool), str(card.op)) || 'Unknown request');
  setRevealed(r.patient, str(patientContext(card).patient_ref) || 'No patient ref');
  setRevealed(r.session, str(session.title) || 'Untitled session');
  setRevealed(r.client, str(client.name) || 'unknown client');
  setTarget(r, r.action.textContent, str(patientContext(card).patient_ref) ? r.patient.textContent : '', r.session.textContent);
  r.requested.textContent = Number.isFinite(timeOf(card.requested_at, NaN)) ? `asked at ${clockTime(entry.requestedMs)}` : '';
  r.requested.dateTime = str(card.requested_at);
  r.countdown.title = Number.isFinite(entry.expiresMs) ? `Expires at ${clockTime(entry.expiresMs)}` : '';
  applyWhy(r, card);
  applyContext(r, card);
  applyTechnical(r, card);
  // The clarification question; resume_schemas.py also puts it in the schema's description.
  const question = str(card.message) || (entry.kind === 'clarification' && isObj(card.resume_schema) ? str(card.resume_schema.description) : '');
  setRevealed(r.question, question);
  r.question.hidden = !question;

  applyClaimAndQuorum(entry, card);

  if (!prev || canonical(prev.args) !== canonical(card.args) || argsCut(prev) !== argsCut(card)) {
    if (argsCut(card)) renderCutArgs(r.args, card);
    else renderArgs(r.args, card.args);
    if (entry.mode === 'edit') validateEdit(entry);
  }
  if (entry.kind === 'clarification') {
    const schemaKey = canonical(card.resume_schema);
    // Rebuilding would wipe what the reviewer typed; keep their form if they started.
    if (schemaKey !== entry.schemaKey && !entry.dirty) {
      entry.schemaKey = schemaKey;
      entry.form = buildClarificationForm(card.resume_schema);
      entry.form.actions.append(r.reject); // Decline… sits at the end of the form's buttons
      r.answer.replaceChildren(entry.form.el);
    }
    // The args of a clarification are context; the question is what matters.
    r.argsBlock.hidden = !argsCut(card) && (!isObj(card.args) || !Object.keys(card.args).length);
  }
  updateClock(entry, Date.now());
  syncControls(entry);
  return true;
}

/** Who is reviewing the card; "1 of 2 approvals" on a four-eyes card; "Escalated". */
function applyClaimAndQuorum(entry, card) {
  const r = entry.refs;
  applyClaim(entry, Date.now()); // claim.js: the badge, the Claim button, and whether this reviewer may decide
  const required = Number.isInteger(card.approvals_required) ? card.approvals_required : 1;
  const given = Array.isArray(card.approvals) ? card.approvals.length : 0;
  r.quorum.textContent = required > 1 ? `${given} of ${required} approvals` : '';
  r.quorum.hidden = required <= 1;
  applyQuorum(entry, card); // who approved so far, as text on the card, and this reviewer's part
  r.escalated.hidden = !entry.escalated;
}

/** The card's four-eyes state again, after the server said more than the card (quorum.js). */
export function refreshQuorum(entry) {
  applyQuorum(entry, entry.card);
  syncControls(entry);
}

/** Bring the countdown, urgency and expiry up to `now`; touches the DOM only on change. */
export function updateClock(entry, now) {
  if (entry.gone) return; // withdrawn: its time no longer runs (withdrawn.js)
  const built = entry.el !== null; // a card not yet shown keeps only the figures its queue line reads
  if (built && claimLapsed(entry, now) && applyClaim(entry, now)) syncControls(entry); // the claim ran out: deciding is open again
  const { text, urgent, expired } = countdownAt(entry.expiresMs, now);
  if (text !== entry.countdownText) {
    entry.countdownText = text;
    if (built) entry.refs.countdownText.data = text;
  }
  if (urgent !== entry.urgent) {
    entry.urgent = urgent;
    if (built) entry.el.classList.toggle('is-urgent', urgent);
  }
  if (expired !== entry.expired) {
    entry.expired = expired;
    if (built) {
      entry.el.classList.toggle('is-expired', expired);
      syncControls(entry);
    }
  }
}

export function showCardError(entry, message) {
  entry.refs.error.textContent = message;
  entry.refs.error.hidden = !message;
}
