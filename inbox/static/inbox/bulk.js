/* Bulk decisions: tick several low-risk lines in the queue, give one reason, confirm once.
 *
 * Only a low-risk approval's line has a checkbox: a high-risk card, an untiered one or a
 * question is decided on its own (the server refuses them in a bulk as well: 422
 * bulk_high_risk). The server decides each card as one decision, under every rule one
 * has (approvals/bulk_decisions.py); a card it could not decide stays here, ticked,
 * with the reason said. The checkboxes are added to the queue's lines as they are drawn
 * (queue.js owns the lines; this module only decorates them). */
import { cardLabel } from './card.js';
import { h } from './dom.js';
import { announce } from './feedback.js';
import { sendJson } from './http.js';
import { discard, isShown, markDecidedHere, orderedEntries } from './list.js';
import { config, listEl, root } from './page.js';
import { offerQuickReasons } from './quick_reasons.js';

export const BULK_MAX = 50; // as approvals/bulk_decisions.py BULK_MAX_CARDS

const part = (testid) => (root ? root.querySelector(`[data-testid="${testid}"]`) : null);
const els = {};
const selected = new Set(); // approval ids, in the order ticked
let mode = null; // 'approve' | 'reject' while the panel is open
let busy = false;

const byId = () => new Map(orderedEntries().map((e) => [e.id, e]));
export const bulkable = (entry) => Boolean(entry && entry.kind === 'approval' && entry.card.hitl_tier === 'low' && !entry.gone);
const plural = (n) => `${n} card${n === 1 ? '' : 's'}`;

/** Give a queue line its checkbox, if its card may go in a bulk. */
function decorate(li) {
  if (li.querySelector('.qrow__pick')) return;
  const entry = byId().get(li.dataset.approvalId);
  if (!bulkable(entry)) return;
  const box = h('input', { type: 'checkbox', class: 'qrow__box', 'data-testid': 'bulk-select' });
  box.checked = selected.has(entry.id);
  box.addEventListener('change', () => toggle(entry.id, box.checked));
  const pick = h('label', { class: 'qrow__pick' }, box,
    h('span', { class: 'visually-hidden' }, `Select ${cardLabel(entry.card)} for a bulk decision`));
  // The line opens its card on any click in it (queue.js): ticking the box must not.
  pick.addEventListener('click', (ev) => ev.stopPropagation());
  li.prepend(pick);
  li.classList.add('qrow-item--pickable');
}

function toggle(id, on) {
  if (on && selected.size >= BULK_MAX) {
    announce(`A bulk decision takes at most ${BULK_MAX} cards.`, 'error');
    syncBoxes();
    return;
  }
  if (on) selected.add(id);
  else selected.delete(id);
  if (mode) closePanel();
  sync();
}

function syncBoxes() {
  for (const box of els.rows.querySelectorAll('[data-testid="bulk-select"]')) {
    const li = box.closest('[data-approval-id]');
    box.checked = Boolean(li) && selected.has(li.dataset.approvalId);
  }
}

/** Keep the selection to the cards still here, and the bar in line with it. */
function sync() {
  const entries = byId();
  for (const id of Array.from(selected)) if (!bulkable(entries.get(id))) selected.delete(id);
  const n = selected.size;
  els.bar.hidden = n === 0;
  els.count.textContent = n ? `${plural(n)} selected` : '';
  els.approve.textContent = `Approve ${n > 1 ? `these ${n}` : 'selected'}…`;
  els.reject.textContent = `Reject ${n > 1 ? `these ${n}` : 'selected'}…`;
  if (!n && mode) closePanel();
  if (mode) renderPanel();
  syncBoxes();
}

function renderPanel() {
  const entries = byId();
  const cards = Array.from(selected, (id) => entries.get(id)).filter(Boolean);
  const verb = mode === 'approve' ? 'Approve' : 'Reject';
  els.summary.textContent = `${verb} ${plural(cards.length)}, each decided and audited on its own:`;
  els.list.replaceChildren(...cards.map((e) => h('li', null, cardLabel(e.card))));
  els.confirm.textContent = `${verb} ${plural(cards.length)}`;
  els.confirm.className = `btn ${mode === 'approve' ? 'btn--approve' : 'btn--reject-solid'}`;
  els.confirm.disabled = busy || !els.reason.value.trim() || !cards.length;
  els.approve.setAttribute('aria-expanded', String(mode === 'approve'));
  els.reject.setAttribute('aria-expanded', String(mode === 'reject'));
}

