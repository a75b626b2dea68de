/* A card's technical details, folded away: the tool and op the agent named, the policy rule
 * that parked the call, and the ids of the run, the tool call and the approval, for whoever
 * must trace the card in the audit log or the admin. The card itself speaks in clinical words
 * (labels.js, why.js). */
import { h } from './dom.js';
import { setRevealed } from './reveal.js';
import { str } from './values.js';

const FIELDS = [
  // [ref, term, testid]
  ['tool', 'Tool', 'card-tool'],
  ['op', 'Operation', 'card-op'],
  ['ruleId', 'Policy rule', 'card-rule'],
  ['runId', 'Run', 'card-run-id'],
  ['callId', 'Tool call', 'card-call-id'],
  ['approvalId', 'Approval', 'card-approval-id'],
];

/** The fold's DOM, built once per card. */
export function buildTechnical(refs) {
  const rows = FIELDS.map(([ref, term, testid]) => {
    refs[ref] = h('code', { class: 'tech__value', 'data-testid': testid });
    refs[`${ref}Row`] = h('div', { class: 'tech__row' }, h('dt', { class: 'tech__term' }, term), h('dd', { class: 'tech__def' }, refs[ref]));
    return refs[`${ref}Row`];
  });
  return h('details', { class: 'card__fold card__tech', 'data-testid': 'card-technical' },
    h('summary', { class: 'fold__summary' }, 'Technical details'),
    h('dl', { class: 'tech__list' }, ...rows));
}

/** Write a card's ids into the fold; an empty one is left out. */
export function applyTechnical(refs, card) {
  const values = { tool: card.tool, op: card.op, ruleId: card.rule_id, runId: card.run_id, callId: card.tool_call_id, approvalId: card.id };
  for (const [ref] of FIELDS) {
    const value = str(values[ref]);
    setRevealed(refs[ref], value);
    refs[`${ref}Row`].hidden = !value;
  }
}
