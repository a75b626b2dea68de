"""Django's handler404 and handler500: a missing route or an unexpected failure keeps the error shape under /api/.

Apart from core/errors.py because the 500 page asks core/db_unavailable.py whether the
database was lost, and that module builds its answer from core/errors.py.
"""

from django.http import JsonResponse
from django.views.defaults import page_not_found
from django.views.defaults import server_error as default_server_error

from core.db_unavailable import current_database_error, unavailable_response
from core.errors import error_body


def not_found(request, exception):
    """handler404: a path no route matches (or a malformed id in it) is still a JSON error under /api/."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", "No such endpoint or object."), status=404)
    return page_not_found(request, exception)


def server_error(request):
    """handler500: an unexpected failure (already logged by Django) keeps the error shape under /api/."""
    # A database lost outside any view (a middleware saving the session, say) is still a 503.
    lost = current_database_error()
    if lost is not None:
        return unavailable_response(request, lost)
    if request.path.startswith("/api/"):
        return JsonResponse(
            error_body("server_error", "Condor could not complete the request; nothing was changed."), status=500
        )
    return default_server_error(request)
