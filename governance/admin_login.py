"""The admin's sign-in form, telling a reviewer where their work is instead of "wrong password".

Django's admin form answers a correct password of an account without admin access
with the same words as a wrong password; a clinical reviewer who lands on /admin/
then keeps retyping a password that is right (and trips the login lockout).
"""

from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError

from agents.auth import is_reviewer


class CondorAdminAuthenticationForm(AdminAuthenticationForm):
    def confirm_login_allowed(self, user):
        if user.is_active and not user.is_staff:
            where = (
                "Clinical reviewers work in the inbox at /inbox/."
                if is_reviewer(user)
                else "Ask a governance admin for access."
            )
            raise ValidationError(f"This account has no access to the admin. {where}", code="no_admin_access")
        super().confirm_login_allowed(user)
