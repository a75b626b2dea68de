"""Which mail domains a comms tool's value names, read with the standard library's address parser.

A value is an *address value* when it is shaped like one: a bare ``local@domain`` (no
whitespace, something on each side of an ``@``), an angle address ``Name <local@domain>``, a
list or group of such parts (split at ``,``, ``;`` or ``:``), words that are each a bare
address (split at whitespace alone), any of these once comments in parentheses are set aside,
or a ``mailto:`` URL. Other text that merely holds an ``@``
("see you @ 5", a letter that mentions an address) is not a destination (SPEC section 2 checks
values that are destinations as a whole).

An address value is parsed by ``email.headerregistry`` (the stdlib's RFC 5322 address-list
parser, as for a ``To:`` header), then read strictly: it names a destination Condor can be sure
of only if every address in it has a plain local part and a domain, and nothing in it could
make a mail transfer agent deliver elsewhere than that domain. These are *ambiguous*, and an
ambiguous value is a destination no allow-list holds:

* more ``@`` than addresses: ``x@evil.example@clinic.example``, a quoted local part or display
  name holding ``@`` (``"x@evil.example"@clinic.example``), a source route
  (``<@evil.example:dr@clinic.example>``);
* ``%`` or ``!`` in a local part (``x%evil.example@clinic.example``, ``evil!x@clinic.example``):
  relay routing that some MTAs still honour;
* a comment in parentheses anywhere (``dr@clinic.example (evil.example)``);
* an IP literal as the domain (``dr@[10.0.0.7]``);
* addresses separated by whitespace alone (``dr@clinic.example x@evil.example``): some mail
  programs read each as a recipient, the parser reads none;
* anything the parser reports as invalid, a control character or a backslash, no address at
  all, or a value over ``MAX_ADDRESS_VALUE`` characters or past the call's budget (not parsed).

A ``mailto:`` URL (RFC 6068) names the recipients of its path and of its ``to``, ``cc`` and
``bcc`` header fields (``mailto:dr@clinic.example?bcc=x@evil.example`` names both), each
percent-decoded and read as above; one with no recipient at all is ambiguous.
"""

from __future__ import annotations

import re
from email import errors
from email.headerregistry import HeaderRegistry
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import unquote

# A recipient line is short; a longer value holding an address shape is refused unparsed,
# and so is any past the call's budget, so a client cannot make the gate parse megabytes
# as headers.
MAX_ADDRESS_VALUE = 2048
MAX_ADDRESS_TEXT_PER_CALL = 8192

_MAILTO = re.compile(r"mailto:", re.IGNORECASE)
_MAILTO_RECIPIENT_FIELDS = frozenset({"to", "cc", "bcc"})
_BARE = re.compile(r"\S+\s*@\s*\S+")
_ANGLE = re.compile(r"<[^<>]*@[^<>]*>")
_PART_SEPARATOR = re.compile(r"[,;:]")
_ROUTING = re.compile(r"[@%!]")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\\]")
_CACHEABLE_LENGTH = 512

_headers = HeaderRegistry()


class Recipients(NamedTuple):
    """The domains an address value names; ``ambiguous`` if any of its recipients is."""

    domains: tuple[str, ...]
    ambiguous: bool


_AMBIGUOUS = Recipients((), True)


def _without_comments(text: str) -> str:
    """`text` with every parenthesised comment, nested ones too, read as a space (one pass)."""
    kept, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if not depth:
                kept.append(" ")
        elif not depth:
            kept.append(ch)
    return text if depth else "".join(kept)  # an unclosed comment hides nothing


def _address_shaped(text: str) -> bool:
    if "@" not in text:
        return False
    if "(" in text:
        text = _without_comments(text).strip()
    if _BARE.fullmatch(text) or _ANGLE.search(text):
        return True
    if any(_BARE.fullmatch(part.strip()) for part in _PART_SEPARATOR.split(text)):
        return True
    # "a@x b@y": a list to sendmail's old-style headers and to mail(1), no address to RFC 5322.
    words = text.split()
    return len(words) > 1 and all(_BARE.fullmatch(word) for word in words)


def _read_list(text: str) -> Recipients:
    """Every domain of an address list, strictly (see the module docstring)."""
    if not text or _UNSAFE.search(text) or "(" in text:
        return _AMBIGUOUS
    if text.endswith(".") and not any(ch.isspace() or ch in "<>,;:" for ch in text):
        text = text[:-1]  # a bare address's fully-qualified domain: one trailing dot, as for hosts
    if ":" not in text:
        text = text.replace(";", ",")  # "a@x; b@y", as people and mail clients write a list
    try:
        header = _headers("to", text)
        addresses = header.addresses
    except (errors.MessageError, ValueError, IndexError, TypeError):
        return _AMBIGUOUS
    if not addresses or text.count("@") != len(addresses):
        return _AMBIGUOUS
    # Obsolete syntax (a period in a display name, spaces around the dots of a local part) is
    # still one reading; an invalid part is not.
    if any(not isinstance(defect, errors.ObsoleteHeaderDefect) for defect in header.defects):
        return _AMBIGUOUS
    domains = []
    for address in addresses:
        local, domain = address.username, address.domain
        if not local or not domain or _ROUTING.search(local) or domain.startswith("["):
            return _AMBIGUOUS
        domains.append(domain)
    return Recipients(tuple(domains), False)


def _read_mailto(text: str) -> Recipients:
    path, _, query = text.partition("?")
    lists = [unquote(path)]
    for field in query.split("&") if query else ():
        name, _, value = field.partition("=")
        if unquote(name).strip().lower() in _MAILTO_RECIPIENT_FIELDS:
            lists.append(unquote(value))
    domains: list[str] = []
    for recipients in lists:
        if not recipients.strip():
            continue  # "mailto:?to=a@b": an empty path is no recipient, not an ambiguous one
        read = _read_list(recipients)
        if read.ambiguous:
            return _AMBIGUOUS
        domains.extend(read.domains)
    return Recipients(tuple(domains), False) if domains else _AMBIGUOUS


def _parse(text: str) -> Recipients:
    mailto = _MAILTO.match(text)
    return _read_mailto(text[mailto.end() :]) if mailto else _read_list(text)


_parse_cached = lru_cache(maxsize=4096)(_parse)


class AddressReader:
    """Reads the address values of one call, at most MAX_ADDRESS_TEXT_PER_CALL characters of them.

    The stdlib parser is slow on some inputs (a few hundred quotes take milliseconds), so past
    the budget an address value is ambiguous without a parse: a call naming more recipient text
    than that fails closed rather than holding its gate call for seconds.
    """

    def __init__(self) -> None:
        self.left = MAX_ADDRESS_TEXT_PER_CALL

    def recipients(self, text: str) -> Recipients | None:
        """The recipients `text` (stripped) names, or None if it is no address value at all."""
        if not _MAILTO.match(text) and not _address_shaped(text):
            return None
        if len(text) > min(self.left, MAX_ADDRESS_VALUE):
            return _AMBIGUOUS
        self.left -= len(text)
        # Agents send to the same few people over and over: short values are parsed once.
        return _parse_cached(text) if len(text) <= _CACHEABLE_LENGTH else _parse(text)
