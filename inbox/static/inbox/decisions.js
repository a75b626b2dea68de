/* Deciding a card: POST to the decision endpoint (session + CSRF), then say what happened. */
import { applyCard, cardLabel, refreshQuorum, showCardError } from './card.js';
import { cancelMode, cannotApprove, isLocked, syncControls, validateEdit } from './controls.js';
import { announce } from './feedback.js';
import { discard, entriesOfRun, isShown, markDecidedHere, removalPhrase } from './list.js';
import { sendJson } from './http.js';
import { followOn } from './next_card.js';
import { noteApprovedHere } from './quorum.js';
import { forgetRun } from './runs.js';
import { keepUntilTold } from './withdrawn.js';
import { config } from './page.js';
import { collectValues } from './schema_form.js';
import { isObj } from './values.js';

const CHECK_FIELDS = 'Check the highlighted fields.';

export function approve(entry) {
  if (cannotApprove(entry)) return;
  submitDecision(entry, { approved: true, payload_hash: entry.card.payload_hash }, `Approved: ${cardLabel(entry.card)}.`);
}

export function reject(entry, { stopRun = false } = {}) {
  const reason = entry.refs.reason.value.trim();
  if (!reason || isLocked(entry)) {
    entry.refs.reason.focus();
    return;
  }
  // Declining a clarification is a rejection to the server; only the wording differs.
  const done = entry.kind === 'clarification' ? 'Declined' : 'Rejected';
  if (!stopRun) {
    submitDecision(entry, { approved: false, reason }, `${done}: ${cardLabel(entry.card)}. The agent was told why and may propose something else.`);
    return;
  }
  const withdrawn = entry.withdrawn.length;
  submitDecision(entry, { approved: false, reason, stop_run: true },
    `${done} and stopped the run: ${cardLabel(entry.card)}${withdrawn ? `; ${withdrawn} other card${withdrawn === 1 ? '' : 's'} withdrawn` : ''}.`,
    { endsRun: true });
}

/** Stop the card's run (POST runs/{id}/stop/): every card it holds open is withdrawn. */
export async function stopRun(entry) {
  const reason = entry.refs.stopReason.value.trim();
  if (!reason || entry.busy) {
    entry.refs.stopReason.focus();
    return;
  }
  const runId = entry.card.run_id;
  const count = entriesOfRun(runId).length;
  const goOn = followOn(entry, { skipRun: true });
  entry.busy = true;
  showCardError(entry, '');
  syncControls(entry);
  const { res, data, detail, code } = await postJson(config.stopUrl.replace('{id}', encodeURIComponent(runId)), { reason });
  entry.busy = false;
  if (res && res.ok) {
    withdrawRun(runId);
    goOn();
    // A run that had already ended comes back unchanged: its terminal reason says how it ended.
    const ended = data && data.terminal_reason;
    if (ended && ended !== 'user_stopped') {
      announce(`The run of ${cardLabel(entry.card)} had already ended (${ended}).`, 'error');
    } else {
      announce(`Stopped the run of ${cardLabel(entry.card)}; ${count} card${count === 1 ? '' : 's'} withdrawn.`, 'success');
    }
    return;
  }
  syncControls(entry);
  // Another reviewer is working on a card of this run: stopping would withdraw it under them.
  const message = code === 'approval_claimed' ? `Not stopped: ${detail} Your reason is kept.` : failureMessage(res, detail);
  showCardError(entry, message);
  announce(`${cardLabel(entry.card)}: ${message}`, 'error');
}

/** Claim the card, or give it back when this reviewer holds it (claim.js shows the result). */
export async function toggleClaim(entry) {
  if (entry.claimBusy || entry.heldByOther) return;
  const releasing = entry.claim.mine;
  entry.claimBusy = true;
  showCardError(entry, '');
  syncControls(entry);
  const url = config.claimUrl.replace('{id}', encodeURIComponent(entry.id));
  const { res, data, detail } = await sendJson(url, { method: releasing ? 'DELETE' : 'POST' });
  entry.claimBusy = false;
  if (!isShown(entry)) return; // decided or withdrawn meanwhile: nothing left to claim
  if (res && res.ok) {
    // The push (card.updated) says the same a moment later; show it now.
    const held = releasing || !isObj(data) ? { claimed_by: null, claim_expires_at: null }
      : { claimed_by: data.claimed_by, claim_expires_at: data.claim_expires_at };
    // When the push came first this changes nothing on the card (applyCard returns false), yet
    // the button was held off only while the request was out: free it either way.
    if (!applyCard(entry, { ...entry.card, ...held })) syncControls(entry);
    announce(releasing ? `Released: ${cardLabel(entry.card)}. Any reviewer can take it.`
      : `Claimed: ${cardLabel(entry.card)}. Other reviewers see that you are reviewing it.`, 'success');
    return;
  }
  syncControls(entry);
  const message = res ? `Could not ${releasing ? 'release' : 'claim'} this card (HTTP ${res.status})${detail ? `: ${detail}` : '.'}`
    : 'Network problem — the claim was not changed; try again.';
  showCardError(entry, message);
  announce(`${cardLabel(entry.card)}: ${message}`, 'error');
}

/** The run is over: none of its cards can be decided any more, and it holds no grants. */
function withdrawRun(runId) {
  for (const other of entriesOfRun(runId)) {
    markDecidedHere(other.id);
    discard(other);
  }
  forgetRun(runId);
}

export function approveEdited(entry) {
  validateEdit(entry);
  if (!entry.edit.valid || !entry.edit.changes.length || cannotApprove(entry)) return;
  const n = entry.edit.changes.length;
  submitDecision(entry, { approved: true, edited_args: entry.edit.value, payload_hash: entry.card.payload_hash },
    `Approved with ${n} edit${n === 1 ? '' : 's'}: ${cardLabel(entry.card)}.`);
}

