/* "Skip to the open card": from the top of the queue (its search, filters and a page of
 * lines) straight to the card open in the detail pane, for keyboard and screen-reader
 * users. Without this script the link still lands on the card list. */
import { selectedEntry } from './list.js';
import { listEl, root } from './page.js';

function openCard() {
  const entry = selectedEntry();
  if (entry && entry.el && entry.el.isConnected) return entry.el;
  return listEl.querySelector('article.card.is-open');
}

export function initSkipLink() {
  const link = root && root.querySelector('[data-testid="skip-to-card"]');
  if (!link) return;
  link.addEventListener('click', (ev) => {
    const card = openCard();
    if (!card) return;
    ev.preventDefault();
    card.focus({ preventScroll: true });
    card.scrollIntoView({ block: 'nearest' });
  });
}
