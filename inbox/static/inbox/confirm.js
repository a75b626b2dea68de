/* High-risk approvals ask first: "a" or a click on Approve opens a panel that
 * names the call, the patient and what it would do, with Cancel focused — so a stray
 * second key press cancels, and approving takes a deliberate Tab + Enter or a click on
 * "Yes, approve". An edited approval of a high-risk card asks the same, showing the edit
 * (old → new) instead of the args; Cancel goes back to the edit. Low-risk and untiered
 * cards approve at once, as before. */
import { renderDiff } from './args.js';
import { cardLabel } from './card.js';
import { cannotApprove, setMode, syncControls, validateEdit } from './controls.js';
import { approve, approveEdited } from './decisions.js';
import { h } from './dom.js';
import { revealedText } from './reveal.js';
import { compact, isObj, isPrimitive, patientContext, str } from './values.js';

const SUMMARY_FIELDS = 6;

export const needsConfirmation = (entry) => entry.kind === 'approval' && entry.card && entry.card.hitl_tier === 'high';

/** The call's leading arguments in one line: "drug: gentamicin · dose_mg_per_kg: 5 · …". */
function argsSummary(args) {
  if (!isObj(args)) return '';
  const keys = Object.keys(args);
  const parts = keys.slice(0, SUMMARY_FIELDS).map((k) => `${k}: ${isPrimitive(args[k]) ? String(args[k]) : compact(args[k], 60)}`);
  if (keys.length > SUMMARY_FIELDS) parts.push(`and ${keys.length - SUMMARY_FIELDS} more (shown above)`);
  return revealedText(parts.join(' · '));
}

function build(entry) {
  const r = entry.refs;
  r.confirmText = h('p', { class: 'confirm__text', 'data-testid': 'confirm-text' });
  r.confirmPatient = h('p', { class: 'confirm__patient', 'data-testid': 'confirm-patient' });
  r.confirmArgs = h('p', { class: 'confirm__args', 'data-testid': 'confirm-args' });
  r.confirmDiff = h('div', { class: 'diff', 'data-testid': 'confirm-diff', hidden: true });
  r.confirmCancel = h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'cancel', 'data-testid': 'confirm-cancel' }, 'Cancel');
  r.confirmSubmit = h('button', { type: 'button', class: 'btn btn--approve', 'data-action': 'confirm-approve', 'data-testid': 'confirm-approve' }, 'Yes, approve');
  r.confirmPanel = h('div', { class: 'panel panel--confirm', role: 'group', 'aria-label': 'Confirm a high-risk approval', 'data-testid': 'confirm-panel', hidden: true },
    r.confirmText, r.confirmPatient, r.confirmArgs, r.confirmDiff,
    h('div', { class: 'card__actions' }, r.confirmCancel, r.confirmSubmit));
  r.body.append(r.confirmPanel);
}

/** Open the confirmation for the card's args, or (`edited`) for the reviewer's edit of them. */
function openConfirm(entry, edited) {
  if (!entry.refs.confirmPanel) build(entry);
  const r = entry.refs;
  entry.confirmEdited = edited;
  const n = entry.edit.changes.length;
  r.confirmText.textContent = edited
    ? `High risk: approve ${cardLabel(entry.card)} with ${n} edit${n === 1 ? '' : 's'}? The agent will run exactly the edited arguments.`
    : `High risk: approve ${cardLabel(entry.card)}? The agent will run exactly this.`;
  const patient = str(patientContext(entry.card).patient_ref);
  r.confirmPatient.textContent = revealedText(`Patient: ${patient || 'no patient ref'}`);
  r.confirmArgs.textContent = edited ? '' : argsSummary(entry.card.args);
  r.confirmArgs.hidden = !r.confirmArgs.textContent;
  if (edited) renderDiff(r.confirmDiff, entry.edit.changes);
  r.confirmDiff.hidden = !edited;
  setMode(entry, 'confirm');
  syncControls(entry);
  r.confirmCancel.focus(); // Enter right after "a" cancels; approving is a separate, deliberate step
}

/** Approve, or for a high-risk card open the confirmation first. */
export function requestApprove(entry) {
  if (cannotApprove(entry)) return;
  if (!needsConfirmation(entry)) {
    approve(entry);
    return;
  }
  openConfirm(entry, false);
}

/** "Approve edited": at once, or for a high-risk card after the same confirmation, showing the edit. */
export function requestApproveEdited(entry) {
  validateEdit(entry);
  if (!entry.edit.valid || !entry.edit.changes.length || cannotApprove(entry)) return;
  if (!needsConfirmation(entry)) {
    approveEdited(entry);
    return;
  }
  openConfirm(entry, true);
}

/** The reviewer confirmed in the panel. */
export function confirmApprove(entry) {
  if (entry.mode !== 'confirm') return;
  if (entry.confirmEdited) approveEdited(entry);
  else approve(entry);
}
