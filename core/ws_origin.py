"""The websocket origin check: a socket may be opened only by a page of this very site.

Channels' AllowedHostsOriginValidator compares host names only, so a page served
on another port of the same host (another application, perhaps a hostile one)
could open a reviewer's inbox socket with the reviewer's cookies. Here the Origin
must equal the scheme, host and port the socket was opened on (its Host allowed
by ALLOWED_HOSTS), or match CSRF_TRUSTED_ORIGINS: the rule Django's CSRF check
applies to a form post.
"""

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin1")
    return None


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) origin, the default port filled in; None if malformed."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


def _is_secure(scope) -> bool:
    # As HttpRequest.is_secure(): a configured proxy header wins over the connection's scheme.
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy_header:
        meta_name, secure_value = proxy_header
        value = _header(scope, meta_name.removeprefix("HTTP_").lower().replace("_", "-").encode())
        if value is not None:
            return value.split(",", 1)[0].strip() == secure_value
    return scope.get("scheme") in ("wss", "https")


def _own_origin(scope) -> tuple[str, str, int] | None:
    """This site's origin as the socket reached it, if its Host is allowed."""
    host = _header(scope, b"host")
    if not host:
        return None
    domain, port = split_domain_port(host)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]  # as HttpRequest.get_host()
    if not domain or not validate_host(domain, allowed):
        return None
    scheme = "https" if _is_secure(scope) else "http"
    return _origin(f"{scheme}://{host}")


def _trusted(origin: tuple[str, str, int]) -> bool:
    scheme, host, port = origin
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        wildcard = "://*." in entry
        trusted = _origin(entry.replace("://*.", "://", 1))
        if trusted is None or trusted[0] != scheme or trusted[2] != port:
            continue
        if host == trusted[1] or (wildcard and is_same_domain(host, f".{trusted[1]}")):
            return True
    return False


def origin_allowed(scope) -> bool:
    origin = _origin(_header(scope, b"origin") or "")
    if origin is None:
        return False  # absent, "null" (a sandboxed page) or not http(s)
    return origin == _own_origin(scope) or _trusted(origin)


class SameOriginValidator:
    """ASGI middleware: refuse the websocket handshake unless `origin_allowed`."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
