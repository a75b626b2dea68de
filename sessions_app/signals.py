"""Signals sessions_app sends for the apps built on it (which it never imports: STYLE.md)."""

from django.dispatch import Signal

# A session moved to another care unit (`session`, by the API client `by`), sent inside the
# transaction that moved it, the session locked: who may see its cards changed (review teams,
# SPEC section 10).
care_unit_changed = Signal()

# A live session, locked, is about to be deleted by its client (`session`, `actor_client`), inside
# the delete's transaction. The runs app stops its active run and returns it (or None); the
# delete's audit row names the run stopped.
session_deleting = Signal()

# A locked session's fields bound to its approvals (`fields`: their names, e.g. patient_ref) are
# about to change, inside the change's transaction. A receiver holding something bound to the old
# values refuses by raising (the approvals app: 409 session_has_open_approvals); nothing changes.
session_relinking = Signal()
