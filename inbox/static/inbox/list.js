/* The keyed card list: one entry per approval id owns its DOM node (built when the card
 * is first shown: card.js), a change touches only that node, and reordering moves only
 * the nodes that are out of place. Also the selection that j/k move.
 *
 * The server sends the pending cards in pages (inbox/pages.py): the snapshot
 * is the first page, with the total and a cursor; loadMore() asks for the next. Each
 * page covers a stretch of the server's order (after the last card of the page before,
 * up to its own last card), so a loaded card in that stretch that the page lacks is
 * gone. compareEntries is the server's order, for that reason. */
import { applyCard, applyRun, buildCardDom, cardLabel, createEntry, kindOf } from './card.js';
import { syncControls } from './controls.js';
import { timeOf } from './countdown.js';
import { announce } from './feedback.js';
import { baseTitle, countEl, emptyEl, listEl, summaryEl } from './page.js';
import { noteCard, withdrawnBy } from './runs.js';
import { onSettingsChange, view } from './settings.js';
import { requestPage } from './socket.js';
import { isObj, str } from './values.js';
import { keepWithdrawn, withdrawnPhrase } from './withdrawn.js';

const entries = new Map(); // approval id -> entry (card data + the DOM it owns)
let order = []; // ids in display order
let selectedId = null;
let lastIndex = 0; // where the selection was, so j/k resume there after a removal
let loaded = false; // until the first snapshot, "nothing waiting" would be a lie
// Ids this page decided successfully. A snapshot built just before our decision
// committed must not resurrect the card (deciding it again could only fail).
const decidedHere = new Set();
// total: the server's count of the cards waiting for this reviewer; cursor: where the next
// page starts (null: none left); asked: the cursor of a page asked for and not yet come;
// last: the sort key of the last card the pages brought.
const paging = { total: 0, cursor: null, asked: null, last: null };

export const shownEntries = () => entries.values();
export const isShown = (entry) => entries.get(entry.id) === entry;
/** The cards of the first pages (a snapshot or a poll) this page has not had: arrivals, once a first snapshot is in. */
export const arrivals = (cards) => (loaded && Array.isArray(cards)
  ? cards.filter((card) => hasId(card) && !entries.has(card.id) && !decidedHere.has(card.id)) : []);
export const selectedEntry = () => (selectedId !== null ? entries.get(selectedId) : null);
/** Every pending card, in display order (most urgent first, a run's cards together). */
export const orderedEntries = () => order.map((id) => entries.get(id)).filter(Boolean);
/** The pending cards of one run shown here, in display order. */
export const entriesOfRun = (runId) => order.map((id) => entries.get(id)).filter((e) => e && e.runId === runId);

const hasId = (card) => isObj(card) && typeof card.id === 'string' && card.id !== '';
const isPendingCard = (card) => hasId(card) && (card.status === undefined || card.status === 'pending');

// ---------------------------------------------------------------- server frames

/** Add or patch one card; true if the list may need reordering. */
export function upsert(card) {
  if (!hasId(card)) return false;
  if (!isPendingCard(card)) {
    removeCard(card.id, { status: card.status, decided_by: card.decided_by });
    return false;
  }
  if (decidedHere.has(card.id)) return false;
  noteCard(card);
  const existing = entries.get(card.id);
  if (existing && existing.gone) return false; // withdrawn: it never comes back
  if (existing) {
    if (kindOf(card) !== existing.kind) {
      // A different kind of card under the same id: rebuild it rather than patch.
      dropEntry(existing);
    } else {
      applyCard(existing, card);
      return true;
    }
  }
  entries.set(card.id, createEntry(card));
  return true;
}

/** The first page of the pending cards, on every (re)connect; or from a poll, the first pages, covering what was loaded. */
export function applySnapshot(cards, frame = null) {
  loaded = true;
  paging.asked = null; // a page asked on an older socket never comes
  const list = Array.isArray(cards) ? cards : [];
  applyPage(list, frame || { total: list.length, cursor: null }, null);
}

