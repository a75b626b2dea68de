/* The compact queue (issue 14): one line per card — risk, tool, patient, ward, time left,
 * claim — grouped by patient (a run's cards kept together inside), sortable by risk or
 * time left, filterable by ward, tool and risk, searchable by patient_ref, a page of
 * PAGE_SIZE lines at a time so 500 pending cards stay smooth. Opening a line builds and
 * shows the full card (and the other open cards of its run) in the detail pane: the
 * card-list section, where every other card is hidden.
 *
 * The server sends the cards in pages of 100 (list.js): the queue says how many of the
 * total are loaded, loads the next page when the reviewer reaches the end of what is
 * loaded (scrolling to the "Load more" button, pressing it, or j past the last line),
 * and its filters, search and sort apply to the loaded cards only, which it says.
 *
 * The cards stay owned by list.js/card.js; this module only reads their entries, and
 * follows the list through the `inbox:change` and `inbox:select` events list.js sends. */
import { claimAt } from './claim.js';
import { h } from './dom.js';
import { listEl, root } from './page.js';
import { entriesOfRun, loadMore, move, orderedEntries, pagingState, select, selectedEntry, showCards } from './list.js';
import { revealedText } from './reveal.js';
import { shortRun } from './runs.js';
import { pageBlockedReason } from './socket.js';
import { onSettingsChange, view } from './settings.js';
import { isObj, patientContext, str } from './values.js';

export const PAGE_SIZE = 50;
const RISK_TEXT = { 0: 'High', 1: 'Low', 2: 'No tier' };
const RISK_VALUE = { high: 0, low: 1, none: 2 };

const part = (testid) => (root ? root.querySelector(`[data-testid="${testid}"]`) : null);
const els = {};
const state = { q: '', ward: '', tool: '', risk: '', sort: 'risk', page: 0, openRun: null };
const rows = new Map(); // approval id -> { el, button, parts, json }
const groups = new Map(); // patient key -> header element
let shownIds = []; // every id that passes the filters, in queue order (all pages)
let openEls = new Set();
let lastAt = 0; // where the last opened line was, so j resumes there after its card is decided
let scheduled = false;
let atLastPage = true; // the queue shows its last page of loaded lines
let moreInView = false; // the reviewer has scrolled down to the "Load more" button

// ---------------------------------------------------------------- what a card says in the queue

export const wardOf = (card) => (isObj(card.session) ? str(card.session.care_unit) : '');
export const patientOf = (card) => str(patientContext(card).patient_ref);


