/* Short messages for the reviewer in the shared aria-live region.
 *
 * A shift's worth of decisions makes many of them: a success leaves after a few seconds,
 * only the newest few are on screen, and the stack never sits on a card's action bar —
 * bottom right unless a bar is there, else up under the top bar (on a phone, where the
 * bar is sticky at the bottom, that is always). */
import { h } from './dom.js';
import { feedbackEl } from './page.js';

const SHOWN_MS = { success: 4000, info: 8000 }; // errors stay until dismissed
const MAX_TOASTS = 3;
const GAP = 8;
// What a toast must never cover: a card's action bar, a panel's buttons, the bulk bar.
const BARS = '.card__actions, [data-testid="bulk-bar"]';

/** Announce a message. kind: success | info | error; errors stay until dismissed. */
export function announce(text, kind = 'info') {
  const close = h('button', { type: 'button', class: 'toast__close', 'aria-label': 'Dismiss message' }, '×');
  const toast = h('div', { class: `toast toast--${kind}`, 'data-kind': kind, 'data-testid': 'feedback-message' },
    h('p', { class: 'toast__text' }, text), close);
  toast.expiresAt = kind in SHOWN_MS ? Date.now() + SHOWN_MS[kind] : Infinity;
  close.addEventListener('click', () => { toast.remove(); placeToasts(); });
  feedbackEl.append(toast);
  while (feedbackEl.children.length > MAX_TOASTS) oldestToDrop().remove();
  placeToasts();
}

/** An older success or note goes before an error the reviewer has not dismissed. */
function oldestToDrop() {
  const toasts = Array.from(feedbackEl.children);
  return toasts.find((t) => t.dataset.kind !== 'error') || toasts[0];
}

export function expireToasts(now) {
  let removed = false;
  for (const toast of Array.from(feedbackEl.children)) {
    if (toast.expiresAt <= now) { toast.remove(); removed = true; }
  }
  if (removed || feedbackEl.children.length) placeToasts(); // the cards under them may have moved
}

const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/** The rectangles of the action bars' buttons on screen (a bar's empty stretch may be covered). */
function barsOnScreen() {
  const rects = [];
  for (const bar of document.querySelectorAll(BARS)) {
    const whole = bar.getBoundingClientRect();
    if (!whole.height || whole.bottom <= 0 || whole.top >= window.innerHeight) continue;
    for (const part of bar.children) {
      const r = part.getBoundingClientRect();
      if (r.width && r.height) rects.push(r);
    }
  }
  return rects;
}

/** Put the stack where it covers no action bar. */
export function placeToasts() {
  if (!feedbackEl) return;
  if (!feedbackEl.children.length) {
    feedbackEl.classList.remove('feedback--top');
    return;
  }
  const topbar = document.querySelector('.topbar');
  const top = (topbar ? Math.max(0, topbar.getBoundingClientRect().bottom) : 0) + GAP;
  feedbackEl.style.setProperty('--toast-top', `${Math.round(top)}px`);
  // Measured where it sits by default (no paint happens in between, so nothing flickers).
  feedbackEl.classList.remove('feedback--top');
  const atBottom = feedbackEl.getBoundingClientRect();
  if (barsOnScreen().some((bar) => overlaps(bar, atBottom))) feedbackEl.classList.add('feedback--top');
}

let placing = false;
function placeSoon() {
  if (placing) return;
  placing = true;
  requestAnimationFrame(() => { placing = false; placeToasts(); });
}
// Captured: the detail pane scrolls on its own, and its scroll events do not reach the window.
document.addEventListener('scroll', placeSoon, { passive: true, capture: true });
window.addEventListener('resize', placeSoon);
