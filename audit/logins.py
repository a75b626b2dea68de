"""Logins to the inbox and the admin, successful or not, in the audit log (global chain).

Connected in ApprovalsConfig.ready. The details carry where and from which
address; never a password (Django's signal already masks it, and only the
username is read from the credentials).
"""

from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import receiver

from audit import trail as audit


def _where(request) -> dict:
    if request is None:
        return {}
    path = request.path
    area = "admin" if path.startswith("/admin/") else "inbox" if path.startswith("/accounts/") else path
    return {"via": area, "ip": request.META.get("REMOTE_ADDR", "")}


@receiver(user_logged_in, dispatch_uid="condor-audit-login")
def audit_login(sender, request, user, **kwargs):
    audit.record(audit.Kind.LOGIN, actor_user=user, decision="succeeded", data=_where(request))


@receiver(user_login_failed, dispatch_uid="condor-audit-login-failed")
def audit_failed_login(sender, credentials, request=None, **kwargs):
    username = str(credentials.get("username", ""))[:150]
    audit.record(
        audit.Kind.LOGIN_FAILED,
        actor_system=audit.ANONYMOUS,
        decision="failed",
        data={**_where(request), "username": username},
    )
