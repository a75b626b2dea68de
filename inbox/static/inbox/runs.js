/* Cards of one run belong together: a rejection denies one call, but stopping the run
 * withdraws every card it still holds open, so the reviewer must see them side by side
 * (and be told which ones go) before the click.
 *
 * The run's pending cards are entries of the list (list.js); the grants it holds —
 * approved, not yet used by the agent — are no longer cards, so they are kept here:
 * seeded from each card's `run_granted` (the server's view when the card was built)
 * and kept current from `card.removed` notices, which name the run, tool and op. */
import { str } from './values.js';

const granted = new Map(); // run id -> Map(approval id -> {id, tool, op, decided_by})

function grantsOf(runId) {
  let grants = granted.get(runId);
  if (!grants) {
    grants = new Map();
    granted.set(runId, grants);
  }
  return grants;
}

/** A card arrived: its `run_granted` is the server's list of the run's unused grants. */
export function noteCard(card) {
  const runId = str(card.run_id);
  if (!runId || !Array.isArray(card.run_granted)) return;
  const grants = grantsOf(runId);
  grants.clear();
  for (const g of card.run_granted) {
    if (g && typeof g.id === 'string') grants.set(g.id, { id: g.id, tool: str(g.tool), op: str(g.op), decided_by: str(g.decided_by) });
  }
}

/** A card left the inbox: approved ones become grants of their run; anything else ends one. */
export function noteRemoved(msg) {
  const runId = str(msg.run_id);
  if (!runId) return;
  const grants = grantsOf(runId);
  if (msg.status === 'approved') {
    grants.set(msg.id, { id: msg.id, tool: str(msg.tool), op: str(msg.op), decided_by: str(msg.decided_by) });
  } else {
    grants.delete(msg.id);
  }
}

/** The run ended (we stopped it): it holds nothing any more. */
export const forgetRun = (runId) => granted.delete(runId);

export const grantsOfRun = (runId) => Array.from((granted.get(runId) || new Map()).values());

/** "sign_document · sign" */
export const callLabel = (c) => [c.tool || 'request', c.op].filter(Boolean).join(' · ');

/** What stopping `runId` withdraws, besides `exceptEntry`: its other pending cards and its grants. */
export function withdrawnBy(runId, pendingEntries, exceptEntry) {
  const pending = pendingEntries.filter((e) => e !== exceptEntry).map((e) => `${callLabel(e.card)} (waiting for a decision)`);
  const grants = grantsOfRun(runId).map((g) => `${callLabel(g)} (approved${g.decided_by ? ` by ${g.decided_by}` : ''}, not yet run)`);
  return [...pending, ...grants];
}

/** A short, readable handle for a run id: the first block of its UUID. */
export const shortRun = (runId) => str(runId).split('-')[0] || 'unknown';
