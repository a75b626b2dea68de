/* Condor reviewer inbox: boot and wiring.
 *
 * Cards arrive over the inbox websocket (snapshot / card.added / card.updated /
 * card.removed); decisions go to the REST decision endpoint. Everything the server
 * sends is untrusted clinical data, so the DOM is built with createElement and
 * textContent only — never innerHTML.
 *
 * Built to stay smooth with thousands of cards waiting: the server sends them a page at
 * a time (list.js loads more as the reviewer scrolls), a card's full DOM is built only
 * when it is opened (card.js), a change touches only that node, reordering moves only nodes
 * that are out of place, and one shared 1 s timer rewrites countdown text only when it
 * changes.
 */
import { applyCard, entryAt, showCardError, updateClock } from './card.js';
import { confirmApprove, requestApprove, requestApproveEdited } from './confirm.js';
import { cancelMode, openEdit, openReject, openStop, switchEditAs, syncControls, validateEdit } from './controls.js';
import { initBulk } from './bulk.js';
import { initDecided } from './decided.js';
import { answer, recheckField, reject, stopRun, toggleClaim } from './decisions.js';
import { announce, expireToasts } from './feedback.js';
import { loadFullArgs } from './full_args.js';
import { onShortcutKey, onSubmitKey } from './keyboard.js';
import { applyNextPage, applySnapshot, arrivals, dismissWithdrawn, isShown, noteTotal, pageRefused, pagingState, refreshSummary, removeCard, reorder, select, shownEntries, upsert } from './list.js';
import { listEl, root } from './page.js';
import { askForPermissionOnce, notifyIfHidden } from './notify.js';
import { initQueue, refreshPaging, tickQueue } from './queue.js';
import { noteRemoved } from './runs.js';
import { initSettings } from './settings.js';
import { initSkipLink } from './skip.js';
import { keepAlive, markLive, reconnectNow, startSocket } from './socket.js';
import { isObj } from './values.js';

/** The first pages again: a poll while the socket is down, a reconnect, a resync after a team edit.
 *  What they bring that this page had not (once it had a first snapshot) arrived as card.added
 *  would have: a high-risk arrival notifies the same. */
function applyFirstPages(cards, frame) {
  for (const card of arrivals(cards)) notifyIfHidden(card);
  applySnapshot(cards, frame);
}

function handleFrame(msg) {
  if (!isObj(msg)) return;
  switch (msg.type) {
    case 'snapshot':
      markLive(); // first: the page may ask for the next page as soon as this one is shown
      applyFirstPages(msg.cards, msg);
      break;
    case 'page':
      applyNextPage(msg);
      break;
    case 'error':
      if (pageRefused()) announce(`Could not load more requests: ${typeof msg.detail === 'string' ? msg.detail : 'the server refused.'}`, 'error');
      break;
    case 'card.added':
    case 'card.updated':
      if (msg.type === 'card.added') notifyIfHidden(msg.card);
      noteTotal(msg.total);
      upsert(msg.card);
      reorder(); // the total may have changed even when the card is not new here
      break;
    case 'card.removed':
      if (typeof msg.id === 'string') {
        noteTotal(msg.total);
        noteRemoved(msg); // an approved card stays part of its run as a grant until used
        removeCard(msg.id, { status: msg.status, decided_by: msg.decided_by, cause: msg.cause, stopped_by: msg.stopped_by }, { refresh: false });
        reorder();
      }
      break;
    default:
      break; // pong and future frame types
  }
}

/** "Show all" on a card whose args were cut: load them, then show them and allow approving. */
async function showAllArgs(entry, button) {
  button.disabled = true;
  showCardError(entry, '');
  try {
    await loadFullArgs(entry);
    if (isShown(entry)) applyCard(entry, entry.card);
  } catch (err) {
    showCardError(entry, err.message);
    button.disabled = false;
  }
}

/** The one timer: countdowns, toasts and the keep-alive ping. */
function tick() {
  const now = Date.now();
  for (const entry of shownEntries()) updateClock(entry, now);
  tickQueue(now);
  expireToasts(now);
  keepAlive();
}

function onClick(ev) {
  const entry = entryAt(ev.target);
  if (!entry) return;
  select(entry.id, { focus: false });
  const button = ev.target.closest('button[data-action]');
  if (!button || button.disabled) return;
  switch (button.dataset.action) {
    case 'approve': requestApprove(entry); break; // a high-risk card asks first (confirm.js)
    case 'confirm-approve': confirmApprove(entry); break;
    case 'open-reject': openReject(entry); break;
    case 'open-edit': openEdit(entry); break;
    case 'edit-as': switchEditAs(entry); break;
    case 'reject': reject(entry); break;
    case 'reject-stop': reject(entry, { stopRun: true }); break;
    case 'open-stop': openStop(entry); break;
    case 'stop-run': stopRun(entry); break;
    case 'approve-edited': requestApproveEdited(entry); break; // high risk: asks first too
    case 'cancel': cancelMode(entry); break;
    case 'show-all-args': showAllArgs(entry, button); break;
    case 'claim': toggleClaim(entry); break;
    case 'dismiss': dismissWithdrawn(entry); break;
    default: break;
  }
}

function onInput(ev) {
  const entry = entryAt(ev.target);
  if (!entry) return;
  const role = ev.target.dataset && ev.target.dataset.role;
  if (role === 'editor' || ev.target.closest('[data-role="args-form"]')) {
    entry.dirty = true;
    validateEdit(entry);
  } else if (role === 'stop-reason') {
    entry.dirty = entry.kind === 'clarification' || ev.target.value.trim() !== '';
    syncControls(entry);
  } else if (role === 'reason') {
    // A clarification stays dirty once touched: its form answers outlive the reason.
    entry.dirty = entry.kind === 'clarification' || ev.target.value.trim() !== '';
    syncControls(entry);
  } else {
    entry.dirty = true;
    recheckField(entry, ev.target);
  }
}

if (root) {
  // Delegated: cards come and go, the list stays.
  listEl.addEventListener('click', onClick);
  listEl.addEventListener('focusin', (ev) => {
    const entry = entryAt(ev.target);
    if (entry) select(entry.id, { focus: false });
  });
  listEl.addEventListener('input', onInput);
  listEl.addEventListener('change', (ev) => {
    const entry = entryAt(ev.target);
    if (entry && entry.kind === 'clarification') entry.dirty = true;
  });
  listEl.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const entry = entryAt(ev.target);
    if (entry && entry.kind === 'clarification') answer(entry);
  });
  listEl.addEventListener('keydown', onSubmitKey);
  document.addEventListener('keydown', onShortcutKey);

  window.addEventListener('online', reconnectNow);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') {
      tick();
      reconnectNow();
    }
  });

  initSettings();
  initQueue();
  initSkipLink();
  initBulk();
  initDecided();
  refreshSummary();
  askForPermissionOnce();
  setInterval(tick, 1000);
  startSocket({ onFrame: handleFrame, onPolled: applyFirstPages, shownCount: () => pagingState().shown, onState: refreshPaging });
}
