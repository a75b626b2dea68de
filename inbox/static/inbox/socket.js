/* The inbox websocket: reconnects with jittered backoff, pings now and then, and shows
 * the connection state. Frames go to one handler; a snapshot (the first page of the
 * pending cards) makes the page "live"; requestPage asks for the next page.
 * While the socket is down the page polls the REST snapshot instead (poll.js), in the
 * same pages: a poll re-reads the pages loaded so far, and requestPage fetches the next
 * one over HTTP, answered as the socket would answer. A socket closed because the login
 * no longer holds stops everything until a reload. A page asked for and lost on the way (the
 * socket dropped, the login ended) is answered with an error frame, so the list never waits
 * for it; while no page can be asked for, pageBlockedReason() says why. */
import { connEl, config, pausedEl, root, staleEl } from './page.js';
import { fetchCardPage, fetchPolledPages } from './poll.js';
import { isObj } from './values.js';

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 10000;
const PING_EVERY_S = 25;
// Close codes from inbox/consumers.py: signed out / no longer a reviewer.
const REVOKED = new Set([4401, 4403]);
const STATE_TEXT = {
  connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…',
  polling: 'Live updates paused', 'signed-out': 'Signed out — reload to sign in',
};

const conn = {
  ws: null, attempt: 0, timer: null, on: null, seconds: 0,
  live: false, revoked: false, pollTimer: null, pollOk: false, generation: 0, pagesFetched: 0,
  pageAsked: null, // the page asked for and not yet answered: the WebSocket it went on, or its HTTP request
};

function setConnection(state) {
  if (!connEl) return;
  connEl.dataset.state = state;
  connEl.querySelector('.conn__text').textContent = STATE_TEXT[state];
  const stale = state === 'reconnecting' || state === 'signed-out';
  root.classList.toggle('is-stale', stale);
  if (staleEl) staleEl.hidden = !stale;
  if (pausedEl) pausedEl.hidden = state !== 'polling';
  conn.on.onState(state);
}

/** Connect and keep reconnecting. The callbacks: onFrame(msg) takes each parsed frame, onPolled(cards, frame)
 * each poll; shownCount() says how many cards the page holds (a poll re-reads the pages that cover them);
 * onState(state) hears each connection state, as whether a page can be asked for may have changed with it. */
export function startSocket({ onFrame, onPolled, shownCount, onState }) {
  conn.on = { onFrame, onPolled, shownCount, onState };
  setConnection('connecting');
  connect();
}

/** The server sent the full pending set: the list is current again, polling stops. */
export function markLive() {
  conn.attempt = 0;
  conn.live = true;
  conn.pollOk = false;
  conn.generation += 1; // a poll still in flight is older than this snapshot
  conn.pageAsked = null; // the snapshot starts the pages again
  clearTimeout(conn.pollTimer);
  conn.pollTimer = null;
  setConnection('live');
}

/** The network is back or the tab is visible again: do not wait out the backoff. */
export function reconnectNow() {
  if (conn.ws || conn.revoked) return;
  conn.attempt = 0;
  connect();
}

/** Called once a second: a ping now and then keeps proxies from closing an idle socket. */
export function keepAlive() {
  conn.seconds += 1;
  if (conn.seconds % PING_EVERY_S === 0 && conn.ws && conn.ws.readyState === WebSocket.OPEN) {
    conn.ws.send('{"type":"ping"}');
  }
}

const pagesBySocket = () => conn.live && conn.ws && conn.ws.readyState === WebSocket.OPEN;
const pagesByHttp = () => !conn.live && !conn.revoked && conn.pollOk;

/** Ask the server for the page after `cursor`: over the socket (inbox/consumers.py), or while
 * polling over HTTP; false when neither works now. The answer comes to onFrame as a page or error frame. */
export function requestPage(cursor) {
  if (pagesBySocket()) {
    conn.ws.send(JSON.stringify({ type: 'page', cursor }));
    conn.pageAsked = conn.ws;
    return true;
  }
  if (!pagesByHttp()) return false;
  const asked = { cursor };
  conn.pageAsked = asked;
  fetchPageWhilePolling(asked);
  return true;
}

