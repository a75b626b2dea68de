/* Four eyes on a card (SPEC section 10): who approved so far, in plain text on the card, and
 * the first approver's own state. The server's card names every approval counted for the
 * payload on the table (`approvals: [{reviewer, at, reason}]`), so a reload shows the same:
 * the card stays in the approver's list as "You approved (1 of 2) — waiting for a second
 * reviewer", with Approve and Edit off (controls.js asks `approvedByMe`) and that reason
 * beside them. An edit by another reviewer puts new args on the table and restarts the
 * count: the card is then this reviewer's to approve again. */
import { clockTime, timeOf } from './countdown.js';
import { h, uid } from './dom.js';
import { config } from './page.js';
import { revealedText } from './reveal.js';
import { str } from './values.js';

/** The approvers line (every card) and the approver's note (next to the decision buttons). */
export function buildQuorum(entry) {
  const r = entry.refs;
  r.approvers = h('p', { class: 'card__approvers', 'data-testid': 'card-approvals', hidden: true });
  r.myApproval = h('p', { class: 'card__mine', id: uid('my-approval'), role: 'status', 'data-testid': 'card-my-approval', hidden: true });
  return r.approvers;
}

const required = (card) => (Number.isInteger(card.approvals_required) ? card.approvals_required : 1);
const counted = (card) => (Array.isArray(card.approvals) ? card.approvals.filter((a) => a && str(a.reviewer)) : []);

/** "rita at 10:02 (“Dose checked.”)" */
function approverText(approval) {
  const at = timeOf(approval.at, NaN);
  const reason = str(approval.reason).trim();
  return `${str(approval.reviewer)}${Number.isFinite(at) ? ` at ${clockTime(at)}` : ''}${reason ? ` (“${reason}”)` : ''}`;
}

/** This reviewer's part in `card`'s quorum, from its data alone (the queue line reads it before the card is
 * built): `approvedByMe`, `myApprovalCount` ("You approved (1 of 2)") and `myApprovalText` (… waiting for whom). */
export function noteQuorum(entry, card) {
  const votes = counted(card);
  // Told by the server (409 already_approved_by_you) before the card said so: holds for this payload.
  const told = entry.approvedHere === card.payload_hash;
  entry.approvedByMe = told || votes.some((a) => a.reviewer === config.reviewer);
  const given = Math.max(votes.length, entry.approvedByMe ? 1 : 0);
  const more = Math.max(required(card) - given, 1);
  const whom = more > 1 ? `${more} more reviewers` : given === 1 ? 'a second reviewer' : 'one more reviewer';
  entry.myApprovalCount = entry.approvedByMe ? `You approved (${given} of ${required(card)})` : '';
  entry.myApprovalText = entry.approvedByMe ? `${entry.myApprovalCount} — waiting for ${whom}` : '';
}

/** Bring the approvers line and the approver's note in line with `card` (its DOM built). */
export function applyQuorum(entry, card) {
  const r = entry.refs;
  noteQuorum(entry, card);
  const votes = counted(card);
  const approvers = votes.length ? `Approved so far: ${revealedText(votes.map(approverText).join('; '))}` : '';
  if (r.approvers.textContent !== approvers) r.approvers.textContent = approvers;
  r.approvers.hidden = !approvers;
  const mine = entry.myApprovalText && `${entry.myApprovalText}. Approving again is for someone else; you can still reject it.`;
  if (r.myApproval.textContent !== mine) r.myApproval.textContent = mine;
  r.myApproval.hidden = !mine;
  entry.el.classList.toggle('is-approved-by-me', entry.approvedByMe);
  if (r.approve) {
    if (mine) r.approve.setAttribute('aria-describedby', r.myApproval.id);
    else r.approve.removeAttribute('aria-describedby');
  }
}

/** The server says this reviewer approved the payload on the table already. */
export function noteApprovedHere(entry) {
  entry.approvedHere = entry.card.payload_hash;
}
