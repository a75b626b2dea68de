/* Why a card is in front of the reviewer, in words a clinician reads: the agent's reason for
 * the call (its `metadata.rationale`, its own words: text, never markup), why Condor wants a
 * human for it (the rule's sentence), and, folded, the conversation turn that led to the call
 * (the last user message and the agent's text before it, from the session's messages). Every
 * string is shown revealed (reveal.js); a turn with hidden characters opens whole, so none
 * stays folded away while the card warns of them. */
import { clockTime, timeOf } from './countdown.js';
import { h, uid } from './dom.js';
import { hasHidden, revealed, setRevealed } from './reveal.js';
import { canonical, isObj, str } from './values.js';

// A message longer than this shows its start and a "Show more" button.
const SHORT_CHARS = 280;

/** The why block's DOM, built once per card (card.js puts it under the card's meta line). */
export function buildWhy(refs) {
  const rationaleTitle = uid('why-agent');
  refs.rationale = h('p', { class: 'why__text', 'data-testid': 'card-rationale' });
  refs.rationaleBlock = h('section', { class: 'why__agent', 'data-testid': 'card-why', 'aria-labelledby': rationaleTitle, hidden: true },
    h('h3', { class: 'why__label', id: rationaleTitle }, 'Why the agent wants this'), refs.rationale);
  refs.explanation = h('span', { class: 'why__sentence', 'data-testid': 'card-explanation' });
  refs.needsYou = h('p', { class: 'why__needs', 'data-testid': 'card-needs-you' },
    h('span', { class: 'why__label why__label--inline' }, 'Why it needs you'), ' ', refs.explanation);
  refs.turn = h('div', { class: 'turn__said' });
  refs.turnBlock = h('details', { class: 'card__fold card__turn', 'data-testid': 'card-turn', hidden: true },
    h('summary', { class: 'fold__summary' }, 'Conversation before this request'), refs.turn);
  refs.turnKey = null;
  return h('div', { class: 'card__why' }, refs.rationaleBlock, refs.needsYou, refs.turnBlock);
}

/** Write a card's reasons into the block built above; the turn is rebuilt only when it changed. */
export function applyWhy(refs, card) {
  const rationale = str(card.rationale);
  setRevealed(refs.rationale, rationale);
  refs.rationaleBlock.hidden = !rationale;
  const explanation = str(card.explanation);
  setRevealed(refs.explanation, explanation);
  refs.needsYou.hidden = !explanation;

  const key = canonical(card.turn);
  if (key === refs.turnKey) return;
  refs.turnKey = key;
  const turn = isObj(card.turn) ? card.turn : {};
  const said = [messageBlock(turn.user, 'user'), messageBlock(turn.agent, 'agent')].filter(Boolean);
  refs.turn.replaceChildren(...said);
  refs.turnBlock.hidden = !said.length;
  if (said.some((el) => el.dataset.hidden === 'true')) refs.turnBlock.open = true;
}

const WHO = { user: 'User', agent: 'Agent, before this request' };

/** One message of the turn: who said it and when, and its text. */
function messageBlock(message, kind) {
  if (!isObj(message) || !str(message.text)) return null;
  const text = str(message.text);
  const at = timeOf(message.at, NaN);
  const hidden = hasHidden(text);
  const body = h('p', { class: 'turn__text', 'data-testid': `turn-${kind}-text` });
  const el = h('div', { class: `turn__msg turn__msg--${kind}`, 'data-testid': `turn-${kind}`, 'data-hidden': String(hidden) },
    h('p', { class: 'turn__who' }, WHO[kind], Number.isFinite(at) ? h('span', { class: 'turn__at' }, ` · ${clockTime(at)}`) : null),
    body);
  // The ellipses are the page's, outside the revealed text: the text's own characters are all marked.
  const cut = message.cut === true ? '…' : '';
  // Long text shows its start; all of it when it holds anything the reviewer must see marked.
  if (text.length <= SHORT_CHARS || hidden) {
    body.append(revealed(text), cut);
    return el;
  }
  const more = h('button', { type: 'button', class: 'btn btn--quiet btn--small turn__more', 'aria-expanded': 'false', 'data-testid': `turn-${kind}-more` },
    'Show more', h('span', { class: 'visually-hidden' }, ` of the ${kind}\u2019s message`));
  const show = (whole) => {
    body.replaceChildren(revealed(whole ? text : text.slice(0, SHORT_CHARS).trimEnd()), whole ? cut : '…');
    more.firstChild.data = whole ? 'Show less' : 'Show more';
    more.setAttribute('aria-expanded', String(whole));
  };
  more.addEventListener('click', () => show(more.getAttribute('aria-expanded') !== 'true'));
  show(false);
  el.append(more);
  return el;
}
