"""Hidden, look-alike and right-to-left characters, made visible in the admin.

The same rules as the reviewers' inbox (inbox/static/inbox/reveal.js), so compliance reads
what the reviewer read: a hidden character (a control other than newline and tab, a
format character such as a bidi override or zero-width space, private-use or
unassigned code points, line and paragraph separators, every space but U+0020, blank
letters and variation selectors) is *replaced* by a marked ``⟨U+202E⟩``; a look-alike
(a non-ASCII character NFKC folds to ASCII, superscripts excepted; a non-Latin letter
in a word with ASCII letters or digits; a word of Cyrillic or Greek letters that mimic
Latin ones in otherwise Latin text) is kept and followed by its mark. Everything else
is HTML-escaped text.

Right-to-left characters (bidi class R or AL, letters of Hebrew, Arabic with its
tatweel U+0640, Syriac, Thaana, N'Ko...; and AN, the Arabic digits) in a text that also
has digits or other letters are marked too: each one in its own left-to-right isolated
box, followed by its mark. The bidi algorithm reorders only around strong right-to-left
characters; with each of them boxed (a box counts as one neutral character to the text
around it, and a single character cannot be reordered against itself) the text around
holds none, so digits and words show in the order they were sent: "\u0640 2.5 / 25
\u0640" can no longer read "25 / 2.5". ``unicode-bidi: plaintext`` would only pick the
paragraph's direction, and an isolate around the whole value would still reorder inside
it. A text of one script (a name in Hebrew) is left as written.
"""

import re
import unicodedata

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

WARNING = (
    "This record contains hidden or look-alike characters, or right-to-left letters among digits or other "
    "text. They are shown as ⟨U+…⟩ marks."
)

_PLAIN = re.compile(r"[\x20-\x7e\n\t]*")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp", "Zs"})
_BLANK_LOOKING = frozenset(
    [
        0x034F,
        0x115F,
        0x1160,
        0x17B4,
        0x17B5,
        0x2800,
        0x3164,
        0xFFA0,
        *range(0x180B, 0x1810),
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    ]
)
_SUPER_SUB = re.compile(r"[\u00b2\u00b3\u00b9\u2070-\u209f]")
_WORD = re.compile(r"[^\W_]+")  # letters, digits (and the marks inside words)
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_MIMICS = frozenset("АВЕЅІЈКМНОРСТХУаеіјорсуххѕԁԛԝһӏԌԜΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ")

TEXT, HIDDEN, LOOKALIKE, RTL = "text", "hidden", "lookalike", "rtl"
# Strong right-to-left letters (R, AL: Hebrew, Arabic incl. U+0640, Syriac, Thaana, N'Ko, ...) and Arabic digits (AN).
RTL_CLASSES = frozenset({"R", "AL", "AN"})


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
        ch.isascii() or unicodedata.name(ch, "").startswith("LATIN ")
    )


def _lookalike_letters(text: str) -> set[int]:
    words = list(_WORD.finditer(text))
    latin_text = bool(re.search(r"[A-Za-z]", text)) and all(
        not _foreign_letter(ch) or ch in _MIMICS for word in words for ch in word.group()
    )
    flagged = set()
    for word in words:
        chars = word.group()
        has_foreign = any(_foreign_letter(ch) for ch in chars)
        mixed = has_foreign and bool(_ASCII_ALNUM.search(chars))
        mimic = (
            latin_text
            and has_foreign
            and all(not unicodedata.category(ch).startswith("L") or ch in _MIMICS for ch in chars)
        )
        if mixed or mimic:
            flagged.update(word.start() + i for i, ch in enumerate(chars) if _foreign_letter(ch))
    return flagged


def is_rtl(ch: str) -> bool:
    return unicodedata.bidirectional(ch) in RTL_CLASSES


def _mixes_directions(text: str) -> bool:
    """Right-to-left characters with digits (Arabic ones too) or letters of another script: what the bidi
    algorithm reorders."""
    rtl = other = False
    for ch in text:
        right, category = is_rtl(ch), unicodedata.category(ch)
        rtl = rtl or right
        other = other or category == "Nd" or (category[0] == "L" and not right)
    return rtl and other


def scan(text: str) -> list[tuple[str, str]]:
    """`text` as (kind, text) parts: runs of plain text, and single hidden, right-to-left or look-alike characters."""
    if _PLAIN.fullmatch(text):
        return [(TEXT, text)]
    letters = _lookalike_letters(text)
    mixed = _mixes_directions(text)
    parts: list[tuple[str, str]] = []
    plain = []
    for at, ch in enumerate(text):
        kind = (
            HIDDEN
            if _is_hidden(ch)
            else RTL
            if mixed and is_rtl(ch)
            else LOOKALIKE
            if at in letters or _folds_to_ascii(ch)
            else TEXT
        )
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


_TITLES = {LOOKALIKE: "Look-alike character", RTL: "Right-to-left character"}


def reveal(text: str) -> SafeString:
    """`text` as HTML: escaped, with each hidden, right-to-left or look-alike character as a marked span."""
    html = []
    for kind, part in scan(text):
        if kind == TEXT:
            html.append(escape(part))
        elif kind == HIDDEN:
            html.append(
                format_html(
                    '<span class="reveal reveal--hidden" title="Hidden character {}">⟨{}⟩</span>',
                    code_of(part),
                    code_of(part),
                )
            )
        else:
            # dir="ltr" on the box, not only CSS: a parent's dir="auto" skips it when it guesses a direction.
            html.append(
                format_html(
                    '<span class="reveal reveal--{}" dir="ltr" title="{} {}">{}⟨{}⟩</span>',
                    kind,
                    _TITLES[kind],
                    code_of(part),
                    part,
                    code_of(part),
                )
            )
    return mark_safe("".join(html))  # noqa: S308 - every part above is escaped or built by format_html


def marked_text(text: str) -> str:
    """`text` as plain text for a place with no HTML (a CSV cell): each hidden or right-to-left character replaced
    by its mark (a spreadsheet picks a cell's direction itself, so no right-to-left character is left to
    reorder the rest), each look-alike followed by it."""
    return "".join(
        part if kind == TEXT else part + f"⟨{code_of(part)}⟩" if kind == LOOKALIKE else f"⟨{code_of(part)}⟩"
        for kind, part in scan(text)
    )


def escape_marked(json_text: str) -> str:
    """JSON text with every hidden, right-to-left or look-alike character as a \\uXXXX escape: the same value,
    and nothing in it to hide or reorder."""
    out = []
    for kind, part in scan(json_text):
        if kind == TEXT:
            out.append(part)
        else:
            units = part.encode("utf-16-be")
            out.extend(f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2))
    return "".join(out)


class HiddenCharactersWarningMixin:
    """Admin pages of records that carry agent text: a warning at the top of a record whose
    fields named in `revealed` hold hidden or look-alike characters. The JSON and text
    renderers (core/admin_display.py) mark each such character where it sits.
    """

    revealed: tuple[str, ...] = ()

    class Media:
        css = {"all": ("governance/reveal.css",)}

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, unquote(object_id))
        if obj is not None and any(contains_hidden(getattr(obj, name)) for name in self.revealed):
            messages.warning(request, WARNING)
        return super().change_view(request, object_id, form_url, extra_context)
