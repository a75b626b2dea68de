"""Owner-scoped lookups: another client's object is 404, never 403 (its existence is not ours to reveal).

A deleted session, and everything in it, is 404 to its own client too.
"""

from agents.auth import calling_client
from core.errors import NotFound
from sessions_app.models import Session


def owned_session(request, session_id) -> Session:
    session = Session.objects.live().filter(pk=session_id, client=calling_client(request)).first()
    if session is None:
        raise NotFound("No such session.")
    return session
