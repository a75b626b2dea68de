/* Every control on a card is named for the card it acts on: with nine cards in full, a
 * screen reader's list of buttons reads "Approve New prescription for MRN-20417", not
 * nine times "Approve". The name is the control's own visible text first, then the
 * card's hidden "target" line (aria-labelledby), so what is seen is what a speech-input
 * user says (WCAG 2.5.3, axe: label-content-name-mismatch), and a control whose text
 * changes (Claim / Release) stays named right without being told. */
import { h, uid } from './dom.js';

/** The hidden line the card's controls are also named by; card.js keeps its text. */
export function buildTarget(refs) {
  refs.target = h('span', { id: uid('card-target'), hidden: true, 'data-testid': 'card-target' });
  return refs.target;
}

export function setTarget(refs, action, patient, session) {
  const text = `${action} for ${patient || session}`;
  if (refs.target.textContent !== text) refs.target.textContent = text;
}

// The reason boxes and the args editor: named by their own label, then the card.
const LABELLED = '[data-role="reason"], [data-role="stop-reason"], [data-role="editor"]';

/** Name the card's controls not named yet (panels are built lazily: called on every sync). */
export function nameControls(entry) {
  const target = entry.refs.target;
  if (!entry.el || !target) return;
  for (const el of entry.el.querySelectorAll('button:not([aria-labelledby]), summary:not([aria-labelledby])')) {
    if (!el.id) el.id = uid('control');
    el.setAttribute('aria-labelledby', `${el.id} ${target.id}`);
  }
  for (const el of entry.el.querySelectorAll(`:is(${LABELLED}):not([aria-labelledby])`)) {
    const label = el.id ? entry.el.querySelector(`label[for="${el.id}"]`) : null;
    if (!label) continue;
    if (!label.id) label.id = uid('label');
    el.setAttribute('aria-labelledby', `${label.id} ${target.id}`);
  }
}
