/* The controls on a card: approve / reject-with-reason / edit-args panels of an
 * approval, decline-with-reason on a clarification, which panel is open, and what
 * is enabled. Declining is a rejection to the server, so both kinds share the
 * reason panel (refs `reject`, `reason`, `rejectSubmit`, `rejectPanel`). */
import { diffArgs, parseArgs, renderDiff } from './args.js';
import { syncClaimButton } from './claim.js';
import { h, uid } from './dom.js';
import { buildArgsForm, isFlat, prefersFields } from './edit_form.js';
import { awaitingFullArgs } from './full_args.js';
import { lockedMessage, lockedOf, lockedTouched } from './locked.js';
import { nameControls } from './names.js';
import { offerQuickReasons } from './quick_reasons.js';
import { escapeHidden, revealedText } from './reveal.js';
import { isObj } from './values.js';

/** A card that is being decided, has expired, was withdrawn (withdrawn.js) or another reviewer holds
 * (claim.js) takes no decision. */
export const isLocked = (entry) => entry.busy || entry.expired || Boolean(entry.gone) || Boolean(entry.heldByOther);

/** Approving or editing also needs every argument on the page (full_args.js), and under four eyes
 * an approval of this payload not yet given by this reviewer (quorum.js). */
export const cannotApprove = (entry) => isLocked(entry) || awaitingFullArgs(entry) || entry.approvedByMe;

export const noEdit = () => ({ valid: false, value: null, changes: [] });

const REJECT_WORDS = { open: 'Reject…', testid: 'reject', label: 'Reason for rejecting', placeholder: 'Why should this not go ahead? The agent is told.', submit: 'Reject', submitStop: 'Reject and stop the run' };
const DECLINE_WORDS = { open: 'Decline…', testid: 'decline', label: 'Reason for declining', placeholder: 'Why can this not be answered here? The agent is told.', submit: 'Decline to answer', submitStop: 'Decline and stop the run' };

/** The button that opens the reason panel, and the panel: a reason is required to send. */
function buildReasonPanel(entry, words) {
  const r = entry.refs;
  r.reject = h('button', { type: 'button', class: 'btn btn--reject', 'data-action': 'open-reject', 'data-testid': words.testid, 'aria-expanded': 'false' }, words.open);
  const reasonId = uid('reason');
  r.reason = h('textarea', { id: reasonId, class: 'input input--textarea', rows: 2, name: 'reason', 'data-role': 'reason', 'data-testid': 'reject-reason', required: true, placeholder: words.placeholder });
  r.rejectSubmit = h('button', { type: 'button', class: 'btn btn--reject-solid', 'data-action': 'reject', 'data-testid': 'reject-submit', disabled: true }, words.submit);
  // Rejecting denies this call only; the agent may try something else. Stopping is the explicit second choice.
  r.rejectStopSubmit = h('button', { type: 'button', class: 'btn btn--reject', 'data-action': 'reject-stop', 'data-testid': 'reject-stop-submit', disabled: true }, words.submitStop);
  r.rejectStopWarning = h('p', { class: 'panel__note', 'data-testid': 'reject-stop-warning' });
  // Governance's quick reasons, for rejecting a call (a declined question says its own why).
  r.quickReasons = h('div', { class: 'quick-reasons', 'data-testid': 'quick-reasons', hidden: true });
  offerQuickReasons(r.quickReasons, r.reason, { shown: words === REJECT_WORDS });
  r.rejectPanel = h('div', { class: 'panel panel--reject', 'data-testid': 'reject-panel', hidden: true },
    h('label', { class: 'field__label', for: reasonId }, words.label, h('span', { class: 'field__req' }, ' (required)')),
    r.quickReasons,
    r.reason,
    r.rejectStopWarning,
    h('div', { class: 'card__actions' }, r.rejectSubmit, r.rejectStopSubmit,
      h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'cancel', 'data-testid': 'reject-cancel' }, 'Cancel')));
}

