/* The "Decided" view (SPEC section 10): the last 24 h of decisions this reviewer can
 * see, newest first, a page at a time (GET inbox/decided/), searchable by patient_ref.
 * Each shows who decided and when, approve or reject, the reason, the edits, the
 * four-eyes approvals, what became of an approved call (ran, failed, still running, waiting
 * for the agent, withdrawn, expired) and what the run did next. Read-only, and built from text nodes
 * like every card: never innerHTML.
 *
 * The view is a second tab beside the waiting cards; it is built here, not in the
 * template, so the page's own markup stays the queue's. */
import { diffArgs, renderArgs, renderDiff } from './args.js';
import { clockTime, timeOf } from './countdown.js';
import { h, uid } from './dom.js';
import { sendJson } from './http.js';
import { actionLabel } from './labels.js';
import { config, root } from './page.js';
import { revealed } from './reveal.js';
import { isObj, str } from './values.js';

const PAGE_SIZE = 20;
const SEARCH_DELAY_MS = 300;
const RUN_STATES = {
  pending: 'not started yet', planning: 'planning', executing: 'still running', suspended: 'waiting (suspended)',
  completed: 'completed', failed: 'failed', aborted: 'stopped',
};

const state = { shown: false, query: '', offset: 0, count: 0, seq: 0, timer: 0 };
let ui = null;

/** True while the reviewer looks at the Decided view (the single-key shortcuts then rest). */
export const decidedShown = () => state.shown;

const localDay = (ms) => {
  const d = new Date(ms);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
};

// The day of an instant in the reviewer's own calendar, as it reads before a clock time: nothing
// for today, a word for the days either side (a waiting approval's deadline is often tomorrow),
// a short date otherwise; `on` is the same with the preposition a date needs after a verb.
function dayOf(ms) {
  // Rounded: a day across a clock change is 23 or 25 hours long.
  const days = Math.round((localDay(ms) - localDay(Date.now())) / 86_400_000);
  if (days === 0) return { day: '', on: '' };
  if (days === -1) return { day: 'yesterday', on: 'yesterday' };
  if (days === 1) return { day: 'tomorrow', on: 'tomorrow' };
  const date = new Date(ms).toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric', month: 'short' });
  return { day: date, on: `on ${date}` };
}

// An instant's clock time and day (dayOf); null for no time.
function dated(iso) {
  const ms = timeOf(iso, NaN);
  return Number.isFinite(ms) ? { time: clockTime(ms), ...dayOf(ms) } : null;
}

/** "14:02", "tomorrow 14:02", "Mon 7 Dec 14:02"; '' for no time. */
function when(iso) {
  const d = dated(iso);
  if (!d) return '';
  return d.day ? `${d.day} ${d.time}` : d.time;
}

/** "at 14:02", "yesterday at 14:02", "on Mon 7 Dec at 14:02"; '' for no time. */
function atWhen(iso) {
  const d = dated(iso);
  if (!d) return '';
  return d.on ? `${d.on} at ${d.time}` : `at ${d.time}`;
}

function outcome(d) {
  const clarification = d.reason_code === 'clarification';
  if (d.status === 'rejected') return { word: clarification ? 'Declined' : 'Rejected', kind: 'rejected' };
  const word = clarification ? 'Answered' : 'Approved';
  // A grant its run never used: the run was stopped or closed first (SPEC 4), said, not hidden.
  if (d.status === 'withdrawn') return { word: `${word}, then withdrawn`, kind: 'approved' };
  return { word, kind: 'approved' };
}

const spaced = (phrase) => (phrase ? ` ${phrase}` : '');
const until = (time) => (time ? ` (it lasts until ${time})` : '');

// What became of an approved call (inbox/decided.py's call_outcome), and when.
const CALL_OUTCOMES = {
  ran: ['Ran', (iso) => `the agent reported its result${spaced(atWhen(iso))}`],
  failed: ['Failed', (iso) => `the agent reported an error${spaced(atWhen(iso))}`],
  running: ['Running', (iso) => `the agent took the approval${spaced(atWhen(iso))}; no result yet`],
  waiting: ['Waiting', (iso) => `the agent has not used the approval yet${until(when(iso))}`],
  withdrawn: ['Withdrawn', () => 'the run ended before the agent used the approval'],
  expired: ['Expired', (iso) => `the approval ran out unused${spaced(atWhen(iso))}`],
};

function callOutcome(d) {
  const known = CALL_OUTCOMES[str(d.call_outcome)];
  if (!known) return null;
  const [word, says] = known;
  return line('What became of the call', h('span', { 'data-testid': 'decided-call', 'data-outcome': str(d.call_outcome) },
    h('strong', {}, word), ` · ${says(d.call_outcome_at)}`));
}

