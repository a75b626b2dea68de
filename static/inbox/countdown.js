/* Times on a card: when it was requested, and how long until it expires. */
import { pad2 } from './values.js';

const URGENT_S = 60;

/** Milliseconds since the epoch for a server timestamp, or `fallback`. */
export function timeOf(iso, fallback) {
  // Python's isoformat() has microseconds; the ECMAScript date format allows milliseconds.
  const t = typeof iso === 'string' ? Date.parse(iso.replace(/(\.\d{3})\d+/, '$1')) : NaN;
  return Number.isFinite(t) ? t : fallback;
}

export function clockTime(ms) {
  if (!Number.isFinite(ms)) return '';
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

function formatLeft(seconds) {
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)} h ${pad2(Math.floor((seconds % 3600) / 60))} min left`;
  return `${Math.floor(seconds / 60)}:${pad2(seconds % 60)} left`;
}

/** What a card's countdown shows at `now`: { text, urgent, expired }. */
export function countdownAt(expiresMs, now) {
  const finite = Number.isFinite(expiresMs);
  const left = finite ? Math.ceil((expiresMs - now) / 1000) : Infinity;
  return {
    text: !finite ? 'No expiry' : left <= 0 ? 'Expired' : formatLeft(left),
    urgent: left > 0 && left < URGENT_S,
    expired: left <= 0,
  };
}