/** The "Stop run" panel: a reason, and exactly which cards stopping withdraws. */
export function buildStopPanel(entry) {
  const r = entry.refs;
  const reasonId = uid('stop-reason');
  r.stopReason = h('textarea', { id: reasonId, class: 'input input--textarea', rows: 2, name: 'stop-reason', 'data-role': 'stop-reason', 'data-testid': 'stop-reason', required: true, placeholder: 'Why must this run not go on? Kept in the audit log.' });
  r.stopWarning = h('p', { class: 'panel__note', 'data-testid': 'stop-warning' });
  r.stopSubmit = h('button', { type: 'button', class: 'btn btn--reject-solid', 'data-action': 'stop-run', 'data-testid': 'stop-submit', disabled: true }, 'Stop the run');
  r.stopPanel = h('div', { class: 'panel panel--reject', 'data-testid': 'stop-panel', hidden: true },
    h('label', { class: 'field__label', for: reasonId }, 'Reason for stopping the run', h('span', { class: 'field__req' }, ' (required)')),
    r.stopReason, r.stopWarning,
    h('div', { class: 'card__actions' }, r.stopSubmit,
      h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'cancel', 'data-testid': 'stop-cancel' }, 'Cancel')));
  r.body.append(r.stopPanel);
}

/** Keep both warnings true to the run as it is now (called whenever the run's cards change). */
export function renderWithdrawn(entry) {
  const r = entry.refs;
  const others = entry.withdrawn;
  const also = others.length ? `It also withdraws ${others.length === 1 ? 'this card' : `these ${others.length} cards`}: ${others.join('; ')}.` : 'No other card of this run is open.';
  const rejectText = `Stopping ends the agent's run. ${also}`;
  const stopText = `Stopping ends the agent's run and withdraws this card. ${also}`;
  if (r.rejectStopWarning.textContent !== rejectText) r.rejectStopWarning.textContent = rejectText;
  if (r.stopWarning.textContent !== stopText) r.stopWarning.textContent = stopText;
}

/** A clarification: its form goes in `answer` (card.js rebuilds it), the decline panel below. */
export function buildClarificationControls(entry) {
  const r = entry.refs;
  buildReasonPanel(entry, DECLINE_WORDS);
  r.answer = h('div', { class: 'card__answer' });
  r.body.append(r.answer, r.rejectPanel);
}

export function buildApprovalControls(entry) {
  const r = entry.refs;
  buildReasonPanel(entry, REJECT_WORDS);
  r.approve = h('button', { type: 'button', class: 'btn btn--approve', 'data-action': 'approve', 'data-testid': 'approve' }, 'Approve');
  r.edit = h('button', { type: 'button', class: 'btn', 'data-action': 'open-edit', 'data-testid': 'edit', 'aria-expanded': 'false' }, 'Edit args');
  r.actions = h('div', { class: 'card__actions', 'data-testid': 'card-actions' }, r.approve, r.reject, r.edit);

  const editorId = uid('editor');
  const statusId = uid('editor-status');
  r.editor = h('textarea', {
    id: editorId, class: 'input input--code', rows: 8, spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off',
    'data-role': 'editor', 'data-testid': 'args-editor', 'aria-describedby': statusId,
  });
  r.editStatus = h('p', { class: 'editor__status', id: statusId, 'data-testid': 'args-editor-error' });
  r.diff = h('div', { class: 'diff', 'data-testid': 'args-diff' });
  r.approveEdited = h('button', { type: 'button', class: 'btn btn--approve', 'data-action': 'approve-edited', 'data-testid': 'approve-edited', disabled: true }, 'Approve edited');
  // Flat args can also be edited field by field (edit_form.js); the switch shows only for them.
  r.editAs = h('button', { type: 'button', class: 'btn btn--quiet btn--small', 'data-action': 'edit-as', 'data-testid': 'edit-as', hidden: true });
  r.jsonBox = h('div', { class: 'edit__json' }, h('label', { class: 'field__label', for: editorId }, 'Arguments to approve (JSON object)'), r.editor);
  r.fieldsBox = h('div', { class: 'edit__fields', hidden: true });
  r.lockedNote = h('p', { class: 'panel__note', 'data-testid': 'edit-locked', hidden: true });
  r.editPanel = h('div', { class: 'panel panel--edit', 'data-testid': 'edit-panel', hidden: true },
    r.editAs, r.lockedNote, r.jsonBox, r.fieldsBox, r.editStatus, r.diff,
    h('div', { class: 'card__actions' }, r.approveEdited,
      h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'cancel', 'data-testid': 'edit-cancel' }, 'Cancel')));

  r.body.append(r.editPanel, r.rejectPanel, r.actions);
}

