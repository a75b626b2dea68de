"""Django's session, authentication and messages middleware, passed over by an agent's API call.

An agent runtime calls `/api/` with `Authorization: Api-Key …` and sends no cookie. For
such a request these three have nothing to do: there is no session cookie to load, so
no person to sign in and no message to carry, and DRF authenticates the key itself.
They still built a session store, a lazy user and two message storages (a cookie
signer among them) for every call, and looked at each on the way out: about 2% of a
gate call's instructions (bench/README.md, session 12). A request with any cookie, or
without an API key, or outside `/api/`, goes through them as before, so a browser's
request (the inbox, the admin, a reviewer's decision) is never handed to a view
without its session.

What an agent's request then lacks is what it never had a use for: `request.session`,
`request._messages`, and Django's `request.user` until DRF sets it to the key's
principal. `SessionAuthentication` reads that user with a default; it is consulted
only when no API key was sent, and such a request takes the whole chain.
"""

from django.contrib.auth.middleware import AuthenticationMiddleware as DjangoAuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware as DjangoMessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware

API_KEY_PREFIX = "Api-Key "  # agents.auth.ApiKeyAuthentication's keyword, as the header carries it


def is_agent_call(request) -> bool:
    """An API call authenticated by key alone: under /api/, an API key, and no cookie (an empty Cookie
    header, as Django's test client sends, carries none)."""
    meta = request.META
    return (
        not meta.get("HTTP_COOKIE")
        and meta.get("HTTP_AUTHORIZATION", "").startswith(API_KEY_PREFIX)
        and request.path_info.startswith("/api/")
    )


class _BrowserOnly:
    """Runs the middleware it is mixed into for every request but an agent's API call (`is_agent_call`)."""

    def __call__(self, request):
        if is_agent_call(request):
            # Under ASGI, get_response is a coroutine function: its coroutine is what the caller awaits.
            return self.get_response(request)
        return super().__call__(request)


class SessionMiddleware(_BrowserOnly, DjangoSessionMiddleware):
    pass


class AuthenticationMiddleware(_BrowserOnly, DjangoAuthenticationMiddleware):
    pass


class MessageMiddleware(_BrowserOnly, DjangoMessageMiddleware):
    pass
