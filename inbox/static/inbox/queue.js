/* The compact queue: one line per card — risk, tool, patient, ward, time left,
 * claim — grouped by patient (a run's cards kept together inside), sortable by risk or
 * time left, filterable by ward, tool and risk, searchable by patient_ref, a page of
 * PAGE_SIZE lines at a time so 500 pending cards stay smooth. Opening a line builds and
 * shows the full card (and the other open cards of its run) in the detail pane: the
 * card-list section, where every other card is hidden.
 *
 * The server sends the cards in pages of 100 (list.js): the queue says how many of the
 * total are loaded, and loads the next page when the reviewer reaches the end of what is
 * loaded (scrolling to the "Load more" button, pressing it, or j past the last line). One
 * sighting of the button asks for one page, and a page on its way answers every ask
 * meanwhile: the scroll that brings the button into view and a press of it ask once.
 *
 * Its search and filters are answered by the server over every pending card the reviewer
 * may see (search.js), in the same pages: the queue then lists what matched, in the
 * server's order (the exact patient first), with how many matched in all. Sorting by time
 * left orders the loaded lines, which the queue says while more are on the server.
 *
 * The cards stay owned by list.js/card.js; this module only reads their entries, and
 * follows the list through the `inbox:change` and `inbox:select` events list.js sends. */
import { claimAt } from './claim.js';
import { h } from './dom.js';
import { listEl, root } from './page.js';
import { dropBeyondPages, entriesOfRun, loadMore, move, orderedEntries, pagingState, reorder, select, selectedEntry, showCards, upsert } from './list.js';
import { actionLabel, leadingValues } from './labels.js';
import { lockedOf } from './locked.js';
import { revealed, revealedText } from './reveal.js';
import { shortRun } from './runs.js';
import { fetchFilterOptions, found, moreFound, runSearch } from './search.js';
import { pageBlockedReason } from './socket.js';
import { onSettingsChange, view } from './settings.js';
import { isObj, patientContext, str } from './values.js';

export const PAGE_SIZE = 50;
const RISK_TEXT = { 0: 'High', 1: 'Low', 2: 'No tier' };
// How long typing in the search waits for the next key before asking the server.
const SEARCH_DEBOUNCE_MS = 200;
// How long the queue waits after the pending cards changed before asking its search again.
const REFRESH_DEBOUNCE_MS = 500;
// The filter options are asked again at most this often (when a filter is opened).
const OPTIONS_EVERY_MS = 5000;

const part = (testid) => (root ? root.querySelector(`[data-testid="${testid}"]`) : null);
const els = {};
const state = { patient_ref: '', ward: '', tool: '', risk: '', sort: 'risk', page: 0, openRun: null };
const rows = new Map(); // approval id -> { el, button, parts, json }
const groups = new Map(); // patient key -> header element
let shownIds = []; // every id that passes the filters, in queue order (all pages)
let openEls = new Set();
let lastAt = 0; // where the last opened line was, so j resumes there after its card is decided
let scheduled = false;
let atLastPage = true; // the queue shows its last page of loaded lines
let moreSighted = false; // the "Load more" button came on screen, and no page was asked for since
let searchTimer = null;
let refreshTimer = null;
let searchedAt = ''; // the pending cards as the search's last answer found them (total and count)
const serverOptions = { wards: [], tools: [], at: -Infinity };

// ---------------------------------------------------------------- what a card says in the queue

export const wardOf = (card) => (isObj(card.session) ? str(card.session.care_unit) : '');
export const patientOf = (card) => str(patientContext(card).patient_ref);