/** A later page; ignored unless it answers the page we asked for. */
export function applyNextPage(frame) {
  if (paging.asked === null || frame.after !== paging.asked || !Array.isArray(frame.cards)) return;
  paging.asked = null;
  applyPage(frame.cards, frame, paging.last);
}

/** The server refused our page request (an error frame): the list stays as it is. */
export function pageRefused() {
  if (paging.asked === null) return false;
  paging.asked = null;
  listEl.dispatchEvent(new CustomEvent('inbox:change'));
  return true;
}

/** Ask for the next page, if there is one and none is on its way; true if asked. */
export function loadMore() {
  if (paging.cursor === null || paging.asked !== null || !requestPage(paging.cursor)) return false;
  paging.asked = paging.cursor;
  listEl.dispatchEvent(new CustomEvent('inbox:change'));
  return true;
}

/** Forget the cards past the loaded pages that nobody is working on (a search's finds, early pushes):
 * the page covering them brings them again, and "100 of 330 shown" counts the pages loaded. */
export function dropBeyondPages() {
  if (paging.cursor === null || paging.last === null) return;
  let dropped = false;
  for (const entry of Array.from(entries.values())) {
    if (entry.gone || isWorkingOn(entry) || compareEntries(entry, paging.last) <= 0) continue;
    dropEntry(entry);
    dropped = true;
  }
  if (dropped) reorder();
}

/** A push that changed the count says the new total. */
export function noteTotal(total) {
  if (Number.isInteger(total) && total >= 0) paging.total = total;
}

/** The cards still waiting here: a withdrawn one kept on screen (withdrawn.js) waits for nothing. */
function waitingCount() {
  let n = 0;
  for (const entry of entries.values()) if (!entry.gone) n += 1;
  return n;
}

/** What the queue says about the paging: "100 of 10,000 shown", and whether more can be loaded. */
export const pagingState = () => ({
  shown: waitingCount(), total: Math.max(paging.total, waitingCount()), more: paging.cursor !== null, loading: paging.asked !== null,
});

/** The sort key of a card as it came from the server (the fields compareEntries reads). */
const keyOf = (card) => ({
  id: card.id, escalated: Boolean(str(card.escalated_at)), expiresMs: timeOf(card.expires_at, Infinity),
  tierRank: { high: 0, low: 1 }[card.hitl_tier] ?? 2,
});

/** Apply a page covering the server's order after `from` (null: from the start) up to its last card
 * (or to the end, when no page follows). */
function applyPage(list, frame, from) {
  const more = typeof frame.cursor === 'string' && frame.cursor !== '';
  const upTo = more && list.length ? keyOf(list[list.length - 1]) : null;
  const keep = new Set(list.filter(isPendingCard).map((c) => c.id));
  for (const entry of Array.from(entries.values())) {
    if (keep.has(entry.id) || entry.gone) continue; // a withdrawn card stays until dismissed
    const covered = (from === null || compareEntries(entry, from) > 0) && (upTo === null || compareEntries(entry, upTo) <= 0);
    if (covered) removeCard(entry.id, { status: null, decided_by: null }, { refresh: false });
    // A snapshot starts the list again: past its first page, only the cards being worked on stay.
    else if (from === null && !isWorkingOn(entry)) dropEntry(entry);
  }
  for (const card of list) upsert(card);
  paging.cursor = more ? frame.cursor : null;
  paging.last = upTo;
  paging.total = 0; // a frame without a total: the cards here are all there is
  noteTotal(frame.total);
  reorder();
}

