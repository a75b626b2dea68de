"""The admin addresses of the models that moved out of approvals, kept working for bookmarks and links
in old notes and tickets: each answers a permanent redirect to the model's page under its new app."""

import importlib
from urllib.parse import quote

from django.http import HttpResponsePermanentRedirect
from django.urls import re_path

# model → its app now: the map of the migration that moved them (tables and content types with them).
MOVED_FROM_APPROVALS = importlib.import_module("approvals.migrations.0024_models_move_to_their_apps").MOVED


def moved_page(request, model: str, rest: str):
    target = f"/admin/{MOVED_FROM_APPROVALS[model]}/{model}/{quote(rest)}"
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(f"{target}?{query}" if query else target)


urlpatterns = [
    re_path(rf"^(?P<model>{'|'.join(MOVED_FROM_APPROVALS)})/(?P<rest>.*)$", moved_page),
]
