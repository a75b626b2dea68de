"""A claim whose holder can no longer see its card is void at once: released, audited, pushed (SPEC 10).

A claim keeps every other reviewer from deciding the card. Once its holder may not
see the card any more (its session moved to another care unit, a review team was
edited, the holder left a team or the reviewers group, or was deactivated), they
cannot act on it (404), so their claim would only keep the reviewers who now see
the card out of it until it ran out. Here it ends instead, as a release would:
the row, a `card.updated` push to the inboxes that see the card, and a `claim` audit
row (`voided`, naming the holder and why), in one transaction.

A care unit moves inside the transaction that moves it (sessions_app sends
`care_unit_changed` while the session is locked), so no reviewer of the new unit is
ever refused. A team or a user is edited in the admin across several saves (the
team, then its members): the claims are looked at once that transaction commits,
when the teams are what they will be.
"""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.utils import timezone

from approvals import cards
from approvals.claims import end_claim
from approvals.models import Approval, ApprovalStatus, ReviewTeam
from approvals.visibility import reviewer_scope
from audit import trail as audit
from runs.models import Run
from runs.outbox import record_event
from sessions_app.signals import care_unit_changed

# The system actor of a claim voided by an edit of teams or accounts (a move names the agent that moved it).
VISIBILITY = "visibility"


def void_blind_claims(approvals, *, cause: str, actor_client=None) -> int:
    """End the live claims among `approvals` (a queryset) whose holder may not see the card now.

    In the caller's transaction (or its own): the runs are locked, then the approvals,
    the lock order everywhere, and the claims read again under the lock.
    """
    with transaction.atomic():
        held = approvals.filter(
            status=ApprovalStatus.PENDING, claimed_by__isnull=False, claim_expires_at__gt=timezone.now()
        )
        run_ids = sorted(set(held.values_list("run_id", flat=True)))
        if not run_ids:
            return 0
        runs = {
            run.pk: run for run in Run.objects.select_for_update(of=("self",)).filter(pk__in=run_ids).order_by("pk")
        }
        locked = held.select_for_update(of=("self",)).select_related("session", "claimed_by").order_by("pk")
        scopes, voided = {}, 0
        for approval in locked.filter(run_id__in=list(runs)):
            holder = approval.claimed_by
            if holder.pk not in scopes:
                scopes[holder.pk] = reviewer_scope(holder)
            if scopes[holder.pk] is not None and scopes[holder.pk].sees_unit(approval.session.care_unit):
                continue
            _void(approval, runs[approval.run_id], holder, cause=cause, actor_client=actor_client)
            voided += 1
        return voided


def _void(approval: Approval, run: Run, holder, *, cause: str, actor_client) -> None:
    end_claim(approval)
    approval.save(update_fields=["claimed_by", "claim_expires_at"])
    record_event(
        run,
        "approval.claim_voided",
        step_id=approval.step_id,
        data={"approval_id": str(approval.pk), "claimed_by": holder.get_username()},
        inbox=cards.updated(approval),
    )
    audit.record(
        audit.Kind.CLAIM,
        approval=approval,
        session=approval.session,
        actor_client=actor_client,
        actor_system=VISIBILITY,
        decision="voided",
        rule_id=approval.rule_id,
        data={"holder": holder.get_username(), "cause": cause, "care_unit": approval.session.care_unit},
    )


def _after_commit(cause: str, holder_ids=None) -> None:
    """Look at the live claims once the edit commits (only those held by `holder_ids`, when given)."""

    def void():
        approvals = Approval.objects.all()
        if holder_ids is not None:
            approvals = approvals.filter(claimed_by_id__in=list(holder_ids))
        void_blind_claims(approvals, cause=cause)

    transaction.on_commit(void, robust=True)


def _care_unit_changed(sender, session, by=None, **kwargs):
    void_blind_claims(Approval.objects.filter(session=session), cause="care unit changed", actor_client=by)


def _team_changed(sender, **kwargs):
    _after_commit("review teams changed")


def _team_members_changed(sender, action, **kwargs):
    if action in ("post_remove", "post_clear"):  # joining a team hides no card from anyone
        _after_commit("review teams changed")


def _groups_changed(sender, instance, action, reverse, pk_set, **kwargs):
    if action not in ("post_remove", "post_clear"):
        return
    if not reverse:
        _after_commit("reviewer left a group", holder_ids=[instance.pk])
    else:  # a group lost members; after a clear it no longer says whom, so every holder is looked at
        _after_commit("reviewer left a group", holder_ids=pk_set or None)


def _user_saved(sender, instance, update_fields=None, **kwargs):
    if update_fields is not None and set(update_fields) == {"last_login"}:
        return  # a login revokes nothing
    _after_commit("reviewer's account changed", holder_ids=[instance.pk])


def connect() -> None:
    user_model = get_user_model()
    care_unit_changed.connect(_care_unit_changed, dispatch_uid="claims-void-care-unit")
    post_save.connect(_team_changed, sender=ReviewTeam, dispatch_uid="claims-void-team-saved")
    post_delete.connect(_team_changed, sender=ReviewTeam, dispatch_uid="claims-void-team-deleted")
    m2m_changed.connect(
        _team_members_changed, sender=ReviewTeam.members.through, dispatch_uid="claims-void-team-members"
    )
    m2m_changed.connect(_groups_changed, sender=user_model.groups.through, dispatch_uid="claims-void-groups")
    post_save.connect(_user_saved, sender=user_model, dispatch_uid="claims-void-user-saved")