/** The server says this card is gone (decided elsewhere, consumed, expired, withdrawn). */
export function removeCard(id, info, { refresh = true } = {}) {
  const entry = entries.get(id);
  if (!entry || (entry.gone && !entry.gone.unsure)) return;
  if (entry.gone && info && info.status !== 'withdrawn') {
    // Our decision came too late and this says why: decided or expired, it goes as any other would.
    announce(`${removalPhrase(info, entry.card)}: ${cardLabel(entry.card)} was removed from your inbox.`, 'info');
    dropEntry(entry);
    if (refresh) reorder();
    return;
  }
  if (info && info.status === 'withdrawn' && entry.el && (entry.gone || entry.busy || isWorkingOn(entry))) {
    // Its run ended under the reviewer: the card stays, with what they typed, saying why.
    keepWithdrawn(entry, info);
    syncControls(entry);
    if (entry.busy) entry.removedInfo = info; // our decision's answer says the rest
    else announce(`${entry.gone.text}: ${cardLabel(entry.card)}. What you typed is kept on the card.`, 'error');
    if (refresh) reorder();
    return;
  }
  if (entry.busy) {
    // Our own decision is in flight; its answer says who won and announces it.
    entry.removedInfo = info;
  } else if (isWorkingOn(entry)) {
    announce(`${removalPhrase(info, entry.card)}: ${cardLabel(entry.card)} was removed from your inbox.`, info && info.status === 'expired' ? 'error' : 'info');
  }
  dropEntry(entry);
  if (refresh) reorder();
}

export function removalPhrase(info, card) {
  const by = info && typeof info.decided_by === 'string' && info.decided_by ? info.decided_by : null;
  // A clarification is answered or declined, not approved or rejected.
  const question = card && card.reason_code === 'clarification';
  const [yes, no] = question ? ['Answered', 'Declined'] : ['Approved', 'Rejected'];
  switch (info && info.status) {
    case 'approved': return by ? `${yes} by ${by}` : `${yes} elsewhere`;
    case 'rejected': return by ? `${no} by ${by}` : `${no} elsewhere`;
    case 'expired': return 'Expired';
    case 'consumed': return 'Already used by the agent';
    case 'withdrawn': return withdrawnPhrase(info);
    default: return 'No longer waiting';
  }
}

function isWorkingOn(entry) {
  return entry.id === selectedId || entry.mode !== 'view' || entry.dirty || Boolean(entry.el && entry.el.contains(document.activeElement));
}

// ---------------------------------------------------------------- our own decisions

/** This page decided the card: a later snapshot must not bring it back. */
export const markDecidedHere = (id) => decidedHere.add(id);

/** The reviewer is done with a withdrawn card they were working on. */
export function dismissWithdrawn(entry) {
  if (!entry.gone || !isShown(entry)) return;
  dropEntry(entry);
  reorder();
}

/** Our decision settled the card one way or another: take it off the list. */
export function discard(entry) {
  if (isShown(entry)) dropEntry(entry);
  reorder(); // its run's other cards now say something else
}

// ---------------------------------------------------------------- DOM bookkeeping

function dropEntry(entry) {
  const hadFocus = Boolean(entry.el && entry.el.contains(document.activeElement));
  const index = order.indexOf(entry.id);
  if (index >= 0) order.splice(index, 1);
  if (selectedId === entry.id) {
    selectedId = null;
    lastIndex = Math.max(0, index);
  }
  entries.delete(entry.id);
  if (entry.el) entry.el.remove();
  if (hadFocus) listEl.focus({ preventScroll: true });
}

