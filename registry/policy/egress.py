"""Egress check: a call may only name hosts its tool declares in ``allowed_hosts``.

Runs before the decision matrix, for every tool class. Condor sends nothing anywhere
itself; this decides whether the agent may. Matching rules:

* Values under the args keys ``url``, ``endpoint``, ``target_url`` and ``host`` are
  checked (key names matched case-insensitively), at any depth of nested dicts and lists
  -- an agent must not slip a URL past the gate by wrapping it in ``{"request": {...}}``.
* A value containing "://" is a URL; anything else is a bare host, optionally ``:port``.
* Hosts are compared exactly: lowercased, unicode hosts IDNA-encoded (UTS 46, as browsers
  do), one trailing dot dropped. There are no wildcards and no implicit subdomains:
  allowing ``partner.example`` does not allow ``api.partner.example``.
* An allow-list entry ``host`` allows any port; ``host:port`` only that port. A URL with
  no explicit port uses its scheme's default (https 443, http 80); a bare host with no
  port cannot match a ``host:port`` entry.
* Fail closed whenever we cannot be sure which host a client would connect to: a
  non-string or empty value, whitespace, control characters or a backslash anywhere
  (URL parsers disagree on ``https://evil.net\\@good.example``), an invalid port, or a
  host that is not a plain DNS name or IP literal after normalisation (e.g. ``%``-escapes).
  User-info is parsed the standard way, so ``https://good.example@evil.net/`` is evil.net.

For a ``comms`` tool, every string value under any key, and every object key, at any
depth (list items too), is also checked when it is *as a whole* a destination (SPEC
section 2); other text is left alone, so a message body that mentions a host is not a
destination:

* a URL: ``scheme://...``, ``//host...``, or a network scheme with a colon and no
  slashes (``http:evil.example``, which browsers read as a URL); checked like a URL key;
* an e-mail address or list of them, bare, as ``Name <local@domain>``, or a ``mailto:``
  URL with the recipients of its ``to``/``cc``/``bcc`` fields (addresses.py reads them
  with the standard library's parser): every domain must be an allowed host (a
  ``host:port`` entry never matches a domain), and an address that reads ambiguously
  (two ``@``, a quoted local part holding one, ``%`` or ``!`` routing, a comment, an IP
  literal) is a destination no allow-list holds;
* a host name: at least two dot-separated labels of letters, digits, ``-`` or ``_``
  (non-ASCII letters allowed: IDN), optionally ``:port`` and one trailing dot, whose
  last label (the TLD) is 2-63 letters or ``xn--`` punycode and not a common file
  extension that is no top-level domain (so ``discharge.pdf`` is a file name, not a host,
  while ``notes.md``, ``x.zip``, ``run.sh``, ``a.py`` and ``clip.mov`` name hosts in
  Moldova, Saint Helena, Paraguay and Google's .zip and .mov, and are checked);
  ideographic full stops count as dots, as they do in browsers. Also IPv4 dotted quads,
  IPv6 literals and ``localhost``. A plain word, "e.g.", "5.2" or "b.i.d." is not a host name;
* a URL without its scheme: a host name as above followed by a path, query or fragment
  (``evil.example/inbox``, ``evil.example:8080/x``), with no whitespace: its host is checked.

Each such value is checked as written and, when it differs, in its NFKC form too, and must
pass both: a fullwidth ``＠`` or ``．`` is what a library that folds text reads as ``@`` or ``.``.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import idna

from .addresses import AddressReader
from .types import PolicyClass, ToolSpec, Verdict, effective_tier, make_verdict

NO_DECLARED_FLOWS = "egress.no-declared-flows"
HOST_NOT_ALLOWED = "egress.host-not-allowed"

URL_KEYS = frozenset({"url", "endpoint", "target_url", "host"})

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f\\]")
_NOT_IN_BARE_HOST = re.compile(r"[/?#@]")
_DNS_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\Z")
_IPV6 = re.compile(r"[0-9a-f:.]+\Z")

# --- What counts as a destination in a comms tool's free values --------------------
_URL_LIKE = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?//|(?:https?|wss?|ftps?|sftp|smtps?|imaps?|pop3s?|ldaps?):", re.IGNORECASE
)
_DOTS = re.compile("[\u3002\uff0e\uff61]")  # ideographic and fullwidth full stops: IDNA maps them to "."
_HOST_LABEL = re.compile(r"[\w-]{1,63}")  # \w is Unicode: IDN labels count
_TLD = re.compile(r"[^\W\d_]{2,63}|xn--[a-z0-9-]{1,59}", re.IGNORECASE)  # letters of any script
_PORT = re.compile(r":\d{1,5}\Z")
# Last labels that name a file far more often than a host (the values a letter-sending tool carries).
# None is a top-level domain in the root zone: an extension that is one (md, zip, py, sh, mov) names
# a host as well as a file, and a host is what must never slip past, so those stay hosts.
_FILE_EXTENSIONS = frozenset(
    {
        "pdf",
        "txt",
        "doc",
        "docx",
        "rtf",
        "odt",
        "csv",
        "tsv",
        "json",
        "xml",
        "xls",
        "xlsx",
        "ppt",
        "pptx",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "bmp",
        "tif",
        "tiff",
        "svg",
        "heic",
        "dcm",
        "log",
        "html",
        "htm",
        "eml",
        "msg",
        "gz",
        "tgz",
        "js",
        "ts",
        "wav",
        "avi",
    }
)
_LOCALHOST = "localhost"
_PATH_START = re.compile(r"[/?#\\]")
_WHITESPACE = re.compile(r"\s")


def _looks_like_host(text: str) -> bool:
    host = _PORT.sub("", text)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    labels = _DOTS.sub(".", host).removesuffix(".").split(".")
    if len(labels) == 1 and labels[0].lower() == _LOCALHOST:
        return True
    if len(labels) < 2 or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        return False
    return bool(_TLD.fullmatch(labels[-1])) and labels[-1].lower() not in _FILE_EXTENSIONS


def _recipients_allowed(text: str, allow: _AllowList, reader: AddressReader) -> bool | None:
    """For an address value (see addresses.py): whether every domain it names is allowed.
    None if `text` is no address value at all."""
    found = reader.recipients(text)
    if found is None:
        return None
    return not found.ambiguous and all(_matches(domain, allow) for domain in found.domains)


def _free_value_allowed(value: str, allow: _AllowList, reader: AddressReader) -> bool:
    """Whether a comms tool's string value is no destination, or one on the allow-list, as
    written and as compatibility-folded: a mail or HTTP library that folds "dr＠evil.example"
    (a fullwidth at sign) to "dr@evil.example" sends to evil.example."""
    folded = unicodedata.normalize("NFKC", value)
    if folded != value and not _free_value_as_written_allowed(folded, allow, reader):
        return False
    return _free_value_as_written_allowed(value, allow, reader)


def _free_value_as_written_allowed(value: str, allow: _AllowList, reader: AddressReader) -> bool:
    text = value.strip()
    if not text:
        return True
    if _URL_LIKE.match(text):
        return _matches(value, allow)  # the raw value: surrounding whitespace fails closed
    address = _recipients_allowed(text, allow, reader)
    if address is not None:
        return address
    if _looks_like_host(text):
        return _matches(value, allow)
    path = _PATH_START.search(text)
    if path and path.start() > 0 and not _WHITESPACE.search(text) and _looks_like_host(text[: path.start()]):
        # "evil.example/inbox": a URL but for its scheme. A backslash or control character in
        # it fails closed, as in a URL (parsers disagree on "clinic.example\@evil.net").
        return not _UNSAFE.search(text) and _matches(text[: path.start()], allow)
    return True


# Upper bound on containers inspected per call; a larger (or, from Python callers,
# cyclic) args structure fails closed instead of being walked forever.
_MAX_CONTAINERS = 10_000
_CACHEABLE_LENGTH = 512

_Target = tuple[str, int | None, str]  # (host, explicit port or None, scheme)
_AllowList = tuple[frozenset[str], frozenset[tuple[str, int]]]  # (any port, host:port)


def _canonical_host(host: str) -> str | None:
    if host.isascii():
        host = host.lower()
    else:
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError, ValueError):
            return None
    if host.endswith("."):
        host = host[:-1]
    if _DNS_NAME.match(host) or (":" in host and _IPV6.match(host)):
        return host
    return None


def _parse(value: str) -> _Target | None:
    # Agents hit the same few endpoints over and over, and urlsplit plus IDNA is the
    # most expensive step of a gate call, so parses are cached by value -- but only
    # short values, so a client cannot pin megabytes of its strings in the cache.
    return _parse_cached(value) if len(value) <= _CACHEABLE_LENGTH else _parse_uncached(value)


def _parse_uncached(value: str) -> _Target | None:
    if not value or _UNSAFE.search(value):
        return None
    try:
        if "://" in value:
            parts = urlsplit(value)
        elif _NOT_IN_BARE_HOST.search(value):
            return None
        else:
            # A bare "host[:port]" parsed as a network location, so ports and
            # bracketed IPv6 literals follow the same rules as in a URL.
            parts = urlsplit("//" + value)
        hostname, port = parts.hostname, parts.port
    except ValueError:  # bad port, unbalanced IPv6 brackets
        return None
    if not hostname:
        return None
    host = _canonical_host(hostname)
    if host is None:
        return None
    return host, port, parts.scheme.lower()


_parse_cached = lru_cache(maxsize=4096)(_parse_uncached)


@lru_cache(maxsize=1024)
def _allow_list(allowed_hosts: tuple[str, ...]) -> _AllowList:
    any_port: set[str] = set()
    exact: set[tuple[str, int]] = set()
    for entry in allowed_hosts:
        # An entry we cannot parse can never match; it is skipped, not an error, so
        # one bad registry value does not break the gate for the tool's other hosts.
        target = _parse(entry) if isinstance(entry, str) else None
        if target is None:
            continue
        host, port, _scheme = target
        if port is None:
            any_port.add(host)
        else:
            exact.add((host, port))
    return frozenset(any_port), frozenset(exact)


def _allow_list_for(allowed_hosts: Any) -> _AllowList:
    try:
        return _allow_list(tuple(allowed_hosts))
    except TypeError:  # an unhashable entry (bad registry data): keep the usable ones
        return _allow_list(tuple(h for h in allowed_hosts if isinstance(h, str)))


def _matches(value: Any, allow: _AllowList) -> bool:
    if not isinstance(value, str):
        return False
    target = _parse(value)
    if target is None:
        return False
    host, port, scheme = target
    any_port, exact = allow
    if host in any_port:
        return True
    if port is None:
        port = _DEFAULT_PORTS.get(scheme)
    return port is not None and (host, port) in exact


def _is_url_key(key: Any) -> bool:
    return key in URL_KEYS or (isinstance(key, str) and key.lower() in URL_KEYS)


def egress_rule(allowed_hosts: tuple[str, ...], policy_class: str | None, args: Any) -> str | None:
    """The egress rule_id that blocks this call, or None if it may proceed to the matrix."""
    comms = policy_class == PolicyClass.COMMS
    if comms and not allowed_hosts:
        return NO_DECLARED_FLOWS
    if not args:
        return None
    allow: _AllowList | None = None  # parsed only if a destination turns up
    reader = AddressReader() if comms else None
    # Iterative walk over nested dicts and lists: JSON can nest deeper than Python's
    # recursion limit, and a URL hidden at any depth must still be found.
    stack = [args]
    budget = _MAX_CONTAINERS
    while stack:
        budget -= 1
        if budget < 0:
            return HOST_NOT_ALLOWED
        node = stack.pop()
        if isinstance(node, Mapping):
            items = node.items()
        elif isinstance(node, (list, tuple)):
            items = ((None, item) for item in node)
        else:
            continue
        for key, value in items:
            if comms and isinstance(key, str):
                # A key names a destination as well as a value does: {"x@evil.example": {...}}.
                allow = allow or _allow_list_for(allowed_hosts)
                if not _free_value_allowed(key, allow, reader):
                    return HOST_NOT_ALLOWED
            if _is_url_key(key):
                allow = allow or _allow_list_for(allowed_hosts)
                if not _matches(value, allow):
                    return HOST_NOT_ALLOWED
            elif isinstance(value, (dict, list, tuple, Mapping)):
                stack.append(value)
            elif comms and isinstance(value, str):
                allow = allow or _allow_list_for(allowed_hosts)
                if not _free_value_allowed(value, allow, reader):
                    return HOST_NOT_ALLOWED
    return None


def check_egress(spec: ToolSpec | None, resolved_class: str | None, args: Any) -> Verdict | None:
    """The blocking verdict for ``args`` under ``spec``'s allowed hosts, or None if it passes.

    ``spec`` is the effective spec (see ``effective_spec``). The verdict's ``destructive``
    is False and its tier ignores the verb: only ``evaluate`` sees the call's ``op``.
    """
    allowed_hosts = spec.allowed_hosts if spec is not None else ()
    rule_id = egress_rule(allowed_hosts, resolved_class, args)
    if rule_id is None:
        return None
    tier = spec.hitl_tier if spec is not None else None
    return make_verdict(rule_id, resolved_class, effective_tier(resolved_class, tier, False), False)
