/* Args too large for the live card (approvals/cards.py cuts past CONDOR_CARD_ARGS_MAX_BYTES):
 * the card shows the start of their text, marked as cut, and "Show all" loads the rest
 * from the approval itself. Until then the card cannot be approved or edited, so what
 * the reviewer approves is exactly what they were shown (and what was hashed). */
import { h } from './dom.js';
import { config } from './page.js';
import { isObj } from './values.js';

/** The card's args are not all on the page yet. */
export const argsCut = (card) => isObj(card) && card.args_truncated === true;

/** An approval that nobody may approve or edit yet: its full args were never shown. */
export const awaitingFullArgs = (entry) => entry.kind === 'approval' && argsCut(entry.card);

/* What a card too big for a websocket frame may go without besides its args, loaded from the
 * approval with them (inbox/pages.py _LAST_RESORT; the card names them in `cut_fields`). */
const FROM_APPROVAL = ['message', 'explanation', 'resume_schema', 'approvals'];

/** `card`, with the full args "Show all" loaded for this same payload put back in (and any other cut field). */
export function withLoadedArgs(entry, card) {
  const loaded = entry.fullArgs;
  if (!loaded || !argsCut(card) || card.payload_hash !== loaded.hash) return card;
  const cut = Array.isArray(card.cut_fields) ? card.cut_fields : [];
  const restored = Object.fromEntries(FROM_APPROVAL.filter((name) => cut.includes(name)).map((name) => [name, loaded.fields[name]]));
  return { ...card, ...restored, args: loaded.args, args_truncated: false };
}

function kib(bytes) {
  return `${Math.max(1, Math.round(Number(bytes) / 1024))} KiB`;
}

/** The start of the args, marked as cut, with the button that loads the rest. */
export function renderCutArgs(container, card) {
  const preview = typeof card.args_preview === 'string' ? card.args_preview : '';
  container.replaceChildren(
    h('p', { class: 'args__cut notice notice--warn', 'data-testid': 'args-truncated' },
      `Arguments truncated: showing the start of ${kib(card.args_bytes)}. Load them all before approving or editing. `,
      h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'show-all-args', 'data-testid': 'show-all-args' }, 'Show all')),
    h('pre', { class: 'args__json args__json--cut', 'data-testid': 'args-preview' }, `${preview}…`),
  );
}

/** Load the full args from the approval; true once they are on the entry. Throws with a reason otherwise. */
export async function loadFullArgs(entry) {
  const url = config.approvalUrl.replace('{id}', encodeURIComponent(entry.id));
  const res = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const detail = isObj(data) && typeof data.detail === 'string' ? `: ${data.detail}` : '';
    throw new Error(`Could not load the full arguments (HTTP ${res.status}${detail}).`);
  }
  // The payload on the table: under four eyes an edit waits in approved_args while the card is
  // pending (approvals/quorum.py), and that, not the agent's args, is what approving approves.
  const args = isObj(data) && isObj(data.approved_args) ? data.approved_args : isObj(data) ? data.args : null;
  // Only the args of this very payload: the hash on the card is the one the decision binds.
  if (!isObj(data) || data.id !== entry.id || data.payload_hash !== entry.card.payload_hash || !isObj(args)) {
    throw new Error('The arguments changed since the card was sent; wait for the card to refresh.');
  }
  // As the card says them (approvals/cards.py): an empty message is null there.
  const fields = { message: data.message || null, explanation: data.explanation,
    resume_schema: data.resume_schema, approvals: data.approvals };
  entry.fullArgs = { hash: data.payload_hash, args, fields };
  return true;
}
