"""Renaming, re-linking and deleting a session: each a locked write with its audit row."""

from django.db import transaction
from django.utils import timezone

from audit import trail as audit
from core.errors import NotFound
from sessions_app.models import Session
from sessions_app.signals import care_unit_changed, session_deleting, session_relinking

# What PATCH may change. Policy context (autonomy, consent, age band) is fixed at
# creation: loosening it mid-conversation would change what earlier grants meant.
EDITABLE_FIELDS = ("title", "patient_ref", "care_unit")
# What an open approval is bound to (approvals/bound_context.py), of the editable fields: a change waits
# until no approval of the session is open. Refused rather than withdrawing the cards: a re-link never
# silently throws away what a reviewer may be deciding, and the agent can finish or close its run first.
BOUND_FIELDS = ("patient_ref",)


def lock_live_session(session_id) -> Session:
    """The session row, locked; 404 if it was deleted meanwhile (the lock makes that final)."""
    session = Session.objects.live().locked().filter(pk=session_id).first()
    if session is None:
        raise NotFound("No such session.")
    return session


@transaction.atomic(durable=True)
def update_session(session_id, changes: dict, *, client) -> Session:
    """Rename or re-link a live session. Audited with the old and new values of what changed.

    A re-link (`patient_ref`) of a session holding open approvals is refused (409
    session_has_open_approvals): they are bound to the patient they were given for.
    """
    session = lock_live_session(session_id)
    before = {name: getattr(session, name) for name in EDITABLE_FIELDS}
    changed = {name: value for name, value in changes.items() if name in EDITABLE_FIELDS and before[name] != value}
    if not changed:
        return session
    bound = [name for name in BOUND_FIELDS if name in changed]
    if bound:
        session_relinking.send(Session, session=session, fields=bound)
    for name, value in changed.items():
        setattr(session, name, value)
    session.save(update_fields=[*changed, "updated_at"])
    # After the save: the row carries the new patient_ref, and `data` the old one.
    audit.record(
        audit.Kind.SESSION_CHANGE,
        session=session,
        actor_client=client,
        decision="updated",
        data={"changed": {name: {"from": before[name], "to": value} for name, value in changed.items()}},
    )
    if "care_unit" in changed:
        care_unit_changed.send(sender=Session, session=session, by=client)
    return session


@transaction.atomic(durable=True)
def delete_session(session_id, *, client) -> None:
    """Delete a session for its client: its active run aborts `user_stopped`, its pending approvals expire.

    Soft: the runs, approvals and tool calls stay for compliance (the audit log's
    rows point at them) and the admin still shows them; every client endpoint
    answers 404 from now on, this one included.
    """
    # Lock order everywhere: session, then run, then approvals (then the audit chain head).
    session = lock_live_session(session_id)
    answers = session_deleting.send(Session, session=session, actor_client=client)
    closed = next((run for _receiver, run in answers if run is not None), None)
    session.deleted_at = timezone.now()
    session.save(update_fields=["deleted_at", "updated_at"])
    audit.record(
        audit.Kind.SESSION_CHANGE,
        session=session,
        actor_client=client,
        decision="deleted",
        data={"stopped_run": str(closed.pk) if closed is not None else None},
    )
