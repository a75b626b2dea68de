"""Sign-in abuse (issue 9, item 8): repeated failures pause sign-in, on the inbox and admin logins alike.

django-axes counts failures per username and address; after CONDOR_LOGIN_FAILURE_LIMIT
of them sign-in is refused, even with the right password, until the cool-off ends.
"""

from datetime import timedelta

from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client

from tests.helpers.personas import PASSWORD

INBOX_LOGIN, ADMIN_LOGIN = "/accounts/login/", "/admin/login/"


def sign_in(http, path, username, password, address="127.0.0.1"):
    return http.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def fail_until_locked(http, path, username):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = sign_in(http, path, username, "not the password")
    return response


def test_a_correct_password_signs_in(rita):
    response = sign_in(Client(), INBOX_LOGIN, "rita", PASSWORD)
    assert response.status_code == 302 and response["Location"] == "/inbox/"


def test_repeated_failures_lock_the_reviewer_login(rita):
    http = Client()
    response = fail_until_locked(http, INBOX_LOGIN, "rita")
    assert response.status_code == 429
    text = response.content.decode()
    assert "Sign-in paused" in text and "15 minutes" in text
    assert int(response["Retry-After"]) == 900


def test_a_locked_out_reviewer_cannot_sign_in_even_with_the_right_password(rita):
    http = Client()
    fail_until_locked(http, INBOX_LOGIN, "rita")
    response = sign_in(http, INBOX_LOGIN, "rita", PASSWORD)
    assert response.status_code == 429
    assert "_auth_user_id" not in http.session


def test_the_admin_login_locks_out_too(carl):
    http = Client()
    assert fail_until_locked(http, ADMIN_LOGIN, "carl").status_code == 429
    assert sign_in(http, ADMIN_LOGIN, "carl", PASSWORD).status_code == 429


def test_failures_below_the_limit_do_not_lock(rita):
    http = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(http, INBOX_LOGIN, "rita", "not the password").status_code == 200  # the form again
    assert sign_in(http, INBOX_LOGIN, "rita", PASSWORD).status_code == 302


def test_another_reviewer_is_not_locked_by_someone_elses_failures(rita, db):
    from tests.helpers.personas import person

    person("rosa", "reviewers")
    fail_until_locked(Client(), INBOX_LOGIN, "rita")
    assert sign_in(Client(), INBOX_LOGIN, "rosa", PASSWORD).status_code == 302


def test_sign_in_works_again_after_the_cool_off(rita):
    http = Client()
    fail_until_locked(http, INBOX_LOGIN, "rita")
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16))
    assert sign_in(http, INBOX_LOGIN, "rita", PASSWORD).status_code == 302


def test_a_session_lasts_one_shift_by_default(rita):
    http = Client()
    sign_in(http, INBOX_LOGIN, "rita", PASSWORD)
    assert http.cookies[settings.SESSION_COOKIE_NAME]["max-age"] == 8 * 3600