function openPanel(which) {
  mode = which;
  els.error.hidden = true;
  els.panel.hidden = false;
  // Quick reasons are rejection reasons (governance sets them): offered when rejecting.
  offerQuickReasons(els.quick, els.reason, { shown: which === 'reject', onPick: renderPanel });
  renderPanel();
  els.reason.focus();
}

function closePanel() {
  mode = null;
  els.panel.hidden = true;
  els.reason.value = '';
  els.approve.setAttribute('aria-expanded', 'false');
  els.reject.setAttribute('aria-expanded', 'false');
}

async function send() {
  const reason = els.reason.value.trim();
  if (!reason || busy || !mode) return;
  const entries = byId();
  const cards = Array.from(selected, (id) => entries.get(id)).filter(Boolean);
  const approved = mode === 'approve';
  busy = true;
  renderPanel();
  const { res, data, detail, code } = await sendJson(config.bulkUrl, {
    method: 'POST',
    body: { approved, reason, cards: cards.map((e) => (approved ? { id: e.id, payload_hash: e.card.payload_hash } : { id: e.id })) },
  });
  busy = false;
  if (!res || !res.ok || !data || !Array.isArray(data.results)) {
    const why = res ? `${detail || `HTTP ${res.status}`}${code ? ` (${code})` : ''}` : 'Network problem — nothing was confirmed; try again.';
    els.error.textContent = `Nothing was decided: ${why}`;
    els.error.hidden = false;
    renderPanel();
    announce(`Bulk decision not applied: ${why}`, 'error');
    return;
  }
  const refused = [];
  for (const result of data.results) {
    const entry = entries.get(result.id);
    if (!result.error) {
      selected.delete(result.id);
      if (entry && result.status !== 'pending' && isShown(entry)) {
        markDecidedHere(entry.id);
        discard(entry);
      }
    } else if (entry) {
      refused.push(`${cardLabel(entry.card)}: ${result.detail || result.error}`);
    }
  }
  const done = data.decided;
  closePanel();
  sync();
  announce(`${approved ? 'Approved' : 'Rejected'} ${plural(done)}, each on its own.`, 'success');
  if (refused.length) announce(`Not decided, still selected — ${refused.join('; ')}`, 'error');
  const first = els.rows.querySelector('.qrow');
  if (first) first.focus();
}

export function initBulk() {
  if (!root) return;
  Object.assign(els, {
    rows: part('queue-rows'), bar: part('bulk-bar'), count: part('bulk-count'), approve: part('bulk-approve'),
    reject: part('bulk-reject'), clear: part('bulk-clear'), panel: part('bulk-panel'), summary: part('bulk-summary'),
    list: part('bulk-list'), reason: part('bulk-reason'), quick: part('bulk-quick-reasons'), error: part('bulk-error'),
    confirm: part('bulk-confirm'), cancel: part('bulk-cancel'),
  });
  if (!els.rows || !els.bar) return;
  new MutationObserver((changes) => {
    for (const change of changes) {
      for (const node of change.addedNodes) {
        if (node instanceof HTMLElement && node.dataset.approvalId) decorate(node);
      }
    }
  }).observe(els.rows, { childList: true });
  for (const li of els.rows.querySelectorAll('[data-approval-id]')) decorate(li);
  els.approve.addEventListener('click', () => (mode === 'approve' ? closePanel() : openPanel('approve')));
  els.reject.addEventListener('click', () => (mode === 'reject' ? closePanel() : openPanel('reject')));
  els.clear.addEventListener('click', () => { selected.clear(); closePanel(); sync(); });
  els.cancel.addEventListener('click', () => { closePanel(); els.approve.focus(); });
  els.reason.addEventListener('input', renderPanel);
  els.confirm.addEventListener('click', send);
  listEl.addEventListener('inbox:change', sync);
}