function buildRow(entry) {
  const parts = {
    risk: h('span', { class: 'qrow__risk badge', 'data-testid': 'queue-risk' }),
    tool: h('span', { class: 'qrow__tool', 'data-testid': 'queue-tool' }),
    values: h('span', { class: 'qrow__values', 'data-testid': 'queue-values' }),
    patient: h('span', { class: 'qrow__patient', 'data-testid': 'queue-patient' }),
    ward: h('span', { class: 'qrow__ward', 'data-testid': 'queue-ward' }),
    claim: h('span', { class: 'qrow__claim', 'data-testid': 'queue-claim' }),
    mine: h('span', { class: 'qrow__mine', 'data-testid': 'queue-my-approval', hidden: true }),
    time: h('span', { class: 'qrow__time', 'data-testid': 'queue-time' }),
  };
  // The line's accessible name is its visible text (axe: label-content-name-mismatch), with the
  // words a listener needs that the eye gets from the badge's colour kept visually hidden.
  const button = h('button', { type: 'button', class: 'qrow', 'data-testid': 'queue-open' },
    parts.risk, h('span', { class: 'visually-hidden' }, ' risk,'), ' ', h('span', { class: 'qrow__what' }, parts.tool, ' ', parts.values), ' ', h('span', { class: 'qrow__who' }, parts.patient, ' ', parts.ward), ' ', parts.claim, ' ', parts.mine, ' ', parts.time);
  const el = h('li', { class: 'qrow-item', 'data-testid': 'queue-row', 'data-approval-id': entry.id }, button);
  const row = { el, button, parts, json: '', time: '', claimUntil: 0 };
  rows.set(entry.id, row);
  return row;
}

/** Write the card into its line; again only when the card changed or the claim shown on it ran out at `now`. */
function fillRow(row, entry, now) {
  if (row.json === entry.json && !(row.claimUntil && row.claimUntil <= now)) return;
  row.json = entry.json;
  const card = entry.card;
  const { parts } = row;
  const tier = ['high', 'low', 'none'][entry.tierRank];
  row.el.dataset.tier = tier;
  parts.risk.textContent = entry.kind === 'clarification' && tier === 'none' ? 'Question' : RISK_TEXT[entry.tierRank];
  parts.risk.className = `qrow__risk badge badge--${entry.kind === 'clarification' && tier === 'none' ? 'question' : tier}`;
  // What the call does in clinical words, and its leading values (the drug, the dose): the tool's
  // own name is in the Tool filter and on the card's technical details.
  parts.tool.textContent = revealedText(actionLabel(str(card.tool), str(card.op)) || 'Unknown request');
  showValues(parts.values, leadingValues(card.args, lockedOf(card)));
  parts.patient.textContent = revealedText(patientOf(card) || 'No patient ref');
  const ward = wardOf(card);
  parts.ward.textContent = ward ? revealedText(ward) : '';
  parts.ward.hidden = !ward;
  // A live claim only, as the card reads it (claim.js): one that ran out goes on the tick (tickQueue).
  const claim = claimAt(card, now);
  row.claimUntil = claim.live ? claim.until : 0;
  parts.claim.textContent = claim.mine ? 'You are reviewing' : claim.live ? `${revealedText(claim.holder)} is reviewing` : '';
  parts.claim.hidden = !claim.live;
  // Four eyes: this reviewer's approval is in, the card waits for another (quorum.js).
  parts.mine.textContent = entry.myApprovalCount;
  parts.mine.hidden = !entry.myApprovalCount;
}

function fillTime(row, entry) {
  if (row.time === entry.countdownText) return;
  row.time = entry.countdownText;
  row.parts.time.textContent = entry.countdownText;
  row.el.classList.toggle('is-urgent', entry.urgent);
  row.el.classList.toggle('is-expired', entry.expired);
}

// ---------------------------------------------------------------- filter, sort, group

const byTimeLeft = (a, b) => (a.expiresMs === b.expiresMs ? 0 : a.expiresMs < b.expiresMs ? -1 : 1)
  || a.tierRank - b.tierRank || a.requestedMs - b.requestedMs;

/** Sorted, then grouped by patient (in the order of each patient's first card), a run's cards together inside. */
function queueOrder(entries) {
  const sorted = state.sort === 'time' ? entries.slice().sort(byTimeLeft) : entries; // list.js order is risk first
  const byPatient = new Map();
  for (const e of sorted) {
    const key = patientOf(e.card);
    if (!byPatient.has(key)) byPatient.set(key, new Map());
    const runs = byPatient.get(key);
    if (!runs.has(e.runId)) runs.set(e.runId, []);
    runs.get(e.runId).push(e);
  }
  return Array.from(byPatient, ([patient, runs]) => ({ patient, entries: Array.from(runs.values()).flat() }));
}

