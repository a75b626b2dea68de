"""The inbox page as the harness serves it: the production template (inbox/templates/inbox/inbox.html,
extending base.html) rendered by a standalone Django template engine under a fake origin,
with the paths and URL templates the page is given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.live.browser import REPO

# Where the project keeps them: its own (base.html, the API docs) and the inbox app's.
TEMPLATES_DIRS = [REPO / "templates", REPO / "inbox" / "templates"]
STATIC_DIRS = [REPO / "static", REPO / "inbox" / "static"]

ORIGIN = "http://inbox.condor.test"
INBOX_PATH = "/inbox/"
WS_PATH = "/ws/inbox/"
DECISION_URL_TEMPLATE = "/api/v1/approvals/{id}/decision/"
STOP_URL_TEMPLATE = "/api/v1/runs/{id}/stop/"
APPROVAL_URL_TEMPLATE = "/api/v1/approvals/{id}/"
CLAIM_URL_TEMPLATE = "/api/v1/approvals/{id}/claim/"
CARDS_URL = "/api/v1/inbox/cards/"
CSRF_TOKEN = "harnessCsrfToken0123456789abcdefABCDEF0123456789abcdefABCD"


def _template_engine():
    from django.template import Engine

    # Same loaders and tag libraries the project's DjangoTemplates backend gives these templates.
    return Engine(
        dirs=[str(path) for path in TEMPLATES_DIRS], debug=True, libraries={"static": "django.templatetags.static"}
    )


def render_template(name: str, context: dict[str, Any]) -> str:
    """Render one of our templates with plain static URLs (/static/<path>)."""
    from django.conf import settings
    from django.template import Context
    from django.test.utils import override_settings

    engine = _template_engine()
    ctx = {"csrf_token": CSRF_TOKEN, **context}
    # Under the project's real settings the staticfiles storage may want a manifest;
    # the harness serves the static folders directly, so plain URLs are what it needs.
    storages = {**getattr(settings, "STORAGES", {})}
    storages["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    with override_settings(STATIC_URL="/static/", STORAGES=storages):
        return engine.get_template(name).render(Context(ctx, autoescape=True))


@dataclass
class FakeUser:
    """Just enough of request.user for the templates."""

    username: str = "rita"
    is_authenticated: bool = True

    def get_username(self) -> str:
        return self.username


def render_inbox(username: str = "rita", poll_seconds: int = 10, quick_reasons: tuple[str, ...] = ()) -> str:
    return render_template(
        "inbox/inbox.html",
        {
            "ws_path": WS_PATH,
            "decision_url_template": DECISION_URL_TEMPLATE,
            "stop_url_template": STOP_URL_TEMPLATE,
            "user": FakeUser(username),
            "approval_url_template": APPROVAL_URL_TEMPLATE,
            "cards_url": CARDS_URL,
            "claim_url_template": CLAIM_URL_TEMPLATE,
            "poll_seconds": poll_seconds,
            "quick_reasons": list(quick_reasons),
        },
    )