export function answer(entry) {
  if (isLocked(entry)) return;
  const { values, firstInvalid } = collectValues(entry.form);
  if (firstInvalid) {
    firstInvalid.focus();
    showCardError(entry, CHECK_FIELDS);
    return;
  }
  submitDecision(entry, { values }, `Answer sent: ${cardLabel(entry.card)}.`);
}

/** While the reviewer fixes a highlighted field, re-check it; clear the card's hint once all are fixed. */
export function recheckField(entry, target) {
  const field = target.closest('.field');
  if (!field || !field.classList.contains('field--invalid') || !entry.form) return;
  const f = entry.form.fields.find((x) => x.el === field);
  if (f) f.showError(f.validate());
  if (!entry.form.el.querySelector('.field--invalid') && entry.refs.error.textContent === CHECK_FIELDS) showCardError(entry, '');
}

/** POST a JSON body with the session cookie and CSRF token: {res (null on a network failure), detail, code}. */
const postJson = (url, body) => sendJson(url, { method: 'POST', body });

/** A four-eyes approval counted, the card still short of its quorum: it stays here, Approve off
 * (quorum.js), showing the approvals as the answer counts them (its push says the same soon after). */
function keepCounted(entry, approval) {
  cancelMode(entry);
  applyCard(entry, {
    ...entry.card, approvals: approval.approvals, payload_hash: approval.payload_hash,
    claimed_by: null, claim_expires_at: null, // a decision ends the claim
  });
  announce(`${entry.myApprovalText}: ${cardLabel(entry.card)}.`, 'success');
}

const stillShort = (approval) => isObj(approval) && approval.status === 'pending' && Array.isArray(approval.approvals);

async function submitDecision(entry, body, successText, { endsRun = false } = {}) {
  // Where to go next, as the reviewer sees the list now: its push may take the card off before the answer.
  const goOn = followOn(entry, { skipRun: endsRun });
  entry.busy = true;
  entry.removedInfo = null;
  showCardError(entry, '');
  syncControls(entry);
  const { res, data, detail, code } = await postJson(config.decisionUrl.replace('{id}', encodeURIComponent(entry.id)), body);
  entry.busy = false;
  const label = cardLabel(entry.card);
  const also = detail ? ` ${detail}` : '';

  if (res && res.ok) {
    if (stillShort(data) && isShown(entry)) {
      keepCounted(entry, data); // under four eyes the card waits for another reviewer, in view
      return;
    }
    markDecidedHere(entry.id);
    discard(entry);
    if (endsRun) withdrawRun(entry.card.run_id);
    goOn();
    announce(successText, 'success');
    return;
  }
  if (entry.gone) {
    // Withdrawn while the request was out: the card stays with what was typed (withdrawn.js).
    syncControls(entry);
    showCardError(entry, `Not applied: ${entry.gone.text}.`);
    announce(`Not applied — ${entry.gone.text}: ${label}. What you typed is still on the card.`, 'error');
    return;
  }
  if (code === 'already_approved_by_you') {
    // A page that missed the push: the card says so now, instead of an error to retry.
    noteApprovedHere(entry);
    cancelMode(entry);
    refreshQuorum(entry);
    announce(`${entry.myApprovalText}: ${label}.`, 'info');
    return;
  }
  // Another reviewer holds the card, its args changed under an edit (the refreshed card
  // follows), or a cut card's args were never loaded: it is still pending, so it stays,
  // with the server's words.
  const stillOpen = ['approval_claimed', 'payload_changed', 'full_args_not_viewed'].includes(code);
  if (code === 'approval_not_pending' && entry.dirty && isShown(entry)) {
    // Too late, and its removal not here yet to say why (withdrawn, decided, expired): what was typed stays.
    keepUntilTold(entry);
    syncControls(entry);
    announce(`Not applied — ${label} stopped waiting for a decision.${also} What you typed is still on the card.`, 'error');
    return;
  }
  if (res && !stillOpen && (res.status === 409 || res.status === 404 || res.status === 410)) {
    // Someone else decided first, it expired, or it is gone: it cannot be decided here.
    discard(entry);
    const who = entry.removedInfo ? ` ${removalPhrase(entry.removedInfo, entry.card)}.` : '';
    const why = res.status === 409 ? 'was already decided or has expired' : 'no longer exists';
    announce(`Not applied — ${label} ${why}.${who}${also} It has been removed from your inbox.`, 'error');
    return;
  }
  if (res && res.status === 422 && (code === 'resume_schema_rejected' || !code)) {
    discard(entry);
    announce(`The run could not accept this answer and has failed — ${label}.${also}`, 'error');
    return;
  }
  if (!isShown(entry)) {
    // Removed by the server while our request was in flight.
    announce(`${removalPhrase(entry.removedInfo, entry.card)}: ${label} was removed; your decision was not applied.`, 'error');
    return;
  }
  // Nothing was decided: the card stays, with what the reviewer typed.
  const message = failureMessage(res, detail);
  syncControls(entry);
  showCardError(entry, message);
  announce(`${label}: ${message}`, 'error');
}

function failureMessage(res, detail) {
  if (!res) return 'Network problem — your decision was not confirmed. Your input is kept; try again.';
  if (res.status === 400) return `Condor could not accept this decision: ${detail || 'the request was invalid.'} Your input is kept.`;
  if (res.status === 403) {
    return detail
      ? `Not permitted: ${detail}`
      : 'Not permitted — your session may have expired. Reload the page to sign in again; your input is kept until then.';
  }
  return `Condor could not record the decision (HTTP ${res.status}${detail ? `: ${detail}` : ''}). Your input is kept; try again.`;
}