function groupHeader(patient, count, ward) {
  let el = groups.get(patient);
  if (!el) {
    el = h('li', { class: 'qgroup', 'data-testid': 'queue-group' }, h('span', { class: 'qgroup__patient' }), h('span', { class: 'qgroup__count' }));
    el.dataset.patient = patient;
    groups.set(patient, el);
  }
  el.firstChild.textContent = revealedText(patient || 'No patient ref') + (ward ? ` · ${revealedText(ward)}` : '');
  el.lastChild.textContent = `${count} request${count === 1 ? '' : 's'}`;
  return el;
}

// ---------------------------------------------------------------- render

function scheduleRender() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    render();
  });
}

/** The tool filter's words for `tool`: what it does in clinical words, the name itself where two read alike. */
function toolOptionLabels(tools) {
  const labels = new Map(tools.map((tool) => [tool, actionLabel(tool, '') || tool]));
  const seen = new Map();
  for (const label of labels.values()) seen.set(label, (seen.get(label) || 0) + 1);
  for (const [tool, label] of labels) if (seen.get(label) > 1) labels.set(tool, `${label} (${tool})`);
  return labels;
}

/** The options of a filter: every value the server has pending cards for, the loaded cards' and the chosen one,
 * ordered by what they read as (`label` words the values; each reads as itself without it). */
function refreshOptions(select, values, allText, label = null) {
  values.add(state[select.dataset.filter]);
  values.delete('');
  const labels = label ? label(Array.from(values)) : new Map(Array.from(values, (v) => [v, v]));
  const want = [''].concat(Array.from(values).sort((a, b) => labels.get(a).localeCompare(labels.get(b)) || a.localeCompare(b)));
  const have = Array.from(select.options, (o) => o.value);
  if (want.join('\u0000') === have.join('\u0000')) return;
  const current = select.value;
  select.replaceChildren(...want.map((v) => h('option', { value: v }, v ? revealedText(labels.get(v)) : allText)));
  select.value = want.includes(current) ? current : '';
  if (select.value !== current) state[select.dataset.filter] = '';
}

/** "· amoxicillin · 500 mg · 8-hourly" into `el`, revealed as nodes judged as one line (a right-to-left
 * character is boxed, so a dose's digits keep their order); a cut value ends in the page's own ellipsis. */
function showValues(el, values) {
  const line = values.map((v) => v.text).join(' · ');
  el.replaceChildren(...values.flatMap((v, at) => [at ? ' · ' : '· ', revealed(v.text, line), v.cut ? '…' : '']));
  el.hidden = !values.length;
}

