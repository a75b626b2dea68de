/* The polling fallback: while the inbox websocket is down (Redis out, a proxy in the way)
 * the page reads the pending cards from the REST snapshot instead, in the pages the socket
 * sends (inbox/pages.py: at most 100 cards each, a total, a signed cursor). */
import { config } from './page.js';
import { isObj } from './values.js';

// A poll re-reads what the reviewer has loaded, a page at a time; this bounds one poll's requests.
const MAX_PAGES_PER_POLL = 20;

/** The page after `cursor` (null: the first) as {cards, total, cursor}. Throws an Error carrying `status`
 * (and the server's `detail`) on an HTTP failure. */
export async function fetchCardPage(cursor) {
  const url = cursor === null ? config.cardsUrl : `${config.cardsUrl}?cursor=${encodeURIComponent(cursor)}`;
  const res = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  let data = null;
  try { data = await res.json(); } catch (_) { /* not JSON: judged below */ }
  if (!res.ok) {
    const detail = isObj(data) && typeof data.detail === 'string' ? data.detail : `HTTP ${res.status}`;
    throw Object.assign(new Error(detail), { status: res.status });
  }
  if (!isObj(data) || !Array.isArray(data.cards)) throw new Error('Unexpected answer from the inbox snapshot.');
  return data;
}

/** A poll: the first pages again, until they cover the `shown` cards the reviewer has loaded (at
 * least one page), as one snapshot {cards, total, cursor} whose cursor continues after them. */
export async function fetchPolledPages(shown) {
  let page = await fetchCardPage(null);
  const cards = [...page.cards];
  for (let n = 1; typeof page.cursor === 'string' && cards.length < shown && n < MAX_PAGES_PER_POLL; n += 1) {
    page = await fetchCardPage(page.cursor);
    cards.push(...page.cards);
  }
  return { cards, total: page.total, cursor: page.cursor };
}
