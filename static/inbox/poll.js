/* The polling fallback: while the inbox websocket is down (Redis out, a proxy in the way)
 * the page re-reads the pending cards from the REST snapshot, every card on every poll. */
import { config } from './page.js';
import { isObj } from './values.js';

const PAGE_SIZE = 500;
const MAX_PAGES = 40; // 20 000 cards: far past any real inbox, and the loop always ends

/** Same-origin path and query of a `next` link (DRF makes it absolute, maybe with the wrong scheme behind a proxy). */
function pathOf(link) {
  const url = new URL(link, location.href);
  return url.origin === location.origin ? `${url.pathname}${url.search}` : null;
}

/** Every pending card the reviewer may see. Throws an Error carrying `status` on an HTTP failure. */
export async function fetchPendingCards() {
  const cards = [];
  let url = `${config.cardsUrl}?limit=${PAGE_SIZE}`;
  for (let page = 0; url && page < MAX_PAGES; page += 1) {
    const res = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
    if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
    const data = await res.json();
    if (!isObj(data) || !Array.isArray(data.results)) throw new Error('Unexpected answer from the inbox snapshot.');
    cards.push(...data.results);
    url = typeof data.next === 'string' ? pathOf(data.next) : null;
  }
  return cards;
}
