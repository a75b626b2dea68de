"""A reviewer stops a run: the run ends `user_stopped` and every grant it holds is withdrawn.

It lives with the approvals, not the run spine: who may stop a run is the reviewer's card
rule (review teams), and another reviewer's live claim on one of its cards holds the stop.
"""

from django.db import transaction
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.auth import ReviewerOnly
from approvals.claims import refuse_if_run_claimed_by_other
from approvals.visibility import reviewer_scope
from core.errors import InvalidPayload, NotFound
from core.schema import errors
from core.serializers import validated
from runs import spine
from runs.models import Run
from runs.serializers import RunSerializer, StopSerializer
from runs.states import TerminalReason


@transaction.atomic(durable=True)
def stop_run(run_id, reason: str, *, user) -> Run:
    """A reviewer ends the run (`user_stopped`); every approval it still holds open is withdrawn.

    Unlike a close by the agent, approved-but-unused grants expire too: the
    reviewer said the run must not go on, so nothing it was granted may run.
    Stopping a run that has ended returns it unchanged, as a second close does
    (SPEC 3: a second terminal write is an idempotent no-op); its terminal reason
    says how it ended (`user_stopped`: by this stop or an earlier one). While another
    reviewer holds a live claim on one of its cards, the stop is 409 `approval_claimed`.
    """
    reason = (reason or "").strip()
    if not reason:
        raise InvalidPayload("Stopping a run needs a reason.")
    run = spine.lock_run(run_id)
    if run.is_terminal:
        return run
    refuse_if_run_claimed_by_other(run, user, timezone.now())
    spine.close_locked_run(run, TerminalReason.USER_STOPPED, actor_user=user, withdraw_grants=True, stop_reason=reason)
    return run


class RunStop(ReviewerOnly, APIView):
    """A reviewer ends a run (`user_stopped`). Reviewers only, with a Django session; API keys are refused."""

    @extend_schema(
        request=StopSerializer,
        description=("A run that has already ended is returned unchanged (its terminal_reason says how it ended)."),
        responses={
            200: RunSerializer,
            **errors(
                400,
                403,
                404,
                409,
                e403="permission_denied: only logged-in reviewers stop runs (not logged in, or an API key).",
                e409="approval_claimed: another reviewer holds a live claim on one of the run's open cards "
                "(the detail names them and the card); nothing was stopped.",
            ),
        },
    )
    def post(self, request, run_id):
        # Review teams (SPEC section 10): a reviewer may stop only a run whose session's
        # cards they can see; any other run is 404 to them, as its cards are.
        run = Run.objects.select_related("session").filter(pk=run_id).first()
        scope = reviewer_scope(request.user)
        if run is None or scope is None or not scope.sees_unit(run.session.care_unit):
            raise NotFound("No such run.")
        body = validated(StopSerializer, request.data)
        return Response(RunSerializer(stop_run(run_id, body["reason"], user=request.user)).data)
