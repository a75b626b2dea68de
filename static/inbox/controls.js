/* The controls on a card: approve / reject-with-reason / edit-args panels of an
 * approval, which of them is open, and what is enabled. */
import { diffArgs, parseArgs, renderDiff } from './args.js';
import { h, uid } from './dom.js';
import { isObj } from './values.js';

/** A card that is being decided or has expired takes no more input. */
export const isLocked = (entry) => entry.busy || entry.expired;

export const noEdit = () => ({ valid: false, value: null, changes: [] });

export function buildApprovalControls(entry) {
  const r = entry.refs;
  r.approve = h('button', { type: 'button', class: 'btn btn--approve', 'data-action': 'approve', 'data-testid': 'approve' }, 'Approve');
  r.reject = h('button', { type: 'button', class: 'btn btn--reject', 'data-action': 'open-reject', 'data-testid': 'reject', 'aria-expanded': 'false' }, 'Reject…');
  r.edit = h('button', { type: 'button', class: 'btn', 'data-action': 'open-edit', 'data-testid': 'edit', 'aria-expanded': 'false' }, 'Edit args');
  r.actions = h('div', { class: 'card__actions', 'data-testid': 'card-actions' }, r.approve, r.reject, r.edit);

  const reasonId = uid('reason');
  r.reason = h('textarea', { id: reasonId, class: 'input input--textarea', rows: 2, name: 'reason', 'data-role': 'reason', 'data-testid': 'reject-reason', required: true, placeholder: 'Why should this not go ahead?' });
  r.rejectSubmit = h('button', { type: 'button', class: 'btn btn--reject-solid', 'data-action': 'reject', 'data-testid': 'reject-submit', disabled: true }, 'Reject request');
  r.rejectPanel = h('div', { class: 'panel panel--reject', 'data-testid': 'reject-panel', hidden: true },
    h('label', { class: 'field__label', for: reasonId }, 'Reason for rejecting', h('span', { class: 'field__req' }, ' (required)')),
    r.reason,
    h('div', { class: 'card__actions' }, r.rejectSubmit,
      h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'cancel', 'data-testid': 'reject-cancel' }, 'Cancel')));

  const editorId = uid('editor');
  const statusId = uid('editor-status');
  r.editor = h('textarea', {
    id: editorId, class: 'input input--code', rows: 8, spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off',
    'data-role': 'editor', 'data-testid': 'args-editor', 'aria-describedby': statusId,
  });
  r.editStatus = h('p', { class: 'editor__status', id: statusId, 'data-testid': 'args-editor-error' });
  r.diff = h('div', { class: 'diff', 'data-testid': 'args-diff' });
  r.approveEdited = h('button', { type: 'button', class: 'btn btn--approve', 'data-action': 'approve-edited', 'data-testid': 'approve-edited', disabled: true }, 'Approve edited');
  r.editPanel = h('div', { class: 'panel panel--edit', 'data-testid': 'edit-panel', hidden: true },
    h('label', { class: 'field__label', for: editorId }, 'Arguments to approve (JSON object)'),
    r.editor, r.editStatus, r.diff,
    h('div', { class: 'card__actions' }, r.approveEdited,
      h('button', { type: 'button', class: 'btn btn--quiet', 'data-action': 'cancel', 'data-testid': 'edit-cancel' }, 'Cancel')));

  r.body.append(r.editPanel, r.rejectPanel, r.actions);
}

export function syncControls(entry) {
  const r = entry.refs;
  const locked = isLocked(entry);
  if (entry.kind === 'approval') {
    r.approve.disabled = locked;
    r.reject.disabled = locked;
    r.edit.disabled = locked;
    r.rejectSubmit.disabled = locked || !r.reason.value.trim();
    r.approveEdited.disabled = locked || !entry.edit.valid || !entry.edit.changes.length;
  } else if (entry.form) {
    entry.form.submit.disabled = locked;
  }
  entry.el.classList.toggle('is-busy', entry.busy);
  if (entry.busy) entry.el.setAttribute('aria-busy', 'true');
  else entry.el.removeAttribute('aria-busy');
}

function setMode(entry, mode) {
  if (entry.kind !== 'approval') return;
  const r = entry.refs;
  entry.mode = mode;
  r.rejectPanel.hidden = mode !== 'reject';
  r.editPanel.hidden = mode !== 'edit';
  r.actions.hidden = mode !== 'view';
  r.reject.setAttribute('aria-expanded', String(mode === 'reject'));
  r.edit.setAttribute('aria-expanded', String(mode === 'edit'));
  entry.el.dataset.mode = mode;
}

export function openReject(entry) {
  if (entry.kind !== 'approval' || isLocked(entry)) return;
  setMode(entry, 'reject');
  syncControls(entry);
  entry.refs.reason.focus();
}

export function openEdit(entry) {
  if (entry.kind !== 'approval' || isLocked(entry)) return;
  const r = entry.refs;
  // Keep a draft across reject/edit switches; only Cancel throws it away.
  if (!r.editor.value) {
    r.editor.value = JSON.stringify(isObj(entry.card.args) ? entry.card.args : {}, null, 2);
    r.editor.rows = Math.min(18, Math.max(6, r.editor.value.split('\n').length + 1));
  }
  setMode(entry, 'edit');
  validateEdit(entry);
  r.editor.focus();
}

/** Close the open panel and throw away what was typed in it. */
export function cancelMode(entry) {
  const r = entry.refs;
  if (entry.mode === 'reject') r.reason.value = '';
  if (entry.mode === 'edit') {
    r.editor.value = '';
    r.diff.replaceChildren();
    r.editStatus.textContent = '';
    entry.edit = noEdit();
  }
  entry.dirty = false;
  setMode(entry, 'view');
  syncControls(entry);
  entry.el.focus({ preventScroll: true });
}

/** Check the editor text against the server's rules and show the diff from the request. */
export function validateEdit(entry) {
  const r = entry.refs;
  const result = parseArgs(r.editor.value);
  if (result.ok) {
    const changes = diffArgs(isObj(entry.card.args) ? entry.card.args : {}, result.value);
    entry.edit = { valid: true, value: result.value, changes };
    r.editStatus.textContent = 'Valid JSON object.';
    r.editStatus.className = 'editor__status editor__status--ok';
    r.editor.removeAttribute('aria-invalid');
    renderDiff(r.diff, changes);
    r.diff.hidden = false;
  } else {
    entry.edit = noEdit();
    r.editStatus.textContent = result.error;
    r.editStatus.className = 'editor__status editor__status--error';
    r.editor.setAttribute('aria-invalid', 'true');
    r.diff.hidden = true;
  }
  syncControls(entry);
}