export function syncControls(entry) {
  const r = entry.refs;
  const locked = isLocked(entry);
  r.reject.disabled = locked;
  r.rejectSubmit.disabled = locked || !r.reason.value.trim();
  r.rejectStopSubmit.disabled = r.rejectSubmit.disabled;
  r.stopOpen.disabled = entry.busy || Boolean(entry.gone);
  r.stopSubmit.disabled = r.stopOpen.disabled || !r.stopReason.value.trim();
  if (entry.kind === 'approval') {
    const noApproval = cannotApprove(entry);
    r.approve.disabled = noApproval;
    r.edit.disabled = noApproval;
    r.approveEdited.disabled = noApproval || !entry.edit.valid || !entry.edit.changes.length;
    if (r.confirmSubmit) r.confirmSubmit.disabled = noApproval;
  } else if (entry.form) {
    entry.form.submit.disabled = locked;
  }
  syncClaimButton(entry);
  nameControls(entry);
  entry.el.classList.toggle('is-busy', entry.busy);
  if (entry.busy) entry.el.setAttribute('aria-busy', 'true');
  else entry.el.removeAttribute('aria-busy');
}

export function setMode(entry, mode) {
  const r = entry.refs;
  entry.mode = mode;
  r.rejectPanel.hidden = mode !== 'reject';
  r.reject.setAttribute('aria-expanded', String(mode === 'reject'));
  r.stopPanel.hidden = mode !== 'stop';
  r.stopOpen.setAttribute('aria-expanded', String(mode === 'stop'));
  if (r.confirmPanel) r.confirmPanel.hidden = mode !== 'confirm'; // confirm.js
  if (entry.kind === 'approval') {
    r.editPanel.hidden = mode !== 'edit';
    r.actions.hidden = mode !== 'view';
    r.edit.setAttribute('aria-expanded', String(mode === 'edit'));
  } else {
    r.answer.hidden = mode !== 'view'; // set aside, not cleared: Cancel brings the answers back
  }
  entry.el.dataset.mode = mode;
}

/** Open the reason panel: Reject on an approval, Decline on a clarification. */
export function openReject(entry) {
  if (isLocked(entry)) return;
  setMode(entry, 'reject');
  syncControls(entry);
  entry.refs.reason.focus();
}

export function openEdit(entry) {
  if (entry.kind !== 'approval' || cannotApprove(entry)) return;
  const r = entry.refs;
  const args = isObj(entry.card.args) ? entry.card.args : {};
  const locked = lockedOf(entry.card);
  r.lockedNote.textContent = locked.length ? revealedText(`Not editable, they name the patient: ${locked.join(', ')}.`) : '';
  r.lockedNote.hidden = !locked.length;
  // Keep a draft across reject/edit switches; only Cancel throws it away.
  if (!r.editor.value && !entry.editForm) {
    r.editAs.hidden = !isFlat(args);
    if (isFlat(args) && prefersFields()) useFields(entry, args);
    else useJson(entry, args);
  }
  setMode(entry, 'edit');
  validateEdit(entry);
  focusEditor(entry);
}

function focusEditor(entry) {
  const form = entry.editForm && entry.editForm.el;
  const field = form && (form.querySelector('.field:not([data-locked]) :is(input, select, textarea)') || form.querySelector('input, select, textarea'));
  if (field) field.focus();
  else entry.refs.editor.focus();
}

function useFields(entry, args) {
  const r = entry.refs;
  entry.editForm = buildArgsForm(args, lockedOf(entry.card));
  r.fieldsBox.replaceChildren(entry.editForm.el);
  r.fieldsBox.hidden = false;
  r.jsonBox.hidden = true;
  r.editor.value = '';
  r.editAs.textContent = 'Edit as JSON';
}