function line(label, ...value) {
  return h('p', { class: 'decided__line' }, h('span', { class: 'decided__label' }, `${label}: `), ...value);
}

function argsBlock(title, args, testid) {
  const box = h('div', { class: 'args' });
  renderArgs(box, args);
  return h('details', { class: 'decided__args', 'data-testid': testid }, h('summary', {}, title), box);
}

/** One decision as a list item. */
function item(d) {
  const { word, kind } = outcome(d);
  const by = str(d.decided_by) || 'unknown';
  const parts = [
    h('h3', { class: 'decided__head' },
      h('span', { class: `badge badge--${kind}`, 'data-testid': 'decided-outcome' }, word), ' ',
      // In clinical words as the Waiting card said it; the tool's own name beside it, small, for the audit trail.
      h('span', { 'data-testid': 'decided-action' }, revealed(actionLabel(str(d.tool), str(d.op)) || 'Unknown request')),
      h('span', { class: 'decided__tool', 'data-testid': 'decided-tool' },
        revealed([str(d.tool) || 'unknown tool', str(d.op)].filter(Boolean).join(' · ')))),
    h('p', { class: 'card__meta' },
      h('span', { class: 'visually-hidden' }, 'Patient '),
      h('span', { class: 'meta__patient', 'data-testid': 'decided-patient' }, revealed(str(d.patient_ref) || 'No patient ref')),
      str(d.care_unit) ? h('span', {}, ' · ', revealed(str(d.care_unit))) : null,
      str(d.session_title) ? h('span', {}, ' · ', revealed(str(d.session_title))) : null),
    line('Decided by', h('span', { 'data-testid': 'decided-by' }, revealed(by)), ' ',
      h('time', { dateTime: str(d.decided_at) }, atWhen(d.decided_at))),
  ];
  const approvals = Array.isArray(d.approvals) ? d.approvals.filter(isObj) : [];
  if (Number.isInteger(d.approvals_required) && d.approvals_required > 1) {
    parts.push(line(`Approvals (${approvals.length} of ${d.approvals_required})`,
      revealed(approvals.map((a) => `${str(a.reviewer)} ${atWhen(a.at)}`.trim()).join(', ') || 'none')));
  }
  if (str(d.decision_reason)) parts.push(line('Reason', h('span', { 'data-testid': 'decided-reason' }, revealed(str(d.decision_reason)))));
  if (d.edited === true && isObj(d.args) && isObj(d.approved_args)) {
    const diff = h('div', { class: 'diff', 'data-testid': 'decided-edits' });
    renderDiff(diff, diffArgs(d.args, d.approved_args));
    parts.push(diff);
  }
  if (isObj(d.resume_data) && Object.keys(d.resume_data).length) parts.push(argsBlock('Answer', d.resume_data, 'decided-answer'));
  parts.push(argsBlock(d.edited === true ? 'Arguments as requested' : 'Arguments', d.args, 'decided-args'));
  const call = callOutcome(d);
  if (call) parts.push(call);
  const run = RUN_STATES[str(d.run_state)] || str(d.run_state) || 'unknown';
  const reason = str(d.run_terminal_reason).replace(/_/g, ' ');
  parts.push(line('What the run did next', h('span', { 'data-testid': 'decided-run' }, reason && reason !== run ? `${run} (${reason})` : run)));
  return h('li', { class: `decided__item decided__item--${kind}`, 'data-testid': 'decided-item', 'data-approval-id': str(d.id) }, ...parts);
}

async function load() {
  const seq = ++state.seq;
  ui.status.textContent = 'Loading…';
  ui.list.setAttribute('aria-busy', 'true');
  const params = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(state.offset) });
  if (state.query) params.set('patient_ref', state.query);
  const { res, data, detail } = await sendJson(`${config.decidedUrl}?${params}`);
  if (seq !== state.seq) return; // a newer search or page is on its way
  ui.list.removeAttribute('aria-busy');
  if (!res || !res.ok || !isObj(data) || !Array.isArray(data.results)) {
    ui.status.textContent = res ? `Could not load the decisions (HTTP ${res.status}${detail ? `: ${detail}` : ''}).`
      : 'Network problem — could not load the decisions. Try again.';
    return;
  }
  state.count = Number.isInteger(data.count) ? data.count : data.results.length;
  ui.list.replaceChildren(...data.results.filter(isObj).map(item));
  const matching = state.query ? ` for patients matching “${state.query}”` : '';
  ui.status.textContent = state.count
    ? `${state.count} decision${state.count === 1 ? '' : 's'} in the last 24 hours${matching}; showing ${state.offset + 1}–${state.offset + data.results.length}.`
    : `No decisions in the last 24 hours${matching}.`;
  ui.prev.disabled = state.offset === 0;
  ui.next.disabled = state.offset + PAGE_SIZE >= state.count;
  ui.pager.hidden = state.count <= PAGE_SIZE;
}

