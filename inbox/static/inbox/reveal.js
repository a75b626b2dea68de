/* Hidden and look-alike characters, made visible ("\u202e5.2\u202c mg" must not read "2.5 mg").
 *
 * Hidden characters are REPLACED by a marker span "⟨U+202E⟩" and never reach the DOM: a
 * bidi control left in a text node would still reorder the text around it. They are:
 * controls other than \n and \t (Cc), format characters (Cf: bidi controls, zero-width
 * joiners, U+FEFF, soft hyphen, tags...), private-use and unassigned code points, line
 * and paragraph separators, every space but U+0020, and the blank letters and variation
 * selectors browsers draw as nothing.
 *
 * Look-alike characters are KEPT and followed by a marker: a non-ASCII character that
 * NFKC folds to ASCII (fullwidth "ｄ", mathematical "𝐝", "ﬁ"; superscripts like the ²
 * of mg/m² excepted), a non-Latin letter inside a word that also has ASCII letters or
 * digits ("dеlete" with a Cyrillic е), and a word spelled entirely in Cyrillic or Greek
 * letters that mimic Latin ones ("раураl") in text that is otherwise Latin.
 *
 * Right-to-left characters (rtl.js: bidi classes R, AL and AN, Hebrew, Arabic with its
 * tatweel U+0640, Syriac, Thaana, N'Ko..., and Arabic digits) in a text that also has
 * digits or letters of another script are KEPT, each in its own left-to-right isolated
 * box, and followed by a marker: "\u0640 2.5 / 25 \u0640" must not read "25 / 2.5". The
 * bidi algorithm reorders only around strong right-to-left characters; a box is one
 * neutral character to the text around it, so no such character is left outside a box
 * and nothing is reordered. A text of one script (a name in Hebrew) is left as written.
 *
 * core/display.py applies the same rules in the admin. All output is text nodes
 * and spans built by dom.js: never HTML.
 */
import { h } from './dom.js';
import { RTL } from './rtl.js';
import { isObj } from './values.js';

const PLAIN = /^[\x20-\x7e\n\t]*$/;
const HIDDEN = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\u{e0100}-\u{e01ef}]/u;
const SUPER_SUB = /[\u00b2\u00b3\u00b9\u2070-\u209f]/;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;
const LATIN = /\p{Script=Latin}/u;
const ASCII_ALNUM = /[A-Za-z0-9]/;
// Cyrillic and Greek letters drawn like Latin ones.
const MIMICS = new Set('АВЕЅІЈКМНОРСТХУаеіјорсуххѕԁԛԝһӏԌԜΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ');

