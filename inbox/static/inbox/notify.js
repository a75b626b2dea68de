/* Browser notifications (SPEC section 10): a high-risk card that arrives while the tab is hidden.
 *
 * Permission is asked once, on the reviewer's first click in the page: browsers ignore
 * (or quietly block) a prompt that no gesture asked for. Nothing else changes if they
 * say no, or the browser has no notifications.
 */
import { cardLabel } from './card.js';
import { isObj } from './values.js';

const supported = () => typeof window.Notification === 'function';

export function askForPermissionOnce() {
  if (!supported() || window.Notification.permission !== 'default') return;
  document.addEventListener('click', () => {
    if (window.Notification.permission !== 'default') return;
    Promise.resolve(window.Notification.requestPermission()).catch(() => {});
  }, { once: true });
}

/** Notify about a newly arrived card if it is high risk and nobody is looking at the tab. */
export function notifyIfHidden(card) {
  if (!supported() || window.Notification.permission !== 'granted') return;
  if (document.visibilityState !== 'hidden' || !isObj(card) || card.hitl_tier !== 'high') return;
  try {
    // One notification per card: the tag replaces a repeat (a re-published push) instead of stacking it.
    const note = new window.Notification('High-risk card waiting for a decision',
      { body: cardLabel(card), tag: `condor-card-${card.id}` });
    note.onclick = () => { window.focus(); note.close(); };
  } catch {
    // Some browsers only allow notifications from a service worker: the inbox itself still shows the card.
  }
}
