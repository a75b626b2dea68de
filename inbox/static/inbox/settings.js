/* The reviewer's inbox settings, remembered in this browser (localStorage):
 * single-key shortcuts on or off (WCAG 2.1.4: a speech-input user must be able to turn
 * them off), and the layout — the compact queue with a detail pane, or every card in full. */
import { root } from './page.js';

const KEYS = { shortcuts: 'condor.inbox.shortcuts', view: 'condor.inbox.view' };
const DEFAULTS = { shortcuts: 'on', view: 'queue' };
const ALLOWED = { shortcuts: ['on', 'off'], view: ['queue', 'full'] };

function read(name) {
  let value = null;
  try { value = window.localStorage.getItem(KEYS[name]); } catch (_) { /* storage blocked: defaults */ }
  return ALLOWED[name].includes(value) ? value : DEFAULTS[name];
}

function write(name, value) {
  try { window.localStorage.setItem(KEYS[name], value); } catch (_) { /* kept for this page only */ }
}

const state = { shortcuts: read('shortcuts'), view: read('view') };
const listeners = [];

export const shortcutsOn = () => state.shortcuts === 'on';
export const view = () => state.view;
export const onSettingsChange = (fn) => listeners.push(fn);

function set(name, value) {
  if (state[name] === value) return;
  state[name] = value;
  write(name, value);
  apply();
  for (const fn of listeners) fn(name, value);
}

function apply() {
  if (!root) return;
  root.classList.toggle('inbox--queue', state.view === 'queue');
  root.classList.toggle('inbox--full', state.view === 'full');
  root.classList.toggle('inbox--no-keys', state.shortcuts === 'off');
  const box = root.querySelector('[data-testid="shortcuts-toggle"]');
  if (box) box.checked = state.shortcuts === 'on';
  for (const radio of root.querySelectorAll('input[name="inbox-view"]')) radio.checked = radio.value === state.view;
}

/** Wire the settings menu in the page (inbox/templates/inbox/inbox.html). */
export function initSettings() {
  if (!root) return;
  apply();
  root.addEventListener('change', (ev) => {
    const t = ev.target;
    if (!(t instanceof HTMLInputElement)) return;
    if (t.dataset.testid === 'shortcuts-toggle') set('shortcuts', t.checked ? 'on' : 'off');
    else if (t.name === 'inbox-view' && t.checked) set('view', t.value);
  });
}