function useJson(entry, args) {
  const r = entry.refs;
  entry.editForm = null;
  r.fieldsBox.replaceChildren();
  r.fieldsBox.hidden = true;
  r.jsonBox.hidden = false;
  // Hidden characters as \uXXXX escapes: the same JSON value, but nothing invisible to edit around.
  r.editor.value = escapeHidden(JSON.stringify(args, null, 2));
  r.editor.rows = Math.min(18, Math.max(6, r.editor.value.split('\n').length + 1));
  r.editAs.textContent = 'Edit field by field';
}

/** Switch the open edit between fields and JSON, carrying the edits made so far across. */
export function switchEditAs(entry) {
  validateEdit(entry);
  const r = entry.refs;
  if (!entry.edit.valid) {
    r.editStatus.textContent = `${r.editStatus.textContent} Fix this before switching.`;
    return;
  }
  if (entry.editForm) useJson(entry, entry.edit.value);
  else if (isFlat(entry.edit.value)) useFields(entry, entry.edit.value);
  else {
    r.editStatus.textContent = 'Only plain values (no objects or lists) can be edited field by field.';
    return;
  }
  validateEdit(entry);
  focusEditor(entry);
}

/** Open the "Stop run" panel. A stop is not blocked by the card's own expiry: the run may still be going. */
export function openStop(entry) {
  if (entry.busy) return;
  setMode(entry, 'stop');
  syncControls(entry);
  entry.refs.stopReason.focus();
}

/** Close the open panel and throw away what was typed in it. Cancelling the confirmation of an
 * edited approval goes back to the edit, as it was. */
export function cancelMode(entry) {
  const r = entry.refs;
  if (entry.mode === 'confirm' && entry.confirmEdited) {
    entry.confirmEdited = false;
    setMode(entry, 'edit');
    syncControls(entry);
    focusEditor(entry);
    return;
  }
  if (entry.mode === 'reject') r.reason.value = '';
  if (entry.mode === 'stop') r.stopReason.value = '';
  if (entry.mode === 'edit') {
    r.editor.value = '';
    entry.editForm = null;
    r.fieldsBox.replaceChildren();
    r.diff.replaceChildren();
    r.editStatus.textContent = '';
    entry.edit = noEdit();
  }
  if (entry.kind === 'approval') entry.dirty = false; // a clarification's form answers are still there
  setMode(entry, 'view');
  syncControls(entry);
  entry.el.focus({ preventScroll: true });
}

/** The edit as it stands: {ok, value} or {ok: false, error}, from the fields or the JSON text. */
function readEdit(entry) {
  if (!entry.editForm) return parseArgs(entry.refs.editor.value);
  const { value, firstInvalid } = entry.editForm.read();
  return firstInvalid ? { ok: false, error: 'Check the highlighted fields.' } : { ok: true, value };
}

/** Check the edit against the server's rules and show the diff from the request. */
export function validateEdit(entry) {
  const r = entry.refs;
  const result = readEdit(entry);
  const changes = result.ok ? diffArgs(isObj(entry.card.args) ? entry.card.args : {}, result.value) : [];
  const locked = result.ok ? lockedTouched(changes, lockedOf(entry.card)) : '';
  if (result.ok && !locked) {
    entry.edit = { valid: true, value: result.value, changes };
    r.editStatus.textContent = entry.editForm ? 'Every field is valid.' : 'Valid JSON object.';
    r.editStatus.className = 'editor__status editor__status--ok';
    r.editor.removeAttribute('aria-invalid');
    renderDiff(r.diff, changes);
    r.diff.hidden = false;
  } else if (locked) {
    // The change is shown, and held back: the server would refuse it (400 locked_arg).
    entry.edit = noEdit();
    r.editStatus.textContent = revealedText(lockedMessage(locked));
    r.editStatus.className = 'editor__status editor__status--error';
    r.editor.setAttribute('aria-invalid', 'true');
    renderDiff(r.diff, changes);
    r.diff.hidden = false;
  } else {
    entry.edit = noEdit();
    r.editStatus.textContent = result.error;
    r.editStatus.className = 'editor__status editor__status--error';
    if (!entry.editForm) r.editor.setAttribute('aria-invalid', 'true'); // a field marks itself (form_field.js)
    r.diff.hidden = true;
  }
  syncControls(entry);
}
