"""A person at the wrong door is told where to go (issue 14): compliance on /inbox/, a reviewer on /admin/."""

from django.test import Client

from tests.helpers.personas import PASSWORD, logged_in


def test_a_compliance_officer_on_the_inbox_is_sent_to_the_admin(carl):
    page = logged_in(carl).get("/inbox/")
    assert page.status_code == 403
    html = page.content.decode()
    assert 'data-testid="not-a-reviewer"' in html and 'href="/admin/"' in html


def test_a_reviewer_signing_in_to_the_admin_is_told_where_their_work_is(rita):
    page = Client().post("/admin/login/", {"username": "rita", "password": PASSWORD})
    assert page.status_code == 200  # the form again, not a session
    html = page.content.decode()
    assert "This account has no access to the admin. Clinical reviewers work in the inbox at /inbox/." in html
    assert "_auth_user_id" not in page.wsgi_request.session


def test_a_wrong_password_on_the_admin_still_says_only_that(rita):
    html = Client().post("/admin/login/", {"username": "rita", "password": "not it"}).content.decode()
    assert "no access to the admin" not in html
    assert "correct username and password" in html


def test_compliance_still_signs_in_to_the_admin(carl):
    page = Client().post("/admin/login/?next=/admin/", {"username": "carl", "password": PASSWORD})
    assert (page.status_code, page["Location"]) == (302, "/admin/")
