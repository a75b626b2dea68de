/* The inbox websocket: reconnects with jittered backoff, pings now and then, and shows
 * the connection state. Frames go to one handler; a snapshot makes the page "live". */
import { connEl, config, root, staleEl } from './page.js';

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 10000;
const PING_EVERY_S = 25;
const STATE_TEXT = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' };

const conn = { ws: null, attempt: 0, timer: null, onFrame: null, seconds: 0 };

function setConnection(state) {
  if (!connEl) return;
  connEl.dataset.state = state;
  connEl.querySelector('.conn__text').textContent = STATE_TEXT[state];
  const stale = state === 'reconnecting';
  root.classList.toggle('is-stale', stale);
  if (staleEl) staleEl.hidden = !stale;
}

/** Connect and keep reconnecting; each parsed frame goes to onFrame(msg). */
export function startSocket(onFrame) {
  conn.onFrame = onFrame;
  setConnection('connecting');
  connect();
}

/** The server sent the full pending set: the list is current again. */
export function markLive() {
  conn.attempt = 0;
  setConnection('live');
}

/** The network is back or the tab is visible again: do not wait out the backoff. */
export function reconnectNow() {
  if (conn.ws) return;
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

function connect() {
  clearTimeout(conn.timer);
  conn.timer = null;
  if (conn.ws) return;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  let ws;
  try {
    ws = new WebSocket(`${scheme}//${location.host}${config.wsPath}`);
  } catch (_) {
    scheduleReconnect();
    return;
  }
  conn.ws = ws;
  ws.addEventListener('message', (ev) => {
    if (ws !== conn.ws || typeof ev.data !== 'string') return;
    let msg;
    try { msg = JSON.parse(ev.data); } catch (_) { return; }
    conn.onFrame(msg);
  });
  ws.addEventListener('close', () => {
    if (ws !== conn.ws) return;
    conn.ws = null;
    setConnection('reconnecting');
    scheduleReconnect();
  });
}

function scheduleReconnect() {
  if (conn.timer) return;
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** conn.attempt);
  conn.attempt += 1;
  // A little jitter so a restarted server is not hit by every reviewer at once.
  const delay = Math.min(BACKOFF_MAX_MS, base * (0.85 + Math.random() * 0.3));
  conn.timer = setTimeout(connect, delay);
}