export const codeOf = (ch) => `U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
const marker = (ch) => `⟨${codeOf(ch)}⟩`;

function isHidden(ch) {
  return ch !== '\n' && ch !== '\t' && ch !== ' ' && HIDDEN.test(ch);
}

function foldsToAscii(ch) {
  if (ch.charCodeAt(0) < 0x80 || SUPER_SUB.test(ch)) return false;
  const folded = ch.normalize('NFKC');
  return folded !== ch && /^[\x20-\x7e]+$/.test(folded);
}

/** Indexes (code unit offsets) of look-alike letters in `text`, by the word rules above, `text` read as part of `context`. */
function lookalikeLetters(text, context) {
  const flagged = new Set();
  const words = [...text.matchAll(WORD)];
  const foreign = (ch) => LETTER.test(ch) && !LATIN.test(ch);
  const latinText = /[A-Za-z]/.test(context)
    && [...context.matchAll(WORD)].every((m) => [...m[0]].every((ch) => !foreign(ch) || MIMICS.has(ch)));
  for (const m of words) {
    const chars = [...m[0]];
    const mixed = chars.some((ch) => ASCII_ALNUM.test(ch)) && chars.some(foreign);
    const mimic = latinText && chars.some(foreign) && chars.every((ch) => !LETTER.test(ch) || MIMICS.has(ch));
    if (!mixed && !mimic) continue;
    let at = m.index;
    for (const ch of chars) {
      if (foreign(ch)) flagged.add(at);
      at += ch.length;
    }
  }
  return flagged;
}

/** Right-to-left characters with digits (Arabic ones too) or letters of another script: what the bidi algorithm reorders. */
function mixesDirections(text) {
  let rtl = false;
  let other = false;
  for (const ch of text) {
    const right = RTL.test(ch);
    rtl ||= right;
    other ||= DIGIT.test(ch) || (!right && LETTER.test(ch));
  }
  return rtl && other;
}

/** [{kind: 'text'|'hidden'|'rtl'|'lookalike', text}] covering `text`, read as part of `context` (the
 * whole line it is drawn in: what mixes directions, or is otherwise Latin, is judged over all of it). */
function scan(text, context = text) {
  if (PLAIN.test(text)) return [{ kind: 'text', text }];
  const letters = lookalikeLetters(text, context);
  const mixed = mixesDirections(context);
  const parts = [];
  let plain = '';
  let at = 0;
  for (const ch of text) {
    const kind = isHidden(ch) ? 'hidden' : mixed && RTL.test(ch) ? 'rtl' : letters.has(at) || foldsToAscii(ch) ? 'lookalike' : 'text';
    at += ch.length;
    if (kind === 'text') {
      plain += ch;
      continue;
    }
    if (plain) parts.push({ kind: 'text', text: plain });
    plain = '';
    parts.push({ kind, text: ch });
  }
  if (plain) parts.push({ kind: 'text', text: plain });
  return parts;
}

/** Whether `text` has anything the reviewer could misread. */
export function hasHidden(text) {
  return typeof text === 'string' && !PLAIN.test(text) && scan(text).some((p) => p.kind !== 'text');
}

/** Whether any key or string anywhere in a JSON value has hidden or look-alike characters. */
export function containsHidden(value) {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (hasHidden(v)) return true;
    } else if (Array.isArray(v)) {
      stack.push(...v);
    } else if (isObj(v)) {
      for (const key of Object.keys(v)) {
        if (hasHidden(key)) return true;
        stack.push(v[key]);
      }
    }
  }
  return false;
}

const KEPT = {
  lookalike: { testid: 'lookalike-char', title: 'Look-alike character' },
  rtl: { testid: 'rtl-char', title: 'Right-to-left character' },
};

/** `text` as nodes: plain runs as text nodes, each hidden, right-to-left or look-alike character as a
 * marked span. A piece of a longer line passes the line as `context`, so it is judged as the line is. */
export function revealed(text, context = text) {
  const fragment = document.createDocumentFragment();
  for (const part of scan(String(text), String(context))) {
    if (part.kind === 'text') fragment.append(part.text);
    else if (part.kind === 'hidden') {
      fragment.append(h('span', { class: 'reveal reveal--hidden', 'data-testid': 'hidden-char', title: `Hidden character ${codeOf(part.text)}` }, marker(part.text)));
    } else {
      const { testid, title } = KEPT[part.kind];
      // dir="ltr" on the box, not only CSS: a parent's dir="auto" skips it when it guesses a direction.
      fragment.append(h('span', { class: `reveal reveal--${part.kind}`, dir: 'ltr', 'data-testid': testid, title: `${title} ${codeOf(part.text)}` }, part.text, h('span', { class: 'reveal__code' }, marker(part.text))));
    }
  }
  return fragment;
}

/** `text` with markers, as one string: for places that hold text only (an <option>, a toast). */
export function revealedText(text) {
  return scan(String(text)).map((p) => (p.kind === 'text' ? p.text : p.kind === 'hidden' ? marker(p.text) : p.text + marker(p.text))).join('');
}

/** Write `text` into `el`, revealed. */
export function setRevealed(el, text) {
  el.replaceChildren(revealed(text));
}

/** JSON text with every hidden character, and every right-to-left one among other text, as a \uXXXX escape:
 * the same value, and nothing in an editor to hide or reorder. */
export function escapeHidden(json) {
  if (PLAIN.test(json)) return json;
  const mixed = mixesDirections(json);
  let out = '';
  for (const ch of json) {
    if (isHidden(ch) || (mixed && RTL.test(ch))) {
      for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return out;
}