/** The server's order (inbox/pages.py): escalated first, then risk, then the soonest deadline, then the id. */
function compareEntries(a, b) {
  return (b.escalated === true) - (a.escalated === true) || a.tierRank - b.tierRank
    || (a.expiresMs === b.expiresMs ? 0 : a.expiresMs < b.expiresMs ? -1 : 1)
    || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Most urgent first, with the cards of one run kept together behind their most urgent card. */
function groupedByRun(sorted) {
  const byRun = new Map();
  for (const entry of sorted) {
    if (!byRun.has(entry.runId)) byRun.set(entry.runId, []);
    byRun.get(entry.runId).push(entry);
  }
  return Array.from(byRun.values());
}

/** Tell each card where it sits in its run and what stopping the run would withdraw. */
function refreshRuns(groups) {
  for (const group of groups) {
    group.forEach((entry, i) => {
      const pos = group.length === 1 ? 'only' : i === 0 ? 'first' : i === group.length - 1 ? 'last' : 'middle';
      const withdrawn = withdrawnBy(entry.runId, group, entry);
      applyRun(entry, { pos, withdrawn });
    });
  }
}

/** Sort, then move only the nodes that are out of place (usually none). */
export function reorder() {
  const groups = groupedByRun(Array.from(entries.values()).sort(compareEntries));
  const sorted = groups.flat();
  order = sorted.map((e) => e.id);
  if (view() === 'full') for (const entry of sorted) buildCardDom(entry); // that layout shows every loaded card
  refreshRuns(groups);
  let cursor = listEl.firstElementChild;
  for (const entry of sorted) {
    if (!entry.el) continue; // not shown yet: no DOM to place
    if (entry.el === cursor) cursor = cursor.nextElementSibling;
    else listEl.insertBefore(entry.el, cursor);
  }
  refreshSummary();
  listEl.dispatchEvent(new CustomEvent('inbox:change')); // the queue (queue.js) follows
}

/** Build the DOM of cards about to be shown (the queue's open run), and put it in place. */
export function showCards(list) {
  let built = false;
  for (const entry of list) built = buildCardDom(entry) || built;
  if (built) reorder();
}

export function refreshSummary() {
  const n = waitingCount();
  const { total } = pagingState();
  emptyEl.hidden = !loaded || total > 0;
  listEl.hidden = entries.size === 0; // a withdrawn card kept on screen is shown too
  // Only long lists skip off-screen rendering; short ones stay fully painted (print, screenshots).
  listEl.classList.toggle('cards--long', n > 40);
  countEl.textContent = String(total);
  let high = 0;
  let questions = 0;
  for (const e of entries.values()) {
    if (e.gone) continue;
    if (e.tierRank === 0) high += 1;
    if (e.kind === 'clarification') questions += 1;
  }
  const parts = [];
  if (high) parts.push(`${high} high risk`);
  if (questions) parts.push(`${questions} need${questions === 1 ? 's' : ''} an answer`);
  summaryEl.textContent = parts.join(' · ') + (parts.length && total > n ? ` among the ${n} shown` : '');
  document.title = total ? `(${total}) ${baseTitle}` : baseTitle;
}

// ---------------------------------------------------------------- selection

export function select(id, { focus = true } = {}) {
  if (id === selectedId && !focus) return; // already selected, nothing to move
  const prev = selectedEntry();
  if (prev && prev.id !== id) {
    prev.el.classList.remove('is-selected');
    prev.el.removeAttribute('aria-current');
  }
  const entry = entries.get(id);
  if (!entry) return;
  if (buildCardDom(entry)) reorder(); // its DOM, the first time it is opened
  selectedId = id;
  entry.el.classList.add('is-selected');
  entry.el.setAttribute('aria-current', 'true');
  listEl.dispatchEvent(new CustomEvent('inbox:select', { detail: id })); // before focusing: the queue shows it
  if (focus) {
    entry.el.focus({ preventScroll: true });
    entry.el.scrollIntoView({ block: 'nearest' });
  }
}

export function move(delta) {
  if (!order.length) return;
  const at = selectedId !== null ? order.indexOf(selectedId) : -1;
  let next;
  if (at >= 0) next = at + delta;
  else next = delta > 0 ? lastIndex : lastIndex - 1; // the card that took the removed one's place
  next = Math.max(0, Math.min(order.length - 1, next));
  select(order[next]);
}

onSettingsChange((name) => {
  if (name === 'view') reorder(); // the full layout builds every loaded card
});
