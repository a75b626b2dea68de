"""Control characters in a request's path or query string: 400 before any view reads them.

A NUL in a path or query parameter reached the database as a lookup value, and PostgreSQL
refuses it (DataError, a 500), on API, inbox and admin views alike; other C0 controls and
DEL are refused with it, as no id, filter or search Condor serves holds one. One middleware
for every view: the API answers its JSON error (400 invalid_payload), the inbox and the
admin Django's plain 400 page.
"""

from django.http import JsonResponse
from django.views.defaults import bad_request

from core.errors import InvalidPayload, error_body
from core.text_limits import has_control_characters


def _refused_part(request) -> str | None:
    if has_control_characters(request.path):
        return "The path"
    if request.META.get("QUERY_STRING"):
        for key, values in request.GET.lists():
            if has_control_characters(key) or any(has_control_characters(value) for value in values):
                return "A query parameter"
    return None


class ControlCharactersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        part = _refused_part(request)
        if part is None:
            return self.get_response(request)
        detail = f"{part} contains a control character (NUL, a line break or the like); nothing was read."
        if request.path.startswith("/api/"):
            return JsonResponse(error_body(InvalidPayload.code, detail), status=InvalidPayload.status)
        return bad_request(request, InvalidPayload(detail))
