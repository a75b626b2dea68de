"""What a reviewer approves is what they were shown: the payload on the card, and all of it.

Two ways the card and the approved payload could part, both refused here:

* Four eyes lets a reviewer's edit put new args on the table while the card is open
  on another reviewer's screen (quorum.py). An approval names the `payload_hash` of
  the card it approves; if that is not the payload on the table now it is 409
  `payload_changed`. A body without one (an older client) is taken to approve the
  agent's args as first sent, so it is refused once an edit is on the table.
* Args past CONDOR_CARD_ARGS_MAX_BYTES travel as a preview (cards.py); the reviewer
  loads the rest from the approval, and that load is recorded (an `args_viewed`
  audit row for that payload). Approving such a card unedited without having loaded
  this payload is 409 `full_args_not_viewed`. An edit carries the whole args the
  reviewer typed, so it needs no load.
"""

import re

from approvals import cards, quorum
from approvals.models import Approval, ApprovalStatus
from audit import trail as audit
from audit.models import AuditEvent
from core.errors import FullArgsNotViewed, InvalidPayload, PayloadChanged
from core.hashing import Canonical

_HASH = re.compile(r"[0-9a-f]{64}")


def seen_hash(body: dict) -> str | None:
    """The `payload_hash` a decision body names, checked for shape (None when it names none)."""
    value = body.get("payload_hash")
    if value is None:
        return None
    if not isinstance(value, str) or not _HASH.fullmatch(value):
        raise InvalidPayload("'payload_hash' must be the 64 hex characters of the card's payload_hash.")
    return value


def require_shown(approval: Approval, *, user, seen: str | None, edited: bool, approved: Canonical) -> None:
    """Refuse an approval of anything but the payload the reviewer was shown, whole.

    `approved` is the canonical form of the args approved (unedited: the payload on the
    table), taken once by the decision for this check and its hash alike.
    """
    if seen != approval.payload_hash if seen is not None else approval.approved_args is not None:
        raise PayloadChanged()
    if not edited and cards.cut_at(approved.size):
        viewed = AuditEvent.objects.filter(
            kind=audit.Kind.ARGS_VIEWED,
            approval_id=approval.pk,
            actor_user=user,
            data__payload_hash=approval.payload_hash,
        )
        if not viewed.exists():
            raise FullArgsNotViewed()


def record_full_view(approval: Approval, *, user) -> None:
    """A reviewer read the whole args of a pending card too long to show whole: the evidence for `require_shown`."""
    if approval.status == ApprovalStatus.PENDING and cards.args_cut(quorum.proposal(approval)):
        audit.record(
            audit.Kind.ARGS_VIEWED,
            approval=approval,
            actor_user=user,
            decision="viewed",
            data={"payload_hash": approval.payload_hash},
        )