/** Why no page can be asked for now ('' when one can): "Load more" shows it while it waits. */
export function pageBlockedReason() {
  if (pagesBySocket() || pagesByHttp()) return '';
  if (conn.revoked) return 'Signed out — reload the page to sign in, then load more.';
  return 'Reconnecting — more requests can load once Condor answers again.';
}

/** The page asked for will not come: answer it with an error frame that says why. */
function losePage(detail) {
  if (conn.pageAsked === null) return;
  conn.pageAsked = null;
  conn.on.onFrame({ type: 'error', error: 'page_lost', detail });
}

async function fetchPageWhilePolling(asked) {
  const { cursor } = asked;
  // Counted as it starts and as it lands: a poll in flight across either covers less than the
  // list will hold, and is dropped (poll()).
  conn.pagesFetched += 1;
  let frame;
  try {
    frame = { type: 'page', after: cursor, ...(await fetchCardPage(cursor)) };
  } catch (err) {
    if (err.status === 401 || err.status === 403) {
      revoke(); // which answers this page (losePage)
      return;
    }
    frame = { type: 'error', error: 'page_failed', detail: err.message };
  }
  conn.pagesFetched += 1;
  // Live again, the socket's snapshot is newer; revoked, the page was answered already.
  if (conn.pageAsked !== asked) return;
  conn.pageAsked = null;
  conn.on.onFrame(frame);
}

function connect() {
  clearTimeout(conn.timer);
  conn.timer = null;
  if (conn.ws || conn.revoked) return;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  let ws;
  try {
    ws = new WebSocket(`${scheme}//${location.host}${config.wsPath}`);
  } catch (_) {
    socketDown();
    return;
  }
  conn.ws = ws;
  ws.addEventListener('message', (ev) => {
    if (ws !== conn.ws || typeof ev.data !== 'string') return;
    let msg;
    try { msg = JSON.parse(ev.data); } catch (_) { return; }
    if (conn.pageAsked === ws && isObj(msg) && (msg.type === 'page' || msg.type === 'error')) conn.pageAsked = null;
    conn.on.onFrame(msg);
  });
  ws.addEventListener('close', (ev) => {
    if (ws !== conn.ws) return;
    conn.ws = null;
    if (REVOKED.has(ev.code)) {
      revoke();
      return;
    }
    if (conn.pageAsked === ws) losePage('The connection dropped before they came. Load more again once Condor reconnects.');
    socketDown();
  });
}

function socketDown() {
  conn.live = false;
  setConnection(conn.pollOk ? 'polling' : 'reconnecting'); // a failed reconnect changes nothing while polls work
  schedulePoll(0);
  scheduleReconnect();
}

/** The login no longer holds (logged out, deactivated, not a reviewer): stop, say so. */
function revoke() {
  conn.revoked = true;
  conn.live = false;
  clearTimeout(conn.timer);
  clearTimeout(conn.pollTimer);
  setConnection('signed-out');
  losePage('You are signed out. Reload the page to sign in again.');
}

function scheduleReconnect() {
  if (conn.timer || conn.revoked) return;
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** conn.attempt);
  conn.attempt += 1;
  // A little jitter so a restarted server is not hit by every reviewer at once.
  const delay = Math.min(BACKOFF_MAX_MS, base * (0.85 + Math.random() * 0.3));
  conn.timer = setTimeout(connect, delay);
}

function schedulePoll(delay) {
  if (conn.pollTimer || conn.live || conn.revoked) return;
  conn.pollTimer = setTimeout(poll, delay);
}

async function poll() {
  const generation = conn.generation;
  const pagesFetched = conn.pagesFetched;
  let polled = null;
  let status = 0;
  try {
    polled = await fetchPolledPages(conn.on.shownCount());
  } catch (err) {
    status = err.status || 0;
  }
  conn.pollTimer = null;
  if (conn.live || conn.revoked || generation !== conn.generation) return; // the socket is back: its snapshot is newer
  if (status === 401 || status === 403) {
    revoke();
    return;
  }
  // A page the reviewer loaded meanwhile lies past what this poll read: applied, it would drop that page.
  const overtaken = pagesFetched !== conn.pagesFetched;
  conn.pollOk = polled !== null;
  if (polled && !overtaken) conn.on.onPolled(polled.cards, polled);
  setConnection(conn.pollOk ? 'polling' : 'reconnecting');
  schedulePoll(config.pollSeconds * 1000);
}
