"""Django admin forms as a browser posts them: a logged-in admin, the CSRF token, and the user page's fields."""

from django.test import Client
from django.utils import timezone


def admin_client(user) -> Client:
    """A logged-in browser on the admin, CSRF enforced as in production."""
    http = Client(enforce_csrf_checks=True)
    http.force_login(user)
    http.get("/admin/")  # the page's logout form sets the csrftoken cookie
    return http


def post(http, url, data):
    return http.post(url, {**data, "csrfmiddlewaretoken": http.cookies["csrftoken"].value})


def user_form(user, *, groups=None, permissions=None, **flags) -> dict:
    """The admin's change form for `user` as it stands, with `groups`, `permissions` and `is_*` flags replaced."""
    joined = timezone.localtime(user.date_joined)
    form = {
        "username": user.username,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
        "date_joined_0": joined.strftime("%Y-%m-%d"),
        "date_joined_1": joined.strftime("%H:%M:%S"),
        "groups": [g.pk for g in (user.groups.all() if groups is None else groups)],
        "user_permissions": [p.pk for p in (user.user_permissions.all() if permissions is None else permissions)],
    }
    for flag in ("is_active", "is_staff", "is_superuser"):
        if flags.get(flag, getattr(user, flag)):
            form[flag] = "on"
    return form


def user_url(user, page: str = "change") -> str:
    return f"/admin/auth/user/{user.pk}/{page}/"