export function render() {
  if (!root || !els.rows) return;
  const all = orderedEntries();
  const known = new Set(all.map((e) => e.id));
  for (const id of Array.from(rows.keys())) if (!known.has(id)) rows.delete(id);
  refreshOptions(els.ward, new Set([...serverOptions.wards, ...all.map((e) => wardOf(e.card))]), 'All wards');
  refreshOptions(els.tool, new Set([...serverOptions.tools, ...all.map((e) => str(e.card.tool))]), 'All tools', toolOptionLabels);
  els.ward.disabled = els.ward.options.length < 2;

  const now = Date.now();
  const searching = isSearching();
  if (searching) refreshSearchSoon();
  const listed = searching ? foundEntries(all) : all;
  const grouped = queueOrder(listed);
  shownIds = grouped.flatMap((g) => g.entries.map((e) => e.id));
  const pages = Math.max(1, Math.ceil(shownIds.length / PAGE_SIZE));
  state.page = Math.min(state.page, pages - 1);
  const from = state.page * PAGE_SIZE;
  const to = Math.min(shownIds.length, from + PAGE_SIZE);

  // The page's lines, with a patient's header before their first line on this page.
  const wanted = [];
  let index = 0;
  for (const group of grouped) {
    const start = index;
    index += group.entries.length;
    if (index <= from || start >= to) continue;
    const count = searching && Number.isInteger(found.totals[group.patient]) ? found.totals[group.patient] : group.entries.length;
    wanted.push(groupHeader(group.patient, count, wardOf(group.entries[0].card)));
    const runSizes = new Map();
    for (const e of group.entries) runSizes.set(e.runId, (runSizes.get(e.runId) || 0) + 1);
    group.entries.forEach((entry, i) => {
      if (start + i < from || start + i >= to) return;
      const row = rows.get(entry.id) || buildRow(entry);
      fillRow(row, entry, now);
      fillTime(row, entry);
      const inRun = runSizes.get(entry.runId) > 1;
      row.el.dataset.run = inRun ? shortRun(entry.runId) : '';
      row.el.title = inRun ? `Run ${shortRun(entry.runId)}: ${runSizes.get(entry.runId)} open cards` : '';
      const open = entry.runId === state.openRun;
      row.el.classList.toggle('is-open', open);
      if (open && selectedEntry() === entry) row.button.setAttribute('aria-current', 'true');
      else row.button.removeAttribute('aria-current');
      wanted.push(row.el);
    });
  }
  // Move only what is out of place (a focused line keeps its focus), then drop the rest.
  let cursor = els.rows.firstElementChild;
  for (const el of wanted) {
    if (el === cursor) cursor = cursor.nextElementSibling;
    else els.rows.insertBefore(el, cursor);
  }
  while (cursor) {
    const next = cursor.nextElementSibling;
    cursor.remove();
    cursor = next;
  }

  els.range.textContent = searching ? searchRange(from, to, listed) : shownIds.length
    ? `${from + 1}–${to} of ${shownIds.length}` : 'Nothing waiting';
  els.prev.disabled = state.page === 0;
  els.next.disabled = state.page >= pages - 1;
  els.pager.hidden = pages < 2;
  atLastPage = state.page >= pages - 1;
  renderPaging();
  nearTheEnd(); // the reviewer paged to the end with the button already on screen
  showOpen();
}

const count = (n) => n.toLocaleString('en-GB');

// ---------------------------------------------------------------- search (answered by the server)

/** The search and filters are the server's to answer: only in the queue, where they are shown. */
const isSearching = () => found.active && view() === 'queue';

/** The matches loaded here, in the server's order; a card decided or gone since is no longer one. */
const foundEntries = (all) => {
  const byId = new Map(all.map((e) => [e.id, e]));
  return found.ids.map((id) => byId.get(id)).filter(Boolean);
};

/** How many match now: the server's count, less the matches that left since it answered. */
const matchTotal = (listed) => Math.max(listed.length, found.total - (found.ids.length - listed.length));

function searchRange(from, to, listed) {
  if (found.error) return `Search failed: ${found.error}`;
  if (found.loading && !found.ids.length) return 'Searching…';
  const waiting = pagingState().total;
  return listed.length
    ? `${from + 1}–${to} of ${count(matchTotal(listed))} (filtered from ${count(waiting)})`
    : `No request matches (${count(waiting)} waiting)`;
}

/** What the pending cards are now, as far as a search's answer can go stale. */
const pendingNow = () => `${pagingState().total}|${orderedEntries().length}`;

/** Add the found cards to the card list (list.js owns them), so their lines open their cards. */
function addFound(cards) {
  for (const card of cards) upsert(card);
  reorder();
}

function searched() {
  searchedAt = pendingNow();
  scheduleRender();
}

/** Ask the server for the search and filters as they are now, from the first page. */
function startSearch() {
  clearTimeout(searchTimer);
  clearTimeout(refreshTimer);
  refreshTimer = null;
  state.page = 0;
  const was = found.active;
  runSearch(state, { onCards: addFound, onDone: searched });
  if (was && !found.active) dropBeyondPages(); // the finds past the loaded pages: their pages bring them again
}

