from django.urls import path, register_converter

from approvals import claim_views as approval_claims
from approvals import views as approvals
from approvals.identifiers import ToolCallIdConverter
from approvals.inbox_cards import PendingCards
from approvals.inbox_decided import DecidedCards
from runs import session_views as session_runs
from runs import views as runs
from runs.stream import run_stream
from sessions_app import views as sessions
from sessions_app import card_views as pinned
from sessions_app import message_views as session_messages

register_converter(ToolCallIdConverter, "tool_call_id")

urlpatterns = [
    path("sessions/", sessions.SessionListCreate.as_view(), name="session-list"),
    path("sessions/<uuid:session_id>/", sessions.SessionDetail.as_view(), name="session-detail"),
    path("sessions/<uuid:session_id>/runs/", runs.RunOpen.as_view(), name="run-open"),
    path("sessions/<uuid:session_id>/messages/", session_messages.MessageListAppend.as_view(), name="session-messages"),
    path("sessions/<uuid:session_id>/messages/<str:message_id>/", session_messages.MessageDetail.as_view(),
         name="session-message"),
    path("sessions/<uuid:session_id>/history/", session_messages.History.as_view(), name="session-history"),
    path("sessions/<uuid:session_id>/events/", session_runs.SessionEvents.as_view(), name="session-events"),
    path("sessions/<uuid:session_id>/runs-summary/", session_runs.RunsSummary.as_view(), name="session-runs-summary"),
    path("sessions/<uuid:session_id>/usage-rollup/", session_runs.UsageRollup.as_view(), name="session-usage"),
    path("sessions/<uuid:session_id>/memory/", session_runs.Memory.as_view(), name="session-memory"),
    path("sessions/<uuid:session_id>/pinned-cards/", pinned.PinnedCardList.as_view(), name="pinned-cards"),
    path("sessions/<uuid:session_id>/pinned-cards/reorder/", pinned.PinnedCardReorder.as_view(),
         name="pinned-cards-reorder"),
    path("sessions/<uuid:session_id>/pinned-cards/<uuid:card_id>/", pinned.PinnedCardDetail.as_view(),
         name="pinned-card"),
    path("runs/<uuid:run_id>/", runs.RunDetail.as_view(), name="run-detail"),
    path("runs/<uuid:run_id>/transition/", runs.RunTransition.as_view(), name="run-transition"),
    path("runs/<uuid:run_id>/close/", runs.RunClose.as_view(), name="run-close"),
    path("runs/<uuid:run_id>/stop/", runs.RunStop.as_view(), name="run-stop"),
    path("runs/<uuid:run_id>/stream", run_stream, name="run-stream"),
    path("runs/<uuid:run_id>/tool-calls/", approvals.ToolCallGate.as_view(), name="tool-call-gate"),
    path("runs/<uuid:run_id>/tool-calls/<tool_call_id:tool_call_id>/result/", approvals.ToolResult.as_view(),
         name="tool-call-result"),
    path("runs/<uuid:run_id>/clarifications/", approvals.Clarification.as_view(), name="clarification"),
    path("runs/<uuid:run_id>/resume/", approvals.Resume.as_view(), name="run-resume"),
    path("approvals/<uuid:approval_id>/", approvals.ApprovalDetail.as_view(), name="approval-detail"),
    path("approvals/<uuid:approval_id>/decision/", approvals.Decision.as_view(), name="approval-decision"),
    path("approvals/<uuid:approval_id>/claim/", approval_claims.Claim.as_view(), name="approval-claim"),
    path("inbox/cards/", PendingCards.as_view(), name="inbox-cards"),
    path("inbox/decided/", DecidedCards.as_view(), name="inbox-decided"),
]
