"""Which cards a reviewer may see: the one rule every reader of cards goes through.

SPEC section 10 (minimum necessary): with no review team defined, every reviewer
sees every card. Once a team exists, a card is visible to the members of the teams
listing its session's `care_unit`; a card whose unit no team lists goes to the
default team, or, without one, to every reviewer ("unrouted").

The websocket snapshot and each push, the polling snapshot, the approval fetch, the
decision, the claim and the reviewer's stop all ask here, so they cannot disagree.
The teams are read once per request or push (`reviewer_scope`), never once per card.

Pushes: every inbox socket stays in the one `inbox` group and each socket filters
each push through `can_see` with a scope read fresh for that push (consumers.py).
We chose this over per-team groups because a socket then follows team edits at
once (joining or leaving a team needs no group bookkeeping, nor a reconnect), and a
unit moving between teams cannot strand a card in a group nobody reads. The cost:
every socket's consumer receives every push and drops what its reviewer may not see;
nothing invisible ever reaches the browser.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from agents.auth import is_reviewer
from approvals.models import Approval, ApprovalStatus, ReviewTeam
from core.errors import NotFound
from core.rows import column, table


@dataclass(frozen=True)
class ReviewerScope:
    """What one reviewer may see, read from the database once per message, not once per card."""

    user_id: int
    # False: no team is defined, so every reviewer sees every card.
    routed: bool = False
    # The care units of this reviewer's teams.
    units: frozenset = frozenset()
    # Every unit some team lists: a card of any other unit is unrouted.
    listed_units: frozenset = frozenset()
    # Whether unrouted cards reach this reviewer: they are in the default team, or there is none.
    sees_unrouted: bool = True

    def sees_unit(self, care_unit: str | None) -> bool:
        """Whether the cards of a session in `care_unit` are this reviewer's to see."""
        if not self.routed:
            return True
        unit = care_unit or ""
        if unit in self.units:
            return True
        return unit not in self.listed_units and self.sees_unrouted

    def visible(self, approvals):
        """`approvals` (a queryset) narrowed to what this reviewer may see."""
        if not self.routed:
            return approvals
        rule = Q(session__care_unit__in=self.units)
        if self.sees_unrouted:
            rule |= ~Q(session__care_unit__in=self.listed_units)
        return approvals.filter(rule)

    def can_see(self, card: dict) -> bool:
        """Whether a card built by approvals/cards.py may be shown to this reviewer."""
        if not isinstance(card, dict):
            return False
        session = card.get("session")
        return self.sees_unit(session.get("care_unit") if isinstance(session, dict) else None)

    def can_see_message(self, message: dict) -> bool:
        """Whether an inbox push (a whole card, or a notice naming its care_unit) is this reviewer's."""
        if "card" in message:
            return self.can_see(message["card"])
        return self.sees_unit(message.get("care_unit"))


def _teams(user_id):
    """Every team as (care_units, is_default, mine): whether `user_id` is one of its members."""
    membership = ReviewTeam.members.through.objects.filter(reviewteam_id=OuterRef("pk"), user_id=user_id)
    return ReviewTeam.objects.annotate(mine=Exists(membership)).values_list("care_units", "is_default", "mine")


def teams_column_sql(db, user_id_sql: str) -> str:
    """A scalar subquery giving `_teams` of the user `user_id_sql` names as one JSON array of
    [care_units, is_default, mine], for a statement that loads the user (approvals/auth_backends.py):
    a reviewer's request then reads their teams in the same round trip as themselves."""
    membership = ReviewTeam.members.through
    teams, members = table(ReviewTeam, db=db), table(membership, db=db)
    mine = (
        f"EXISTS(SELECT 1 FROM {members} WHERE {column(membership, 'reviewteam', members, db=db)} = "
        f"{column(ReviewTeam, 'id', teams, db=db)} AND {column(membership, 'user', members, db=db)} = {user_id_sql})"
    )
    units, default = column(ReviewTeam, "care_units", teams, db=db), column(ReviewTeam, "is_default", teams, db=db)
    if db.vendor == "postgresql":
        rows = f"COALESCE(json_agg(json_build_array({units}, {default}, {mine})), '[]'::json)"
    else:  # SQLite keeps JSON as text: json() embeds it as JSON, not as a string
        rows = f"json_group_array(json_array(json({units}), {default}, {mine}))"
    return f"(SELECT {rows} FROM {teams})"


def teams_from_column(value) -> list[tuple]:
    """`teams_column_sql`'s value as `_teams`' rows (PostgreSQL's driver decodes json; SQLite gives text)."""
    rows = json.loads(value) if isinstance(value, str) else value
    return [(units, bool(default), bool(mine)) for units, default, mine in rows]


def read_teams(user_id) -> list[tuple]:
    """Every review team, and whether this reviewer is in it: one query, no transaction needed."""
    return list(_teams(user_id))


def reviewer_scope(user) -> ReviewerScope | None:
    """The scope of an active, logged-in reviewer; None for anyone else.

    The teams come with the user when the request loaded them (`teams_column_sql`), read as of that
    load, as the reviewer's group membership is; otherwise they are read here.
    """
    if not is_reviewer(user) or not user.is_active:
        return None
    teams = getattr(user, "_condor_review_teams", None)
    if teams is None:
        teams = read_teams(user.pk)
    if not teams:
        return ReviewerScope(user_id=user.pk)
    default = next((team for team in teams if team[1]), None)
    return ReviewerScope(
        user_id=user.pk,
        routed=True,
        units=frozenset(unit for units, _, mine in teams if mine for unit in units),
        listed_units=frozenset(unit for units, _, _ in teams for unit in units),
        sees_unrouted=default is None or default[2],
    )


def pending_approvals(scope: ReviewerScope):
    """The cards waiting for a decision that `scope` may see, soonest deadline first."""
    pending = Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__gt=timezone.now())
    return scope.visible(pending).select_related("session__client", "claimed_by").order_by("expires_at", "pk")


def sees_approval(user) -> Callable[[Approval], bool]:
    """Whether `user` may see an approval (its session loaded), for approvals/locking.lock_pending's
    `visible`: a reviewer's act (decision, claim, release) is checked on the row as locked, in the
    transaction that acts on it. Someone with no scope at all sees none: 404, as for a card not theirs."""
    scope = reviewer_scope(user)
    if scope is None:
        raise NotFound("No such approval.")
    return lambda approval: scope.sees_unit(approval.session.care_unit)
