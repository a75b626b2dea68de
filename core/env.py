"""Typed readers for settings that come from the environment.

A bad value stops start-up with a message naming the variable, so a typo in a
deployment fails loudly instead of silently falling back to a default.
"""

import os
import re
from urllib.parse import parse_qsl, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), got {raw!r}.")


def env_int(name: str, default: int, *, minimum: int = 1) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}.") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}.")
    return value


def env_fraction(name: str, default: float) -> float:
    """A number strictly between 0 and 1 (a share of some duration)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number between 0 and 1, got {raw!r}.") from None
    if not 0 < value < 1:
        raise ImproperlyConfigured(f"{name} must be between 0 and 1 (exclusive), got {value}.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


_RATE = re.compile(r"^\s*(\d+)\s*/\s*(s|sec|second|m|min|minute|h|hour|d|day)\s*$", re.IGNORECASE)
_PERIOD_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def env_rate(name: str, default: str) -> tuple[int, int] | None:
    """A request rate such as `600/minute` as (requests, seconds); `off` means no limit (None)."""
    raw = os.environ.get(name, default)
    if raw.strip().lower() == "off":
        return None
    match = _RATE.match(raw)
    if match is None or int(match.group(1)) < 1:
        raise ImproperlyConfigured(
            f"{name} must be a rate like 600/minute (per second, minute, hour or day) or off, got {raw!r}."
        )
    return int(match.group(1)), _PERIOD_SECONDS[match.group(2)[0].lower()]


_HEADER_NAME = re.compile(r"^[A-Za-z0-9-]+$")


def env_header(name: str) -> tuple[str, str] | None:
    """`X-Forwarded-Proto: https` as Django's ("HTTP_X_FORWARDED_PROTO", "https"); None when unset."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    header, colon, value = (part.strip() for part in raw.partition(":"))
    if not colon or not _HEADER_NAME.match(header) or not value:
        raise ImproperlyConfigured(f"{name} must look like 'X-Forwarded-Proto: https', got {raw!r}.")
    return "HTTP_" + header.upper().replace("-", "_"), value


def env_url(name: str, schemes: set[str]) -> str | None:
    """A URL with one of `schemes`, or None when the variable is unset or empty."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    parsed = urlparse(raw)
    if parsed.scheme not in schemes:
        allowed = ", ".join(sorted(schemes))
        raise ImproperlyConfigured(f"{name} must be a URL with scheme {allowed}, got {raw!r}.")
    if parsed.scheme not in {"sqlite"} and not parsed.hostname and not parsed.path.strip("/"):
        raise ImproperlyConfigured(f"{name} has no host or database in {raw!r}.")
    return raw


_SMTP_PORTS = {"smtp": 25, "smtps": 465}


def env_email(name: str) -> dict | None:
    """`smtp://user:pass@host:587/?tls=1` as Django's EMAIL_* settings; None when unset or empty.

    `smtps://` is SMTP over implicit TLS (port 465 unless given); `?tls=1` asks for
    STARTTLS, `?timeout=N` bounds each connection in seconds. User and password are
    percent-decoded, so a password may hold any character.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    parsed = urlparse(raw)
    if parsed.scheme not in _SMTP_PORTS or not parsed.hostname:
        raise ImproperlyConfigured(f"{name} must look like smtp://user:pass@host:587/?tls=1 (or smtps://…).")
    try:
        port = parsed.port or _SMTP_PORTS[parsed.scheme]
    except ValueError:
        raise ImproperlyConfigured(f"{name} has a bad port.") from None
    options = dict(parse_qsl(parsed.query))
    unknown = set(options) - {"tls", "timeout"}
    if unknown:
        raise ImproperlyConfigured(f"{name} has unknown options {sorted(unknown)}; known: tls, timeout.")
    tls = options.get("tls", "0").lower()
    if tls not in _TRUE | _FALSE:
        raise ImproperlyConfigured(f"{name}: tls must be 1 or 0, got {options['tls']!r}.")
    use_ssl = parsed.scheme == "smtps"
    if use_ssl and tls in _TRUE:
        raise ImproperlyConfigured(f"{name}: smtps:// is already TLS; drop ?tls=1 (or use smtp:// for STARTTLS).")
    timeout = options.get("timeout")
    if timeout is not None and not (timeout.isdigit() and int(timeout) > 0):
        raise ImproperlyConfigured(f"{name}: timeout must be a whole number of seconds, got {timeout!r}.")
    # The password is never put in an error message: the URL may be echoed into logs.
    return {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": parsed.hostname,
        "EMAIL_PORT": port,
        "EMAIL_HOST_USER": unquote(parsed.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parsed.password or ""),
        "EMAIL_USE_TLS": tls in _TRUE,
        "EMAIL_USE_SSL": use_ssl,
        "EMAIL_TIMEOUT": int(timeout) if timeout else None,
    }


def local_secret_key(path) -> str:
    """Read, or create once, a random secret key stored at `path` (mode 600)."""
    from django.core.management.utils import get_random_secret_key

    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = get_random_secret_key()
    path.write_text(key)
    path.chmod(0o600)
    return key
