"""A lost database connection is 503 `database_unavailable` with Retry-After, never a bare 500.

Each connection is tested as it is taken from the pool (condor/postgresql/base.py),
so a database restart costs no burst of errors; what still fails here is a
connection that dies mid-request, or a database that is really down (or a pool
that stays exhausted). All are transient: the client is told when to retry.
"""

import logging
import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin

from core.errors import DatabaseUnavailable, error_body

logger = logging.getLogger(__name__)

# Django wraps every driver and pool failure to reach the server in one of these.
DATABASE_ERRORS = (OperationalError, InterfaceError)
RETRY_AFTER_SECONDS = 5


def is_database_error(exc) -> bool:
    return isinstance(exc, DATABASE_ERRORS)


def unavailable_response(request, exc) -> HttpResponse:
    logger.warning("Database unavailable for %s %s: %s", request.method, request.path, exc)
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    if request.path.startswith("/api/"):
        body = error_body(DatabaseUnavailable.code, DatabaseUnavailable.default_detail)
        return JsonResponse(body, status=DatabaseUnavailable.status, headers=headers)
    return HttpResponse(
        "Condor cannot reach its database right now. Try again in a few seconds.\n",
        content_type="text/plain; charset=utf-8",
        status=DatabaseUnavailable.status,
        headers=headers,
    )


def current_database_error():
    """The database error being handled right now, if that is what brought us to handler500."""
    exc = sys.exc_info()[1]
    return exc if is_database_error(exc) else None


class DatabaseUnavailableMiddleware(MiddlewareMixin):
    """Answers 503 for a database error raised in any view (DRF re-raises what its handler leaves).

    MiddlewareMixin keeps it sync and async capable, so the async stream view
    under daphne gains no thread hop.
    """

    def process_exception(self, request, exception):
        if is_database_error(exception):
            return unavailable_response(request, exception)
        return None