/** The pending cards changed since the search was answered: ask it again, for what is loaded of it. */
function refreshSearchSoon() {
  if (refreshTimer || found.loading || pendingNow() === searchedAt) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    if (!isSearching() || found.loading) return;
    runSearch(state, { onCards: addFound, onDone: searched, covering: found.ids.length });
  }, REFRESH_DEBOUNCE_MS);
}

async function refreshServerOptions() {
  if (performance.now() - serverOptions.at < OPTIONS_EVERY_MS) return;
  serverOptions.at = performance.now();
  const options = await fetchFilterOptions();
  if (!options) return;
  serverOptions.wards = options.wards.map((o) => str(o.value)).filter(Boolean);
  serverOptions.tools = options.tools.map((o) => str(o.value)).filter(Boolean);
  scheduleRender();
}

// ---------------------------------------------------------------- paging

/** The paging the queue shows: of the search when searching, else of the pending cards (list.js). */
function pagingNow() {
  if (!isSearching()) return { ...pagingState(), blocked: '' };
  const shown = foundEntries(orderedEntries()).length;
  return { shown, total: matchTotal(foundEntries(orderedEntries())), more: found.cursor !== null, loading: found.loading, blocked: '' };
}

/** Ask for the next page, of the search or of the pending cards; true when one is on its way (asked now or before). */
function askMore() {
  if (isSearching()) return moreFound({ onCards: addFound, onDone: searched }) || found.loading;
  return loadMore() || pagingState().loading;
}

/** "100 of 10,000 shown", and the way to load more while the server has more (or why it must wait). */
function renderPaging() {
  if (!els.loaded) return;
  const searching = isSearching();
  const { shown, total, more, loading } = pagingNow();
  const sorted = state.sort !== 'risk' ? ` · sorted by time left among these ${count(shown)}` : '';
  els.loaded.textContent = total > shown ? `${count(shown)} of ${count(total)}${searching ? ' matching' : ''} shown${sorted}` : '';
  els.loaded.hidden = total <= shown;
  // Off rather than dead while no page can be asked for (socket down before a poll answers, signed out).
  // Not off while a page is on its way: a press then asks for nothing more (askMore), rather than
  // waiting to ask for the page after it.
  const blocked = more && !loading && !searching ? pageBlockedReason() : '';
  els.more.hidden = !more;
  els.more.disabled = blocked !== '';
  els.moreWhy.textContent = blocked;
  els.moreWhy.hidden = !blocked;
  const next = Math.min(100, total - shown); // a page is 100 cards (inbox/pages.py)
  els.more.textContent = loading ? 'Loading…' : `Load ${next > 0 ? `${count(next)} ` : ''}more`;
}

/** The connection changed (socket.js): whether a page can be asked for may have too. */
export function refreshPaging() {
  renderPaging();
  nearTheEnd(); // the button waited on screen for the connection
}

/** The "Load more" button came on screen below the last loaded lines: fetch the next page, once
 * for that sighting (a page on its way answers it too), so a layout drawn before the button
 * moved off screen asks for nothing more. */
function nearTheEnd() {
  if (moreSighted && (atLastPage || view() !== 'queue') && askMore()) moreSighted = false;
}

/** Show the open run's cards in the detail pane, and nothing else. */
function showOpen() {
  const run = state.openRun ? entriesOfRun(state.openRun) : [];
  showCards(run); // their DOM, built now if this is the first time they are opened
  const now = new Set(run.map((e) => e.el));
  for (const el of openEls) if (!now.has(el)) el.classList.remove('is-open');
  for (const el of now) el.classList.add('is-open');
  openEls = now;
  root.classList.toggle('has-open', now.size > 0);
  if (els.detailEmpty) els.detailEmpty.hidden = now.size > 0;
}

// ---------------------------------------------------------------- actions

function open(id, { focus = true } = {}) {
  const entry = orderedEntries().find((e) => e.id === id);
  if (!entry) return;
  const at = shownIds.indexOf(id);
  if (at >= 0) {
    state.page = Math.floor(at / PAGE_SIZE);
    lastAt = at;
  }
  state.openRun = entry.runId;
  showOpen();
  select(id, { focus });
  scheduleRender();
}

