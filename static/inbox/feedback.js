/* Short messages for the reviewer in the shared aria-live region. */
import { h } from './dom.js';
import { feedbackEl } from './page.js';

const TOAST_MS = 10000;
const MAX_TOASTS = 4;

/** Announce a message. kind: success | info | error; errors stay until dismissed. */
export function announce(text, kind = 'info') {
  const close = h('button', { type: 'button', class: 'toast__close', 'aria-label': 'Dismiss message' }, '×');
  const toast = h('div', { class: `toast toast--${kind}`, 'data-kind': kind, 'data-testid': 'feedback-message' },
    h('p', { class: 'toast__text' }, text), close);
  toast.expiresAt = kind === 'error' ? Infinity : Date.now() + TOAST_MS;
  close.addEventListener('click', () => toast.remove());
  feedbackEl.append(toast);
  while (feedbackEl.children.length > MAX_TOASTS) feedbackEl.firstElementChild.remove();
}

export function expireToasts(now) {
  for (const toast of Array.from(feedbackEl.children)) {
    if (toast.expiresAt <= now) toast.remove();
  }
}
