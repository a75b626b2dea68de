/* Keyboard use: j/k move, a approve (a high-risk card asks first: confirm.js), r reject
 * (decline a clarification), e edit, Esc cancel; Ctrl/Cmd+Enter submits a panel. The
 * single-letter keys can be turned off in the settings (settings.js, WCAG 2.1.4). */
import { entryAt } from './card.js';
import { requestApprove, requestApproveEdited } from './confirm.js';
import { cancelMode, openEdit, openReject } from './controls.js';
import { decidedShown } from './decided.js';
import { reject, stopRun } from './decisions.js';
import { selectedEntry } from './list.js';
import { moveSelection } from './queue.js';
import { shortcutsOn } from './settings.js';

function isTyping(target) {
  return target instanceof Element && (target.isContentEditable || Boolean(target.closest('input, textarea, select')));
}

/** Page-wide shortcuts (on document). */
export function onShortcutKey(ev) {
  if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === 'Escape') {
    const entry = entryAt(ev.target) || selectedEntry();
    if (entry && entry.mode !== 'view') {
      ev.preventDefault();
      cancelMode(entry);
    }
    return;
  }
  // In the Decided view the waiting cards are out of sight: no key may act on them.
  if (isTyping(ev.target) || !shortcutsOn() || decidedShown()) return;
  const selected = selectedEntry();
  switch (ev.key) {
    case 'j': moveSelection(1); break;
    case 'k': moveSelection(-1); break;
    case 'a':
      if (selected && selected.kind === 'approval' && selected.mode === 'view') requestApprove(selected);
      break;
    case 'r':
      if (selected) openReject(selected);
      break;
    case 'e':
      if (selected) openEdit(selected);
      break;
    default:
      return;
  }
  ev.preventDefault();
}

/** Ctrl/Cmd+Enter in a reason or the args editor submits it (on the card list). In the reject
 * panel it rejects without stopping the run: ending a run always takes an explicit click. */
export function onSubmitKey(ev) {
  if (ev.key !== 'Enter' || !(ev.ctrlKey || ev.metaKey)) return;
  const entry = entryAt(ev.target);
  if (!entry) return;
  const role = ev.target.dataset && ev.target.dataset.role;
  if (role === 'reason') { ev.preventDefault(); reject(entry); }
  if (role === 'editor' || ev.target.closest('[data-role="args-form"]')) { ev.preventDefault(); requestApproveEdited(entry); }
  if (role === 'stop-reason') { ev.preventDefault(); stopRun(entry); }
}
