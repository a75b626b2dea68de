/* The session a card was asked in: the session's age band, consent and the run's autonomy,
 * and for a tainted session the result that tainted it. Why the agent asks is why.js's. */
import { clockTime, timeOf } from './countdown.js';
import { h } from './dom.js';
import { revealed } from './reveal.js';
import { isObj, patientContext, str } from './values.js';

const AGE = { adult: 'Adult', teen: 'Teen', child: 'Child', unknown: 'Age unknown (treated as child)' };
const AUTONOMY = { autonomous: 'Autonomous (clinician typed it)', guarded: 'Guarded (supervised)', ambient: 'Ambient (supervised)' };

/** The context block's DOM, built once per card (card.js puts it under the card's reasons). */
export function buildContext(refs) {
  refs.facts = h('ul', { class: 'ctx__facts', 'data-testid': 'card-session-facts', 'aria-label': 'Session' });
  refs.taint = h('p', { class: 'ctx__taint', role: 'note', 'data-testid': 'card-taint', hidden: true });
  return h('div', { class: 'card__context', 'data-testid': 'card-context' }, refs.facts, refs.taint);
}

const fact = (name, value, testid, warn = false) => h('li', { class: `ctx__fact${warn ? ' ctx__fact--warn' : ''}`, 'data-testid': testid },
  h('span', { class: 'ctx__fact-name' }, `${name}: `), value);

/** Write a card's context into the block built above. */
export function applyContext(refs, card) {
  const session = isObj(card.session) ? card.session : {};
  const patient = patientContext(card); // the age band and consent the approval is bound to
  const facts = [];
  const age = str(patient.age_band);
  if (age) facts.push(fact('Age', AGE[age] || age, 'fact-age', age !== 'adult'));
  if (typeof patient.consent === 'boolean') facts.push(fact('Consent', patient.consent ? 'Recorded' : 'Not recorded', 'fact-consent', !patient.consent));
  const autonomy = str(card.autonomy);
  if (autonomy) facts.push(fact('Autonomy', AUTONOMY[autonomy] || autonomy, 'fact-autonomy'));
  const ward = str(session.care_unit);
  if (ward) facts.push(fact('Ward', revealed(ward), 'fact-ward')); // the session's, as the agent wrote it
  refs.facts.replaceChildren(...facts);
  refs.facts.hidden = !facts.length;

  const by = isObj(card.tainted_by) ? card.tainted_by : null;
  if (session.tainted === true) {
    const at = by ? timeOf(by.at, NaN) : NaN;
    const source = by ? ` by the result of ${str(by.tool) || 'a tool'}${Number.isFinite(at) ? ` at ${clockTime(at)}` : ''}` : '';
    refs.taint.textContent = `Tainted session: untrusted content entered it${source}. Check the arguments were not steered by it.`;
    refs.taint.hidden = false;
  } else {
    refs.taint.hidden = true;
  }
}