/** j/k: the next or previous line of the queue (in the full layout, the next card). */
export function moveSelection(delta) {
  if (view() !== 'queue') {
    move(delta);
    return;
  }
  if (!shownIds.length) return;
  const current = selectedEntry();
  const at = current ? shownIds.indexOf(current.id) : -1;
  if (delta > 0 && at >= shownIds.length - 2) askMore(); // the next lines are on the server
  // With nothing selected (its card was just decided), j takes the line that took its place.
  const next = Math.max(0, Math.min(shownIds.length - 1, at >= 0 ? at + delta : (delta > 0 ? lastAt : lastAt - 1)));
  open(shownIds[next]);
}

/** Back to the queue (on a phone the detail pane covers it). */
function closeDetail() {
  const entry = selectedEntry();
  state.openRun = null;
  showOpen();
  render();
  const row = entry && rows.get(entry.id);
  if (row && row.el.isConnected) row.button.focus();
  else els.search.focus();
}

/** Once a second: the time left on the lines of this page, and the claims that ran out. */
export function tickQueue(now) {
  if (view() !== 'queue') return;
  for (const entry of orderedEntries()) {
    const row = rows.get(entry.id);
    if (!row || !row.el.isConnected) continue;
    fillRow(row, entry, now);
    fillTime(row, entry);
  }
}

export function initQueue() {
  if (!root) return;
  Object.assign(els, {
    rows: part('queue-rows'), range: part('queue-range'), pager: part('queue-pager'),
    prev: part('queue-prev'), next: part('queue-next'), search: part('queue-search'),
    ward: part('filter-ward'), tool: part('filter-tool'), risk: part('filter-risk'), sort: part('queue-sort'),
    detailEmpty: part('detail-empty'), back: part('detail-back'), loaded: part('queue-loaded'), more: part('queue-more'),
    moreWhy: part('queue-more-why'),
  });
  if (!els.rows) return;
  els.search.maxLength = 120; // a patient ref's longest (inbox/search.py)
  els.search.addEventListener('input', () => {
    state.patient_ref = els.search.value.trim();
    clearTimeout(searchTimer);
    searchTimer = setTimeout(startSearch, SEARCH_DEBOUNCE_MS);
  });
  for (const select of [els.ward, els.tool, els.risk, els.sort]) {
    select.addEventListener('change', () => {
      state[select.dataset.filter] = select.value;
      if (select === els.sort) {
        state.page = 0;
        render();
      } else {
        startSearch();
      }
    });
  }
  for (const select of [els.ward, els.tool]) {
    select.addEventListener('focus', refreshServerOptions);
    select.addEventListener('pointerdown', refreshServerOptions);
  }
  els.more.addEventListener('click', () => {
    askMore();
    moreSighted = false; // the press answers the sighting that showed the button
  });
  // Scrolling down to the button loads the next page too, once the last loaded lines are on screen.
  if ('IntersectionObserver' in window) {
    new IntersectionObserver((seen) => {
      moreSighted = seen[seen.length - 1].isIntersecting;
      nearTheEnd();
    }).observe(els.more);
  }
  els.prev.addEventListener('click', () => { state.page -= 1; render(); });
  els.next.addEventListener('click', () => { state.page += 1; render(); });
  els.rows.addEventListener('click', (ev) => {
    const item = ev.target instanceof Element ? ev.target.closest('[data-testid="queue-row"]') : null;
    if (item) open(item.dataset.approvalId);
  });
  if (els.back) els.back.addEventListener('click', closeDetail);
  listEl.addEventListener('inbox:change', scheduleRender);
  listEl.addEventListener('inbox:select', (ev) => {
    const entry = selectedEntry();
    if (entry && entry.id === ev.detail && entry.runId !== state.openRun && view() === 'queue') {
      state.openRun = entry.runId;
      showOpen();
      scheduleRender();
    }
  });
  onSettingsChange(() => {
    const entry = selectedEntry(); // switching to the queue: the selected card stays open
    if (entry && !state.openRun) state.openRun = entry.runId;
    render();
  });
  refreshServerOptions();
  render();
}
