"""Admin search that finds a UUID as the page shows it (with dashes), on PostgreSQL and SQLite.

Django searches an ``id__exact`` search field by casting the column to text. On SQLite
a UUID is stored as 32 hex digits without dashes, so the id copied from the page never
matches; on PostgreSQL the cast defeats the index (a full scan per search). Here a term
that parses as a UUID is compared as a UUID with the fields in ``uuid_search_fields``
(an index lookup on both databases); every other term goes to Django's search over
``search_fields``, which should then not list UUID fields at all.
"""

import uuid

from django.db.models import Q
from django.utils.text import smart_split, unescape_string_literal


def _as_uuid(term: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(term)
    except ValueError:
        return None


class UUIDSearchMixin:
    uuid_search_fields: tuple[str, ...] = ()

    def get_search_results(self, request, queryset, search_term):
        text_terms, uuids = [], []
        for term in smart_split(search_term or ""):
            if term[:1] in ('"', "'") and term[0] == term[-1] and len(term) > 1:
                term = unescape_string_literal(term)
            value = _as_uuid(term) if self.uuid_search_fields else None
            (uuids if value is not None else text_terms).append(value if value is not None else term)
        for value in uuids:
            queryset = queryset.filter(Q.create([(field, value) for field in self.uuid_search_fields],
                                                connector=Q.OR))
        if not text_terms:
            return queryset, False
        return super().get_search_results(request, queryset, " ".join(_quoted(term) for term in text_terms))


def _quoted(term: str) -> str:
    """A term as smart_split will read it back whole."""
    if not any(char.isspace() or char in "\"'" for char in term):
        return term
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'
