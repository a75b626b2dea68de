/* Quick rejection reasons: the reasons governance sets in the console (approvals/models/quick_reason.py),
 * offered in a reject form as one-click buttons. A click puts the reason in the reason box, where
 * the reviewer may still change or add to it before sending; nothing is sent by the click. */
import { h } from './dom.js';

let cached = null;

/** The reasons the page was given (a JSON data block in the template), in order. */
export function quickReasons() {
  if (cached) return cached;
  cached = [];
  const block = document.getElementById('quick-reasons');
  try {
    const value = block ? JSON.parse(block.textContent) : [];
    if (Array.isArray(value)) cached = value.filter((t) => typeof t === 'string' && t.trim() !== '');
  } catch (_) { /* no reasons offered */ }
  return cached;
}

/** Fill `container` with a button per reason, each writing it into `textarea`. */
export function offerQuickReasons(container, textarea, { shown = true, onPick = null } = {}) {
  const reasons = shown ? quickReasons() : [];
  container.hidden = reasons.length === 0;
  if (container.dataset.built === String(reasons.length)) return;
  container.dataset.built = String(reasons.length);
  container.setAttribute('role', 'group');
  container.setAttribute('aria-label', 'Quick reasons');
  container.replaceChildren(...reasons.map((text) => {
    const button = h('button', { type: 'button', class: 'btn btn--small quick-reasons__pick', 'data-testid': 'quick-reason' }, text);
    button.addEventListener('click', () => {
      textarea.value = text;
      textarea.focus();
      textarea.setSelectionRange(text.length, text.length); // typing adds to it
      // As if typed: the card (or the bulk panel) enables its submit button.
      textarea.dispatchEvent(new Event('input', { bubbles: true }));
      if (onPick) onPick(text);
    });
    return button;
  }));
}
