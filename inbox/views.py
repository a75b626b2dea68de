"""The reviewers' inbox page. The cards themselves arrive over /ws/inbox/."""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from agents.auth import is_reviewer
from approvals.models.quick_reason import offered_quick_reasons


@login_required
@ensure_csrf_cookie
def inbox(request):
    if not is_reviewer(request.user):
        # Still a refusal (403), but one that says where this person's work is.
        return render(request, "inbox/not_a_reviewer.html", status=403)
    return render(
        request,
        "inbox/inbox.html",
        {
            "ws_path": "/ws/inbox/",
            "decision_url_template": "/api/v1/approvals/{id}/decision/",
            "stop_url_template": "/api/v1/runs/{id}/stop/",
            "approval_url_template": "/api/v1/approvals/{id}/",
            "cards_url": "/api/v1/inbox/cards/",
            "claim_url_template": "/api/v1/approvals/{id}/claim/",
            "decided_url": "/api/v1/inbox/decided/",
            "poll_seconds": settings.CONDOR_INBOX_POLL_SECONDS,
            "quick_reasons": offered_quick_reasons(),
        },
    )
