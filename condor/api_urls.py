from django.urls import include, path, register_converter

from approvals import bulk_views, run_stop
from approvals import claim_views as approval_claims
from approvals import views as approvals
from core.identifiers import ToolCallIdConverter
from inbox.card_views import FilterOptions, PendingCards
from inbox.decided import DecidedCards
from runs import session_views as session_runs
from runs import views as runs
from runs.stream import run_stream
from sessions_app import card_views as pinned
from sessions_app import message_views as session_messages
from sessions_app import views as sessions

register_converter(ToolCallIdConverter, "tool_call_id")

# Grouped by the object a path starts with, so resolving a path tries a handful of patterns, not
# every one: the gate call and the resume, the hottest paths, come first in their group.
run_routes = [
    path("tool-calls/", approvals.ToolCallGate.as_view(), name="tool-call-gate"),
    path("resume/", approvals.Resume.as_view(), name="run-resume"),
    path("tool-calls/<tool_call_id:tool_call_id>/result/", approvals.ToolResult.as_view(), name="tool-call-result"),
    path("clarifications/", approvals.Clarification.as_view(), name="clarification"),
    path("", runs.RunDetail.as_view(), name="run-detail"),
    path("transition/", runs.RunTransition.as_view(), name="run-transition"),
    path("close/", runs.RunClose.as_view(), name="run-close"),
    path("stop/", run_stop.RunStop.as_view(), name="run-stop"),
    path("stream", run_stream, name="run-stream"),
]

approval_routes = [
    path("decision/", approvals.Decision.as_view(), name="approval-decision"),
    path("", approvals.ApprovalDetail.as_view(), name="approval-detail"),
    path("claim/", approval_claims.Claim.as_view(), name="approval-claim"),
]

session_routes = [
    path("", sessions.SessionDetail.as_view(), name="session-detail"),
    path("runs/", runs.RunOpen.as_view(), name="run-open"),
    path("messages/", session_messages.MessageListAppend.as_view(), name="session-messages"),
    path("messages/<str:message_id>/", session_messages.MessageDetail.as_view(), name="session-message"),
    path("history/", session_runs.History.as_view(), name="session-history"),
    path("events/", session_runs.SessionEvents.as_view(), name="session-events"),
    path("runs-summary/", session_runs.RunsSummary.as_view(), name="session-runs-summary"),
    path("usage-rollup/", session_runs.UsageRollup.as_view(), name="session-usage"),
    path("memory/", session_runs.Memory.as_view(), name="session-memory"),
    path("pinned-cards/", pinned.PinnedCardList.as_view(), name="pinned-cards"),
    path("pinned-cards/reorder/", pinned.PinnedCardReorder.as_view(), name="pinned-cards-reorder"),
    path("pinned-cards/<uuid:card_id>/", pinned.PinnedCardDetail.as_view(), name="pinned-card"),
]

urlpatterns = [
    path("runs/<uuid:run_id>/", include(run_routes)),
    path("approvals/<uuid:approval_id>/", include(approval_routes)),
    path("approvals/bulk-decision/", bulk_views.BulkDecision.as_view(), name="approval-bulk-decision"),
    path("sessions/", session_runs.SessionListCreate.as_view(), name="session-list"),
    path("sessions/<uuid:session_id>/", include(session_routes)),
    path("inbox/cards/", PendingCards.as_view(), name="inbox-cards"),
    path("inbox/cards/filters/", FilterOptions.as_view(), name="inbox-card-filters"),
    path("inbox/decided/", DecidedCards.as_view(), name="inbox-decided"),
]
