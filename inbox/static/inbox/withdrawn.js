/* A card withdrawn while the reviewer works on it (SPEC 4): its run was superseded, stopped or
 * closed. The server's `card.removed` says `status: "withdrawn"`, the run's end (`cause`) and
 * who stopped it. A card nobody is working on just goes; one the reviewer has open, is typing
 * in or deciding stays where it is, every decision control off, under "Withdrawn: the agent
 * started a new run", with the reject reason, the edited args or the answers they typed still
 * in place to read or copy, until they dismiss it. It counts as waiting nowhere (list.js). */
import { h } from './dom.js';
import { revealedText } from './reveal.js';
import { str } from './values.js';

/** Why the card went, in the reviewer's words: "Withdrawn: the agent started a new run". */
export function withdrawnPhrase(info) {
  const by = info && str(info.stopped_by) ? revealedText(str(info.stopped_by)) : '';
  switch (info && info.cause) {
    case 'superseded': return 'Withdrawn: the agent started a new run';
    case 'user_stopped': return by ? `Withdrawn: ${by} stopped the run` : 'Withdrawn: the run was stopped';
    case 'approval_denied': return by ? `Withdrawn: ${by} rejected another card of this run and stopped it` : 'Withdrawn: the run was stopped';
    case 'sweep_idle':
    case 'sweep_suspend_ttl':
    case 'timeout': return 'Withdrawn: the run was closed after waiting too long';
    case 'resume_schema_rejected': return 'Withdrawn: the run failed';
    default: return 'Withdrawn: the agent closed the run';
  }
}

/** Keep the card on screen as withdrawn (its DOM is built: the reviewer is working on it). */
export function keepWithdrawn(entry, info) {
  showGone(entry, withdrawnPhrase(info), 'Nothing can be decided on this card any more');
}

/** Our decision was refused as too late (409) before the card's removal said why: the card stays,
 * what was typed with it, until the removal comes (list.js) or the reviewer dismisses it. */
export function keepUntilTold(entry) {
  showGone(entry, 'Not applied: this card stopped waiting for a decision just now', 'Condor says why in a moment');
  entry.gone.unsure = true;
}

function showGone(entry, text, then) {
  entry.gone = { text };
  entry.countdownText = 'Withdrawn';
  const r = entry.refs;
  if (!r.gone) {
    r.goneText = h('span', { class: 'card__gone-text' });
    r.gone = h('div', { class: 'card__gone', role: 'alert', 'data-testid': 'card-withdrawn' }, r.goneText,
      h('button', { type: 'button', class: 'btn btn--small', 'data-action': 'dismiss', 'data-testid': 'dismiss-withdrawn' }, 'Dismiss'));
    entry.el.querySelector('.card__head').after(r.gone);
  }
  r.goneText.textContent = `${text}. ${then}; what you typed is kept below until you dismiss it.`;
  r.countdownText.data = entry.countdownText;
  entry.el.classList.add('is-withdrawn');
}