function buildRow(entry) {
  const parts = {
    risk: h('span', { class: 'qrow__risk badge', 'data-testid': 'queue-risk' }),
    tool: h('span', { class: 'qrow__tool', 'data-testid': 'queue-tool' }),
    patient: h('span', { class: 'qrow__patient', 'data-testid': 'queue-patient' }),
    ward: h('span', { class: 'qrow__ward', 'data-testid': 'queue-ward' }),
    claim: h('span', { class: 'qrow__claim', 'data-testid': 'queue-claim' }),
    mine: h('span', { class: 'qrow__mine', 'data-testid': 'queue-my-approval', hidden: true }),
    time: h('span', { class: 'qrow__time', 'data-testid': 'queue-time' }),
  };
  // The line's accessible name is its visible text (axe: label-content-name-mismatch), with the
  // words a listener needs that the eye gets from the badge's colour kept visually hidden.
  const button = h('button', { type: 'button', class: 'qrow', 'data-testid': 'queue-open' },
    parts.risk, h('span', { class: 'visually-hidden' }, ' risk,'), ' ', parts.tool, ' ', h('span', { class: 'qrow__who' }, parts.patient, ' ', parts.ward), ' ', parts.claim, ' ', parts.mine, ' ', parts.time);
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
  parts.tool.textContent = revealedText([str(card.tool) || 'unknown tool', str(card.op)].filter(Boolean).join(' · '));
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

function matches(entry) {
  const card = entry.card;
  if (state.q && !patientOf(card).toLowerCase().includes(state.q)) return false;
  if (state.ward && wardOf(card) !== state.ward) return false;
  if (state.tool && str(card.tool) !== state.tool) return false;
  if (state.risk && entry.tierRank !== RISK_VALUE[state.risk]) return false;
  return true;
}

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

function refreshOptions(select, values, allText) {
  const want = [''].concat(Array.from(values).sort());
  const have = Array.from(select.options, (o) => o.value);
  if (want.join('\u0000') === have.join('\u0000')) return;
  const current = select.value;
  select.replaceChildren(...want.map((v) => h('option', { value: v }, v ? revealedText(v) : allText)));
  select.value = want.includes(current) ? current : '';
  if (select.value !== current) state[select.dataset.filter] = '';
}

export function render() {
  if (!root || !els.rows) return;
  const all = orderedEntries();
  const known = new Set(all.map((e) => e.id));
  for (const id of Array.from(rows.keys())) if (!known.has(id)) rows.delete(id);
  refreshOptions(els.ward, new Set(all.map((e) => wardOf(e.card)).filter(Boolean)), 'All wards');
  refreshOptions(els.tool, new Set(all.map((e) => str(e.card.tool)).filter(Boolean)), 'All tools');
  els.ward.disabled = els.ward.options.length < 2;

  const now = Date.now();
  const grouped = queueOrder(all.filter(matches));
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
    wanted.push(groupHeader(group.patient, group.entries.length, wardOf(group.entries[0].card)));
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

  els.range.textContent = shownIds.length
    ? `${from + 1}–${to} of ${shownIds.length}${shownIds.length !== all.length ? ` (filtered from ${all.length})` : ''}`
    : (all.length ? `No request matches (${all.length} waiting)` : 'Nothing waiting');
  els.prev.disabled = state.page === 0;
  els.next.disabled = state.page >= pages - 1;
  els.pager.hidden = pages < 2;
  atLastPage = state.page >= pages - 1;
  renderPaging();
  nearTheEnd(); // the reviewer paged to the end with the button already on screen
  showOpen();
}

const count = (n) => n.toLocaleString('en-GB');

/** "100 of 10,000 shown", and the way to load more while the server has more (or why it must wait). */
function renderPaging() {
  if (!els.loaded) return;
  const { shown, total, more, loading } = pagingState();
  const filtered = Boolean(state.q || state.ward || state.tool || state.risk);
  els.loaded.textContent = total > shown
    ? `${count(shown)} of ${count(total)} shown${filtered || state.sort !== 'risk' ? ` · search, filters and sort apply to these ${count(shown)}` : ''}`
    : '';
  els.loaded.hidden = total <= shown;
  // Off rather than dead while no page can be asked for (socket down before a poll answers, signed out).
  const blocked = more && !loading ? pageBlockedReason() : '';
  els.more.hidden = !more;
  els.more.disabled = loading || blocked !== '';
  els.moreWhy.textContent = blocked;
  els.moreWhy.hidden = !blocked;
  const next = Math.min(100, total - shown); // a page is 100 cards (approvals/inbox_pages.py)
  els.more.textContent = loading ? 'Loading…' : `Load ${next > 0 ? `${count(next)} ` : ''}more`;
}

/** The connection changed (socket.js): whether a page can be asked for may have too. */
export function refreshPaging() {
  renderPaging();
  nearTheEnd(); // the button waited on screen for the connection
}

/** The "Load more" button is on screen below the last loaded lines: fetch the next page. */
function nearTheEnd() {
  if (moreInView && (atLastPage || view() !== 'queue')) loadMore();
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
  if (delta > 0 && at >= shownIds.length - 2) loadMore(); // the next lines are on the server
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
  els.search.addEventListener('input', () => {
    state.q = els.search.value.trim().toLowerCase();
    state.page = 0;
    render();
  });
  for (const select of [els.ward, els.tool, els.risk, els.sort]) {
    select.addEventListener('change', () => {
      state[select.dataset.filter] = select.value;
      state.page = 0;
      render();
    });
  }
  els.more.addEventListener('click', loadMore);
  // Scrolling down to the button loads the next page too, once the last loaded lines are on screen.
  if ('IntersectionObserver' in window) {
    new IntersectionObserver((seen) => {
      moreInView = seen[seen.length - 1].isIntersecting;
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
  render();
}
