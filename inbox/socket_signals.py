"""Tell open inbox sockets to re-check at once when what they may show changes.

A user's login or permissions: the sockets re-check on every push anyway
(inbox/consumers.py); these make a quiet inbox close too, instead of waiting
for the next card. Who sees which card (a review team edited, a session with open
cards moved to another care unit): every socket sends its snapshot again, so a
card leaves the inboxes that may no longer show it and reaches the ones that now
may, without a reload. Sent after commit, so the socket reads the change; a hung Redis
holds the request at most CONDOR_PUSH_TIMEOUT_MS (runs/publish.py).
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.utils import timezone

from approvals.models import Approval, ApprovalStatus, ReviewTeam
from approvals.models.approval import OPEN_STATUSES
from inbox.consumers import session_digest, user_group
from runs.publish import INBOX_GROUP, send_to_group
from runs.signals import stale_news
from sessions_app.signals import care_unit_changed


def _recheck(user_ids, **extra) -> None:
    ids = [pk for pk in user_ids if pk is not None]

    def send():
        for pk in ids:
            send_to_group(user_group(pk), {"type": "inbox.recheck", **extra})

    if ids:
        transaction.on_commit(send, robust=True)


def _logged_out(sender, request, user, **kwargs):
    if user is not None and getattr(request, "session", None) is not None:
        _recheck([user.pk], ended_session=session_digest(request.session.session_key))


def _user_saved(sender, instance, update_fields=None, **kwargs):
    # A login only stamps last_login; anything else (deactivation, a new password) may revoke.
    if update_fields is not None and set(update_fields) == {"last_login"}:
        return
    _recheck([instance.pk])


def _user_deleted(sender, instance, **kwargs):
    _recheck([instance.pk])


def _groups_changed(sender, instance, action, reverse, pk_set, **kwargs):
    if action not in ("post_remove", "pre_clear", "post_clear"):
        return  # joining a group revokes nothing
    if not reverse:
        if action != "pre_clear":
            _recheck([instance.pk])
    elif action == "pre_clear":
        _recheck(list(instance.user_set.values_list("pk", flat=True)))  # who is about to leave
    elif action == "post_remove":
        _recheck(pk_set or ())


def _resync_all() -> None:
    transaction.on_commit(lambda: send_to_group(INBOX_GROUP, {"type": "inbox.resync"}), robust=True)


def _team_changed(sender, **kwargs):
    _resync_all()


def _team_members_changed(sender, action, **kwargs):
    if action in ("post_add", "post_remove", "post_clear"):
        _resync_all()


def _care_unit_changed(sender, session, **kwargs):
    # With no team, every reviewer sees every card: a unit then routes nothing.
    if ReviewTeam.objects.exists() and Approval.objects.filter(session=session, status__in=OPEN_STATUSES).exists():
        _resync_all()


def stale_cards(sender, *, events: list, late, **kwargs) -> set[int]:
    """Ids of the events created before `late` whose card.added would show a card that is no longer pending.

    The drainer re-sends an add long after its commit (Redis was down), and a reviewer
    may have decided the card meanwhile, from a fresh snapshot: a decided card must not
    come back to the inbox. Checked once a drainer batch (runs.signals.stale_news), not once a socket in the consumer.
    An add pushed by its own commit's hook is not read: its card was pending at that
    commit, a moment ago.
    """
    now = timezone.now()
    added = {
        event.pk: event.inbox["card"]["id"]
        for event in events
        if event.inbox is not None and event.inbox.get("type") == "card.added" and event.created_at <= late
    }
    if not added:
        return set()
    pending = {
        str(pk)
        for pk in Approval.objects.filter(
            pk__in=set(added.values()),
            status=ApprovalStatus.PENDING,
            expires_at__gt=now,
        ).values_list("pk", flat=True)
    }
    return {event_pk for event_pk, approval_id in added.items() if approval_id not in pending}


def connect() -> None:
    user_model = get_user_model()
    user_logged_out.connect(_logged_out, dispatch_uid="inbox-socket-logout")
    post_save.connect(_user_saved, sender=user_model, dispatch_uid="inbox-socket-user-saved")
    post_delete.connect(_user_deleted, sender=user_model, dispatch_uid="inbox-socket-user-deleted")
    m2m_changed.connect(_groups_changed, sender=user_model.groups.through, dispatch_uid="inbox-socket-groups")
    post_save.connect(_team_changed, sender=ReviewTeam, dispatch_uid="inbox-socket-team-saved")
    post_delete.connect(_team_changed, sender=ReviewTeam, dispatch_uid="inbox-socket-team-deleted")
    m2m_changed.connect(
        _team_members_changed, sender=ReviewTeam.members.through, dispatch_uid="inbox-socket-team-members"
    )
    care_unit_changed.connect(_care_unit_changed, dispatch_uid="inbox-socket-care-unit")
    stale_news.connect(stale_cards, dispatch_uid="inbox-stale-cards")
