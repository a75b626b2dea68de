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

/** Time left in words a reviewer reads at a glance ("12 min left"), never a stopwatch's "12:30":
 * that read as a clock time beside the card's clock times. Under a minute it says so, without
 * seconds that change on every tick; the card turns urgent then (URGENT_S). */
function formatLeft(seconds) {
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)} h ${pad2(Math.floor((seconds % 3600) / 60))} min left`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)} min left`;
  return 'under 1 min left';
}

/** What a card's countdown shows at `now`: { text, urgent, expired }; the deadline as a clock time
 * ("12 min left · until 14:05"). */
export function countdownAt(expiresMs, now) {
  const finite = Number.isFinite(expiresMs);
  const left = finite ? Math.ceil((expiresMs - now) / 1000) : Infinity;
  return {
    text: !finite ? 'No expiry' : left <= 0 ? 'Expired' : `${formatLeft(left)} · until ${clockTime(expiresMs)}`,
    urgent: left > 0 && left < URGENT_S,
    expired: left <= 0,
  };
}
