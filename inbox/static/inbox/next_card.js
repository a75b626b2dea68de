/* After a decision the reviewer is on the next card, ready for a / r, without pressing j:
 * the next line of the queue (or the next card in the full layout), also when that is the
 * first card of another run; the card before when the decided one was the last. Only when
 * the reviewer was still on the decided card: a decision that comes back while they type
 * in the search box leaves them there. */
import { listEl, root } from './page.js';
import { orderedEntries, select } from './list.js';
import { view } from './settings.js';

/** The ids in the order the reviewer sees them: the queue's lines on this page, or every card. */
function seenOrder() {
  if (view() === 'queue' && root) {
    const lines = Array.from(root.querySelectorAll('[data-testid="queue-row"]'), (el) => el.dataset.approvalId);
    if (lines.length) return lines;
  }
  return orderedEntries().map((e) => e.id);
}

/** Called before `entry` is taken off the list: a function that, once it is gone, moves to the card
 * after it. `skipRun`: the decision ends the run, so its other cards go too. */
export function followOn(entry, { skipRun = false } = {}) {
  const ids = seenOrder();
  const at = ids.indexOf(entry.id);
  const after = at >= 0 ? ids.slice(at + 1).concat(ids.slice(0, at).reverse()) : ids;
  return () => {
    const focus = document.activeElement;
    const onIt = !focus || focus === document.body || focus === listEl || (entry.el && entry.el.contains(focus));
    if (!onIt) return;
    const pending = new Map(orderedEntries().filter((e) => !e.gone).map((e) => [e.id, e]));
    const next = after.find((id) => pending.has(id) && !(skipRun && pending.get(id).runId === entry.runId))
      || (at < 0 ? undefined : Array.from(pending.keys()).find((id) => !(skipRun && pending.get(id).runId === entry.runId)));
    if (next !== undefined) select(next);
  };
}
