"""Hidden and look-alike characters, made visible in the admin (issue 9, item 1).

The same rules as the reviewers' inbox (static/inbox/reveal.js), so compliance reads
what the reviewer read: a hidden character (a control other than newline and tab, a
format character such as a bidi override or zero-width space, private-use or
unassigned code points, line and paragraph separators, every space but U+0020, blank
letters and variation selectors) is *replaced* by a marked ``⟨U+202E⟩``; a look-alike
(a non-ASCII character NFKC folds to ASCII, superscripts excepted; a non-Latin letter
in a word with ASCII letters or digits; a word of Cyrillic or Greek letters that mimic
Latin ones in otherwise Latin text) is kept and followed by its mark. Everything else
is HTML-escaped text.
"""

import re
import unicodedata

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

WARNING = "This record contains hidden or look-alike characters. They are shown as ⟨U+…⟩ marks."

_PLAIN = re.compile(r"[\x20-\x7e\n\t]*")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp", "Zs"})
_BLANK_LOOKING = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0, *range(0x180B, 0x1810), *range(0xFE00, 0xFE10),
     *range(0xE0100, 0xE01F0)])
_SUPER_SUB = re.compile(r"[\u00b2\u00b3\u00b9\u2070-\u209f]")
_WORD = re.compile(r"[^\W_]+")  # letters, digits (and the marks inside words)
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_MIMICS = frozenset("АВЕЅІЈКМНОРСТХУаеіјорсуххѕԁԛԝһӏԌԜΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ")

TEXT, HIDDEN, LOOKALIKE = "text", "hidden", "lookalike"


def code_of(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def _is_hidden(ch: str) -> bool:
    if ch in "\n\t ":
        return False
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES or ord(ch) in _BLANK_LOOKING


def _folds_to_ascii(ch: str) -> bool:
    if ch.isascii() or _SUPER_SUB.match(ch):
        return False
    folded = unicodedata.normalize("NFKC", ch)
    return folded != ch and folded.isascii() and folded.isprintable()


def _foreign_letter(ch: str) -> bool:
    """A letter not of the Latin script (by its Unicode name, which starts with the script)."""
    return unicodedata.category(ch).startswith("L") and not (
        ch.isascii() or unicodedata.name(ch, "").startswith("LATIN "))


def _lookalike_letters(text: str) -> set[int]:
    words = list(_WORD.finditer(text))
    latin_text = bool(re.search(r"[A-Za-z]", text)) and all(
        not _foreign_letter(ch) or ch in _MIMICS for word in words for ch in word.group())
    flagged = set()
    for word in words:
        chars = word.group()
        has_foreign = any(_foreign_letter(ch) for ch in chars)
        mixed = has_foreign and bool(_ASCII_ALNUM.search(chars))
        mimic = latin_text and has_foreign and all(
            not unicodedata.category(ch).startswith("L") or ch in _MIMICS for ch in chars)
        if mixed or mimic:
            flagged.update(word.start() + i for i, ch in enumerate(chars) if _foreign_letter(ch))
    return flagged


def scan(text: str) -> list[tuple[str, str]]:
    """`text` as (kind, text) parts: runs of plain text, and single hidden or look-alike characters."""
    if _PLAIN.fullmatch(text):
        return [(TEXT, text)]
    letters = _lookalike_letters(text)
    parts: list[tuple[str, str]] = []
    plain = []
    for at, ch in enumerate(text):
        kind = HIDDEN if _is_hidden(ch) else LOOKALIKE if at in letters or _folds_to_ascii(ch) else TEXT
        if kind == TEXT:
            plain.append(ch)
            continue
        if plain:
            parts.append((TEXT, "".join(plain)))
            plain = []
        parts.append((kind, ch))
    if plain:
        parts.append((TEXT, "".join(plain)))
    return parts


def has_hidden(text) -> bool:
    return isinstance(text, str) and any(kind != TEXT for kind, _ in scan(text))


def contains_hidden(value) -> bool:
    """Whether any key or string anywhere in a JSON-like value has hidden or look-alike characters."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if has_hidden(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def reveal(text: str) -> SafeString:
    """`text` as HTML: escaped, with each hidden or look-alike character as a marked span."""
    html = []
    for kind, part in scan(text):
        if kind == TEXT:
            html.append(escape(part))
        elif kind == HIDDEN:
            html.append(format_html('<span class="reveal reveal--hidden" title="Hidden character {}">⟨{}⟩</span>',
                                    code_of(part), code_of(part)))
        else:
            html.append(format_html('<span class="reveal reveal--lookalike" title="Look-alike character {}">'
                                    "{}⟨{}⟩</span>", code_of(part), part, code_of(part)))
    return mark_safe("".join(html))  # noqa: S308 - every part above is escaped or built by format_html


class HiddenCharactersWarningMixin:
    """Admin pages of records that carry agent text: a warning at the top of a record whose
    fields named in `revealed` hold hidden or look-alike characters. The JSON and text
    renderers (condor/admin_display.py) mark each such character where it sits.
    """

    revealed: tuple[str, ...] = ()

    class Media:
        css = {"all": ("approvals/reveal.css",)}

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, unquote(object_id))
        if obj is not None and any(contains_hidden(getattr(obj, name)) for name in self.revealed):
            messages.warning(request, WARNING)
        return super().change_view(request, object_id, form_url, extra_context)
