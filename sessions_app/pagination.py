"""Cursor pagination: stable pages while new rows arrive, and no COUNT over a long history."""

from django.core.exceptions import ValidationError
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination

from core.errors import InvalidCursor, InvalidPayload
from core.query_numbers import whole_number

GARBLED = "This page cursor is not one the server sent: follow `next` / `previous`, or ask for the first page again."


class Cursors(CursorPagination):
    """A cursor the server did not send is 400 `invalid_cursor`, as on the inbox, never a 404 or a 500.

    DRF answers a cursor it cannot decode with NotFound, and one that decodes to a
    position the ordering's column cannot hold (`p=garbage` on a timestamp or a number)
    reaches the filter, whose field refuses it (ValidationError, ValueError).
    """

    def get_page_size(self, request):
        """`limit`, if given, as a whole number of at least 1 (more than the page's maximum gives the
        maximum); anything else is 400 `invalid_payload`, not DRF's silent default page."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        size = whole_number(raw)
        if not size:
            raise InvalidPayload(
                f"'{self.page_size_query_param}' must be a whole number from 1 to {self.max_page_size}."
            )
        return min(size, self.max_page_size)

    def decode_cursor(self, request):
        try:
            return super().decode_cursor(request)
        except NotFound:
            raise InvalidCursor(GARBLED) from None

    def paginate_queryset(self, queryset, request, view=None):
        try:
            return super().paginate_queryset(queryset, request, view)
        except (ValidationError, ValueError, TypeError):
            if request.query_params.get(self.cursor_query_param) is None:
                raise  # not the cursor's doing
            raise InvalidCursor(GARBLED) from None


class NewestFirst(Cursors):
    """Sessions, newest first. The cursor is opaque; follow `next` / `previous`."""

    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200


class OldestFirst(Cursors):
    """Messages and pinned lists that read top to bottom."""

    ordering = ("seq",)
    page_size = 100
    page_size_query_param = "limit"
    max_page_size = 500