function runSearch(now) {
  clearTimeout(state.timer);
  const run = () => {
    const query = ui.search.value.trim();
    if (query === state.query && !now) return;
    state.query = query;
    state.offset = 0;
    load();
  };
  if (now) run();
  else state.timer = setTimeout(run, SEARCH_DELAY_MS);
}

function show(view) {
  state.shown = view === 'decided';
  for (const [tab, selected] of [[ui.waitingTab, !state.shown], [ui.decidedTab, state.shown]]) {
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
  }
  ui.panes.hidden = state.shown;
  ui.section.hidden = !state.shown;
  root.classList.toggle('inbox--decided', state.shown);
  if (state.shown) load(); // fresh each time it is opened: decisions keep coming
}

function build(panes) {
  const waitingId = uid('tab');
  const decidedId = uid('tab');
  panes.id = panes.id || 'inbox-waiting';
  panes.setAttribute('role', 'tabpanel');
  panes.setAttribute('aria-labelledby', waitingId);
  const waitingTab = h('button', { type: 'button', role: 'tab', id: waitingId, class: 'views__tab', 'aria-controls': panes.id, 'aria-selected': 'true', 'data-testid': 'view-waiting' }, 'Waiting');
  const decidedTab = h('button', { type: 'button', role: 'tab', id: decidedId, class: 'views__tab', 'aria-controls': 'inbox-decided', 'aria-selected': 'false', tabindex: '-1', 'data-testid': 'view-decided' }, 'Decided (24 h)');
  const searchId = uid('decided-search');
  const searchInput = h('input', { type: 'search', id: searchId, class: 'input', 'data-testid': 'decided-search', placeholder: 'Search patient ref', autocomplete: 'off' });
  const status = h('p', { class: 'decided__status', role: 'status', 'data-testid': 'decided-status' });
  const list = h('ol', { class: 'decided__list', 'data-testid': 'decided-list', 'aria-label': 'Decisions, newest first' });
  const prev = h('button', { type: 'button', class: 'btn btn--small', 'data-testid': 'decided-prev' }, 'Newer');
  const next = h('button', { type: 'button', class: 'btn btn--small', 'data-testid': 'decided-next' }, 'Older');
  const pager = h('div', { class: 'queue__pager', hidden: true }, prev, next);
  const form = h('form', { class: 'decided__search', role: 'search' },
    h('label', { for: searchId }, 'Search by patient ref'), searchInput,
    h('button', { type: 'submit', class: 'btn btn--small' }, 'Search'));
  const section = h('section', { id: 'inbox-decided', class: 'decided', role: 'tabpanel', 'aria-labelledby': decidedId, 'data-testid': 'decided-view', hidden: true },
    h('h2', { class: 'visually-hidden' }, 'Decided in the last 24 hours'), form, status, list, pager);
  const tabs = h('div', { class: 'views', role: 'tablist', 'aria-label': 'Inbox views' }, waitingTab, decidedTab);
  ui = { panes, waitingTab, decidedTab, search: searchInput, status, list, prev, next, pager, section, tabs };

  waitingTab.addEventListener('click', () => show('waiting'));
  decidedTab.addEventListener('click', () => show('decided'));
  tabs.addEventListener('keydown', (ev) => { // arrow keys move between tabs (ARIA tabs pattern)
    if (ev.key !== 'ArrowLeft' && ev.key !== 'ArrowRight') return;
    ev.preventDefault();
    const target = ev.target === waitingTab ? decidedTab : waitingTab;
    show(target === decidedTab ? 'decided' : 'waiting');
    target.focus();
  });
  searchInput.addEventListener('input', () => runSearch(false));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    runSearch(true);
  });
  prev.addEventListener('click', () => { state.offset = Math.max(0, state.offset - PAGE_SIZE); load(); });
  next.addEventListener('click', () => { state.offset += PAGE_SIZE; load(); });
}

/** Put the two tabs under the inbox's heading and the Decided view beside the queue. */
export function initDecided() {
  const head = root && root.querySelector('.inbox__head');
  const panes = root && root.querySelector('.panes');
  if (!head || !panes) return;
  build(panes);
  head.after(ui.tabs);
  panes.after(ui.section);
}
