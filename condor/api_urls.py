from django.urls import path, register_converter

from approvals import claim_views as approval_claims
from approvals import views as approvals
from approvals.identifiers import ToolCallIdConverter
from approvals.inbox_cards import PendingCards
from approvals.inbox_decided import DecidedCards
from runs import views as runs
from runs.stream import run_stream
from sessions_app import views as sessions

register_converter(ToolCallIdConverter, "tool_call_id")

urlpatterns = [
    path("sessions/", sessions.SessionListCreate.as_view(), name="session-list"),
    path("sessions/<uuid:session_id>/", sessions.SessionDetail.as_view(), name="session-detail"),
    path("sessions/<uuid:session_id>/runs/", runs.RunOpen.as_view(), name="run-open"),
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
