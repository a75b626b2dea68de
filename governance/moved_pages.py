"""The admin addresses of the models that moved out of approvals, kept working for bookmarks and links
in old notes and tickets: each answers a permanent redirect to the model's page under its new app."""

from urllib.parse import quote

from django.http import HttpResponsePermanentRedirect
from django.urls import re_path

# model → its app now (approvals migration 0024 moved them, tables and all).
MOVED_FROM_APPROVALS = {
    "apiclient": "agents",
    "apiclientkey": "agents",
    "idempotencyrecord": "agents",
    "auditevent": "audit",
    "auditchainhead": "audit",
    "tooldescriptor": "registry",
    "toolchange": "registry",
    "accessgrant": "registry",
    "heartbeat": "runs",
}


def moved_page(request, model: str, rest: str):
    target = f"/admin/{MOVED_FROM_APPROVALS[model]}/{model}/{quote(rest)}"
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(f"{target}?{query}" if query else target)


urlpatterns = [
    re_path(rf"^(?P<model>{'|'.join(MOVED_FROM_APPROVALS)})/(?P<rest>.*)$", moved_page),
]
