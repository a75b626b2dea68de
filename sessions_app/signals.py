"""Signals sessions_app sends for the apps built on it (which it never imports: STYLE.md)."""

from django.dispatch import Signal

# A session moved to another care unit (`session`, by the API client `by`), sent inside the
# transaction that moved it, the session locked: who may see its cards changed (review teams,
# SPEC section 10).
care_unit_changed = Signal()
