/* The queue's search and filters, answered by the server over every pending card the reviewer
 * may see (inbox/search.py), not over the pages loaded so far: the queue says how
 * many match in all, and a patient's header how many of theirs, before any scrolling.
 *
 * A search is asked again from its first page whenever it changes; an answer to an older
 * search is dropped. Its cards join the card list (list.js) so a line opens its card as any
 * other; the list of matching ids, in the server's order (the exact patient first), stays
 * here. `refresh` re-reads the first pages of the current search, covering what is loaded,
 * when the pending cards changed under it. */
import { sendJson } from './http.js';
import { config } from './page.js';
import { isObj } from './values.js';

const LIMITS = { patient_ref: 120, ward: 64, tool: 100 }; // the server's (inbox/search.py)
// A refresh re-reads the matches the reviewer has loaded, a page at a time; this bounds its requests.
const MAX_PAGES_PER_REFRESH = 20;

/** What the server answered for the current search; `ids` in its order, `totals` per patient. */
export const found = { active: false, key: '', ids: [], total: 0, totals: {}, cursor: null, loading: false, error: '' };
let asked = 0; // the number of the newest request: an answer to an older one is dropped

const filtersOf = (state) => {
  const params = {};
  for (const name of ['patient_ref', 'ward', 'tool', 'risk']) {
    const value = (state[name] || '').trim();
    if (value) params[name] = LIMITS[name] ? value.slice(0, LIMITS[name]) : value;
  }
  return params;
};

const urlFor = (params, cursor) => {
  const query = new URLSearchParams(params);
  if (cursor) query.set('cursor', cursor);
  return `${config.cardsUrl}?${query}`;
};

async function fetchPage(params, cursor) {
  const { res, data, detail } = await sendJson(urlFor(params, cursor));
  if (!res) throw new Error('Condor did not answer. Check the connection and search again.');
  if (!res.ok || !isObj(data) || !Array.isArray(data.cards)) throw new Error(detail || `The search failed (HTTP ${res.status}).`);
  return data;
}

/** Ask the server for `state`'s search (its first pages, covering `covering` matches); `onCards(cards)`
 * takes the cards that came, then `onDone()` runs. Nothing is asked, and found.active is false, without a filter. */
export async function runSearch(state, { onCards, onDone, covering = 0 }) {
  const params = filtersOf(state);
  const key = JSON.stringify(params);
  const mine = ++asked;
  if (key === '{}') {
    Object.assign(found, { active: false, key, ids: [], total: 0, totals: {}, cursor: null, loading: false, error: '' });
    onDone();
    return;
  }
  const fresh = key !== found.key;
  Object.assign(found, { active: true, key, loading: true, error: '' });
  if (fresh) Object.assign(found, { ids: [], total: 0, totals: {}, cursor: null });
  onDone(); // "Searching…"
  try {
    let page = await fetchPage(params, null);
    const pages = [page];
    let count = page.cards.length;
    for (let n = 1; typeof page.cursor === 'string' && count < covering && n < MAX_PAGES_PER_REFRESH; n += 1) {
      page = await fetchPage(params, page.cursor);
      pages.push(page);
      count += page.cards.length;
    }
    if (mine !== asked) return;
    const cards = pages.flatMap((p) => p.cards);
    onCards(cards);
    Object.assign(found, {
      ids: cards.map((c) => c.id), total: page.total, cursor: typeof page.cursor === 'string' ? page.cursor : null,
      totals: Object.assign({}, ...pages.map((p) => (isObj(p.patient_totals) ? p.patient_totals : {}))), loading: false,
    });
  } catch (err) {
    if (mine !== asked) return;
    Object.assign(found, { loading: false, error: err.message });
  }
  onDone();
}

/** The next page of the current search, if there is one and nothing is on its way; true if asked. */
export function moreFound({ onCards, onDone }) {
  if (!found.active || found.loading || found.cursor === null) return false;
  const params = JSON.parse(found.key);
  const mine = ++asked;
  found.loading = true;
  fetchPage(params, found.cursor).then((page) => {
    if (mine !== asked) return;
    onCards(page.cards);
    const have = new Set(found.ids);
    found.ids.push(...page.cards.map((c) => c.id).filter((id) => !have.has(id)));
    Object.assign(found.totals, isObj(page.patient_totals) ? page.patient_totals : {});
    Object.assign(found, { total: page.total, cursor: typeof page.cursor === 'string' ? page.cursor : null, loading: false, error: '' });
    onDone();
  }, (err) => {
    if (mine !== asked) return;
    Object.assign(found, { loading: false, error: err.message });
    onDone();
  });
  onDone(); // "Loading…"
  return true;
}

/** The wards and tools there are pending cards for, over every card the reviewer may see:
 * {wards: [{value, count}], tools: [...]}, or null when the server did not say. */
export async function fetchFilterOptions() {
  const { res, data } = await sendJson(`${config.cardsUrl}filters/`);
  return res && res.ok && isObj(data) && Array.isArray(data.wards) && Array.isArray(data.tools) ? data : null;
}
