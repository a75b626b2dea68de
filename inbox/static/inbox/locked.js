/* The args a reviewer's edit may not change: the card's `locked_args`, which name the patient
 * (approvals/locked_args.py). The field-by-field form shows them read-only; an edit in the JSON
 * editor that touches one is held back with the reason, as the server would refuse it (400 locked_arg). */
import { pathText } from './args.js';

/** The card's locked paths ("patient_ref", "order.mrn", "orders[0].mrn"), as text. */
export const lockedOf = (card) => (Array.isArray(card.locked_args) ? card.locked_args.filter((p) => typeof p === 'string' && p) : []);

const within = (path, outer) => path === outer || path.startsWith(`${outer}.`) || path.startsWith(`${outer}[`);

/** The first locked path that `changes` (diffArgs) alter, or '' when they leave every one alone. */
export function lockedTouched(changes, locked) {
  for (const change of changes) {
    const path = pathText(change.path);
    const hit = locked.find((l) => within(path, l) || within(l, path));
    if (hit) return hit;
  }
  return '';
}

export const lockedMessage = (path) => `“${path}” names the patient and cannot be changed. Reject the card instead if the call is for another patient.`;
