"""Pages of four-eyes proposals (registry changes, access grants): read-only, with Confirm and Reject buttons.

Both buttons post the page's own form (it carries the CSRF token) to a view of
their own; the service decides, and its refusal is shown on the page.
"""

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse

from core import admin_display as show
from core.errors import CondorError
from governance.readonly_admin import ReadOnlyModelAdmin
from registry.four_eyes import is_governance_admin

REASON_MAX_LENGTH = 500


class ProposalAdmin(ReadOnlyModelAdmin):
    """A subclass names its services (`confirm_service`, `reject_service`), why a user may not confirm, and what
    the page says once it is done."""

    confirmed_message = "Confirmed: the change is now in effect."
    rejected_message = "Rejected: nothing changed."

    def confirm_service(self, pk: int, user):
        raise NotImplementedError

    def reject_service(self, pk: int, user, reason: str):
        raise NotImplementedError

    def why_not_confirmer(self, proposal, user) -> str | None:
        raise NotImplementedError

    def _url_name(self, action: str) -> str:
        return f"{self.opts.app_label}_{self.opts.model_name}_{action}"

    def get_urls(self):
        return [
            path("<int:pk>/confirm/", self.admin_site.admin_view(self.confirm), name=self._url_name("confirm")),
            path("<int:pk>/reject/", self.admin_site.admin_view(self.reject), name=self._url_name("reject")),
            *super().get_urls(),
        ]

    @admin.display(description="Proposed by", ordering="proposed_by__username")
    def proposed_by_name(self, proposal):
        return show.person(proposal.proposed_by)

    @admin.display(description="Confirmed / rejected by", ordering="decided_by__username")
    def decided_by_name(self, proposal):
        return show.person(proposal.decided_by)

    def decision_context(self, request, proposal) -> dict:
        """What the page's Confirm / Reject block needs (templates/admin/governance/four_eyes_decide.html)."""
        can_decide = proposal.status == "pending" and is_governance_admin(request.user)
        not_second = self.why_not_confirmer(proposal, request.user) if can_decide else None
        return {
            "can_decide": can_decide,
            "can_confirm": can_decide and not_second is None,
            "not_second_admin": not_second,
            "proposed_by_you": proposal.proposed_by_id == request.user.pk,
            "confirm_url": reverse(f"admin:{self._url_name('confirm')}", args=[proposal.pk]),
            "reject_url": reverse(f"admin:{self._url_name('reject')}", args=[proposal.pk]),
        }

    def change_view(self, request, object_id, form_url="", extra_context=None):
        proposal = self.get_object(request, unquote(object_id))
        extra = dict(extra_context or {})
        if proposal is not None:
            extra.update(self.decision_context(request, proposal))
        return super().change_view(request, object_id, form_url, extra)

    def _decide(self, request, pk, decide, done: str):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not is_governance_admin(request.user):
            raise PermissionDenied
        get_object_or_404(self.model, pk=pk)
        try:
            decide()
        except CondorError as error:
            self.message_user(request, error.detail, messages.ERROR)
        else:
            self.message_user(request, done, messages.SUCCESS)
        return HttpResponseRedirect(reverse(f"admin:{self._url_name('change')}", args=[pk]))

    def confirm(self, request, pk):
        return self._decide(request, pk, lambda: self.confirm_service(pk, request.user), self.confirmed_message)

    def reject(self, request, pk):
        reason = request.POST.get("reason", "").strip()
        if len(reason) > REASON_MAX_LENGTH:
            self.message_user(request, f"A reason is at most {REASON_MAX_LENGTH} characters.", messages.ERROR)
            return HttpResponseRedirect(reverse(f"admin:{self._url_name('change')}", args=[pk]))
        return self._decide(request, pk, lambda: self.reject_service(pk, request.user, reason), self.rejected_message)
