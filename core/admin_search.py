"""Admin search: UUIDs as the page shows them, words in a call's arguments, and limits on what is typed.

Django searches an ``id__exact`` search field by casting the column to text. On SQLite
a UUID is stored as 32 hex digits without dashes, so the id copied from the page never
matches; on PostgreSQL the cast defeats the index (a full scan per search). Here a term
that parses as a UUID is compared as a UUID with the fields in ``uuid_search_fields``
(an index lookup on both databases); every other term goes to Django's search over
``search_fields``, which should then not list UUID fields at all.

An admin that names ``json_search_fields`` (a call's arguments) searches its text words
itself: each word must be found, case-insensitively, in one of ``search_fields`` or in the
JSON text of one of those fields (``Cast(field, TextField())`` with ``icontains``; on
PostgreSQL ``UPPER(args::text) LIKE UPPER('%word%')``, a scan of the table like Django's
own search over text columns).
"""

import uuid

from django.contrib import messages
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils.text import smart_split, unescape_string_literal

# A search box is free text from a signed-in person, but still bounded: every word is a
# LIKE over every searched row.
MAX_SEARCH_WORDS = 8
MAX_SEARCH_CHARS = 200


class SearchTooLong(ValueError):
    pass


def search_words(search_term: str | None) -> list[str]:
    """The words of a search, a quoted phrase ("500 mg") as one word; SearchTooLong past the limits."""
    if len(search_term or "") > MAX_SEARCH_CHARS:
        raise SearchTooLong(f"Search for at most {MAX_SEARCH_CHARS} characters.")
    words = []
    for word in smart_split(search_term or ""):
        if word[:1] in ('"', "'") and word[0] == word[-1] and len(word) > 1:
            word = unescape_string_literal(word)
        if word:
            words.append(word)
    if len(words) > MAX_SEARCH_WORDS:
        raise SearchTooLong(f'Search for at most {MAX_SEARCH_WORDS} words (quote a phrase: "500 mg").')
    return words


def as_uuid(term: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(term)
    except ValueError:
        return None


def json_texts(*fields: str) -> dict[str, Cast]:
    """`<field>_text` aliases: each JSON field as its text, for `icontains`."""
    return {f"{field}_text": Cast(field, TextField()) for field in fields}


class UUIDSearchMixin:
    uuid_search_fields: tuple[str, ...] = ()
    json_search_fields: tuple[str, ...] = ()

    def get_search_results(self, request, queryset, search_term):
        try:
            words = search_words(search_term)
        except SearchTooLong as error:
            self.message_user(request, str(error), messages.ERROR)
            return queryset.none(), False
        text_words = []
        for word in words:
            value = as_uuid(word) if self.uuid_search_fields else None
            if value is None:
                text_words.append(word)
            else:
                queryset = queryset.filter(
                    Q.create([(field, value) for field in self.uuid_search_fields], connector=Q.OR)
                )
        if not text_words:
            return queryset, False
        if self.json_search_fields:
            return self._search_with_json(queryset, text_words), False
        return super().get_search_results(request, queryset, " ".join(_quoted(word) for word in text_words))

    def _search_with_json(self, queryset, words):
        texts = json_texts(*self.json_search_fields)
        lookups = [f"{field}__icontains" for field in (*self.search_fields, *texts)]
        found = Q.create([Q.create([(lookup, word) for lookup in lookups], connector=Q.OR) for word in words])
        return queryset.alias(**texts).filter(found)


def _quoted(term: str) -> str:
    """A term as smart_split will read it back whole."""
    if not any(char.isspace() or char in "\"'" for char in term):
        return term
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'
