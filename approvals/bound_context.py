"""The patient context an approval is bound to: the one its card showed (SPEC section 4).

The suspend funnel copies the session's `patient_ref`, `age_band` and `consent` onto
the approval (`bound_context`). A resume or a cold replay in a session whose context is no longer
that one is refused (409 `context_changed`): the reviewer approved a call for one
patient, and it must not run for another. `care_unit` routes a card; it binds nothing.

A session's patient cannot be re-linked while it holds open approvals (409
`session_has_open_approvals`, sessions_app/lifecycle.py asks `session_has_open_approvals`);
the check here is what still holds if a re-link got past that (one racing a suspend,
or a write outside the API).
"""

from django.utils import timezone

from approvals.models import Approval
from approvals.models.approval import OPEN_STATUSES
from core.errors import ContextChanged, SessionHasOpenApprovals
from sessions_app.signals import session_relinking

FIELDS = ("patient_ref", "age_band", "consent")


def of(session) -> dict:
    """The context `session` carries now: what an approval parked in it is bound to."""
    return {name: getattr(session, name) for name in FIELDS}


def bound(approval) -> dict:
    """The context `approval` is bound to; a field it lacks is None, which no session's matches."""
    context = approval.bound_context if isinstance(approval.bound_context, dict) else {}
    return {name: context.get(name) for name in FIELDS}


def wire(context: dict) -> dict:
    """`context` as the stream's decision chunk spells its keys (camelCase, like toolCallId)."""
    return {"patientRef": context["patient_ref"], "ageBand": context["age_band"], "consent": context["consent"]}


def changes(bound: dict, now: dict) -> dict:
    """{field: {"bound": value, "now": value}} for each field in which `now` differs from `bound`."""
    return {name: {"bound": bound[name], "now": now[name]} for name in FIELDS if bound[name] != now[name]}


def refusal(bound: dict, now: dict) -> ContextChanged | None:
    """The error for using an approval bound to `bound` in a session whose context is `now` (None: the same)."""
    changed = changes(bound, now)
    if not changed:
        return None
    said = "; ".join(
        f"{name} was {_shown(values['bound'])} on the card, is {_shown(values['now'])} now"
        for name, values in changed.items()
    )
    return ContextChanged(
        f"The session's patient context changed since this approval was given ({said}): "
        "it may not be used. Gate the call again for a reviewer to see it."
    )


def _shown(value) -> str:
    return repr(value) if isinstance(value, str) else str(value).lower()


def session_has_open_approvals(session) -> bool:
    """Whether `session` holds a card a reviewer may still approve or an agent still use (not past its deadline)."""
    return Approval.objects.filter(session=session, status__in=OPEN_STATUSES, expires_at__gt=timezone.now()).exists()


def refuse_relink_while_open(sender, *, session, fields, **kwargs) -> None:
    """`sessions_app.signals.session_relinking`'s receiver: a session holding open approvals keeps the
    patient they were given for (409 session_has_open_approvals); nothing changes."""
    if session_has_open_approvals(session):
        raise SessionHasOpenApprovals(
            f"This session's {', '.join(fields)} cannot change while it has approvals pending or approved and not "
            "yet used: they were given for its current patient. Use, reject or let them expire (or close the "
            "run) first."
        )


def connect() -> None:
    session_relinking.connect(refuse_relink_while_open, dispatch_uid="approvals.bound_context.refuse_relink")
