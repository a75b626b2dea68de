/* High-risk approvals ask first (issue 14): "a" or a click on Approve opens a panel that
 * names the call, the patient and what it would do, with Cancel focused — so a stray
 * second key press cancels, and approving takes a deliberate Tab + Enter or a click on
 * "Yes, approve". Low-risk and untiered cards approve at once, as before. */
import { cardLabel } from './card.js';
import { cannotApprove, setMode, syncControls } from './controls.js';
import { approve } from './decisions.js';
import { h } from './dom.js';
import { revealedText } from './reveal.js';
import { compact, isObj, isPrimitive } from './values.js';

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
  r.confirmArgs = h('p', { class: 'confirm__args', 'data-testid': 'confirm-args' });
  r.confirmCancel = h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'cancel', 'data-testid': 'confirm-cancel' }, 'Cancel');
  r.confirmSubmit = h('button', { type: 'button', class: 'btn btn--approve', 'data-action': 'confirm-approve', 'data-testid': 'confirm-approve' }, 'Yes, approve');
  r.confirmPanel = h('div', { class: 'panel panel--confirm', role: 'group', 'aria-label': 'Confirm a high-risk approval', 'data-testid': 'confirm-panel', hidden: true },
    r.confirmText, r.confirmArgs,
    h('div', { class: 'card__actions' }, r.confirmCancel, r.confirmSubmit));
  r.body.append(r.confirmPanel);
}

/** Approve, or for a high-risk card open the confirmation first. */
export function requestApprove(entry) {
  if (cannotApprove(entry)) return;
  if (!needsConfirmation(entry)) {
    approve(entry);
    return;
  }
  if (!entry.refs.confirmPanel) build(entry);
  const r = entry.refs;
  r.confirmText.textContent = `High risk: approve ${cardLabel(entry.card)}? The agent will run exactly this.`;
  r.confirmArgs.textContent = argsSummary(entry.card.args);
  r.confirmArgs.hidden = !r.confirmArgs.textContent;
  setMode(entry, 'confirm');
  syncControls(entry);
  r.confirmCancel.focus(); // Enter right after "a" cancels; approving is a separate, deliberate step
}

/** The reviewer confirmed in the panel. */
export function confirmApprove(entry) {
  if (entry.mode !== 'confirm') return;
  approve(entry);
}
