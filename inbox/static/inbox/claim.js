/* Claims on a card (SPEC section 10): "I am working on this one".
 *
 * The reviewer claims a card with its Claim button and gives it back with Release
 * (decisions.js sends both). Every other inbox shows "rita is reviewing" live (the
 * server pushes card.updated) and keeps its decision controls off, with a note saying
 * why, until the claim is released, ended by a decision, or runs out. The server has
 * the last word: a decision it still refuses comes back as 409 approval_claimed. */
import { clockTime, timeOf } from './countdown.js';
import { h, uid } from './dom.js';
import { config } from './page.js';
import { revealedText, setRevealed } from './reveal.js';
import { str } from './values.js';

export function buildClaim(entry) {
  const r = entry.refs;
  const noteId = uid('claim-note');
  r.claimButton = h('button', {
    type: 'button', class: 'btn btn--small', 'data-action': 'claim', 'data-testid': 'claim-toggle', 'aria-describedby': noteId,
  }, 'Claim');
  r.claimNote = h('p', { class: 'claim__note', id: noteId, 'data-testid': 'claim-note' });
  r.claimBar = h('div', { class: 'card__claim', 'data-testid': 'card-claim-bar' }, r.claimButton, r.claimNote);
  return r.claimBar;
}

/** Who holds the card at `now`: {holder, until, live, mine}. */
export function claimAt(card, now) {
  const holder = str(card.claimed_by);
  const until = holder ? timeOf(card.claim_expires_at, 0) : 0;
  const live = Boolean(holder) && until > now;
  return { holder, until, live, mine: live && holder === config.reviewer };
}

/** Bring the badge, button and note in line with the claim at `now`; true when the lock on deciding changed. */
export function applyClaim(entry, now) {
  const r = entry.refs;
  const claim = claimAt(entry.card, now);
  const wasHeld = Boolean(entry.heldByOther);
  entry.claim = claim;
  entry.heldByOther = claim.live && !claim.mine;
  if (claim.mine) r.claim.textContent = `You are reviewing · until ${clockTime(claim.until)}`;
  else setRevealed(r.claim, claim.live ? `${claim.holder} is reviewing` : '');
  r.claim.hidden = !claim.live;
  const label = claim.mine ? 'Release' : 'Claim';
  if (r.claimButton.textContent !== label) r.claimButton.textContent = label;
  let note = 'Claim the card so other reviewers know you are working on it.';
  if (claim.mine) note = `Others see that you are reviewing it; they cannot decide it until you release it or ${clockTime(claim.until)}.`;
  if (entry.heldByOther) {
    note = `${revealedText(claim.holder)} is reviewing this card, so you cannot decide it now. You can once they release it, or at ${clockTime(claim.until)} when their claim runs out.`;
  }
  if (r.claimNote.textContent !== note) r.claimNote.textContent = note;
  r.claimBar.classList.toggle('card__claim--held', entry.heldByOther);
  syncClaimButton(entry);
  return wasHeld !== entry.heldByOther;
}

/** The claim on the card ran out since it was last shown. */
export const claimLapsed = (entry, now) => Boolean(entry.claim && entry.claim.live && entry.claim.until <= now);

export function syncClaimButton(entry) {
  entry.refs.claimButton.disabled = Boolean(entry.heldByOther || entry.claimBusy || entry.busy || entry.expired || entry.gone);
}
