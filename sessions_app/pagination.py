"""Cursor pagination: stable pages while new rows arrive, and no COUNT over a long history."""

from rest_framework.pagination import CursorPagination


class NewestFirst(CursorPagination):
    """Sessions, newest first. The cursor is opaque; follow `next` / `previous`."""

    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200


class OldestFirst(CursorPagination):
    """Messages and pinned lists that read top to bottom."""

    ordering = ("seq",)
    page_size = 100
    page_size_query_param = "limit"
    max_page_size = 500
