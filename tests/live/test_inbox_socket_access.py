"""The inbox socket follows the reviewer's permissions, not the ones they had when it opened.

Logging out, deactivation and leaving the reviewers group close the socket at once
(4401 sign in again, 4403 no longer a reviewer), and even a change made behind
Django's back (no signal) stops the very next push. Also: whose pages may open a
socket at all (scheme, host and port), and what a bad message from the page gets.
"""

import pytest
from django.contrib.auth.models import Group, User
from django.contrib.sessions.models import Session
from django.test import override_settings

from approvals.visibility import ReviewerScope
from inbox import socket_signals
from inbox.consumers import NOT_A_REVIEWER, SIGNED_OUT
from tests.helpers.approval_loop import suspend
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run
from tests.live.sockets import PUSH_TIMEOUT, connected_inbox, in_event_loop, next_message, pong_is_next, refused, sync

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("fresh_channel_layer"),
]


async def closed_with(socket) -> int | None:
    """The close code the server sent next, or None if it sent a message instead."""
    output = await socket.receive_output(timeout=PUSH_TIMEOUT)
    return output.get("code") if output["type"] == "websocket.close" else None


def park_a_call(api) -> dict:
    return suspend(api, open_executing_run(api))


def log_out(browser) -> None:
    response = browser.post("/accounts/logout/", {"csrfmiddlewaretoken": browser.cookies["csrftoken"].value})
    assert response.status_code == 302, response.content


def reviewers() -> Group:
    return Group.objects.get(name="reviewers")


# ------------------------------------------------------------------ told at once


@in_event_loop
async def test_logging_out_closes_the_sessions_socket_at_once(rita):
    browser = await sync(logged_in, rita)
    async with connected_inbox(rita, browser=browser) as (socket, _):
        await sync(log_out, browser)
        assert await closed_with(socket) == SIGNED_OUT


@in_event_loop
async def test_a_deactivated_reviewer_is_closed_at_once(rita):
    async with connected_inbox(rita) as (socket, _):
        rita.is_active = False
        await sync(rita.save)
        assert await closed_with(socket) == SIGNED_OUT


@in_event_loop
async def test_leaving_the_reviewers_group_closes_the_socket_at_once(rita):
    async with connected_inbox(rita) as (socket, _):
        await sync(rita.groups.remove, await sync(reviewers))
        assert await closed_with(socket) == NOT_A_REVIEWER


@in_event_loop
async def test_emptying_the_reviewers_group_closes_its_members_sockets(rita):
    async with connected_inbox(rita) as (socket, _):
        await sync(lambda: reviewers().user_set.clear())
        assert await closed_with(socket) == NOT_A_REVIEWER


@in_event_loop
async def test_another_users_change_leaves_the_socket_open(rita, carl, api):
    async with connected_inbox(rita) as (socket, _):
        carl.is_active = False
        await sync(carl.save)
        approval = await sync(park_a_call, api)
        message = await next_message(socket)
    assert (message["type"], message["card"]["id"]) == ("card.added", approval["id"])


# ------------------------------------------------------------------ re-checked on every push


def _end_sessions_quietly():
    Session.objects.all().delete()  # no logout signal: expiry, or an operator clearing sessions


def _deactivate_quietly(user):
    User.objects.filter(pk=user.pk).update(is_active=False)  # no post_save


def _leave_group_quietly(user):
    User.groups.through.objects.filter(user_id=user.pk).delete()  # no m2m_changed


@pytest.mark.parametrize(
    ("revoke", "code"),
    [
        (lambda rita: _end_sessions_quietly(), SIGNED_OUT),
        (_deactivate_quietly, SIGNED_OUT),
        (_leave_group_quietly, NOT_A_REVIEWER),
    ],
    ids=["session-gone", "deactivated", "left-the-group"],
)
@in_event_loop
async def test_the_next_push_finds_the_permission_gone_and_closes(rita, api, revoke, code, monkeypatch):
    told = []
    monkeypatch.setattr(socket_signals, "send_to_group", lambda group, message: told.append(group))
    async with connected_inbox(rita) as (socket, _):
        await sync(revoke, rita)
        assert told == []  # nobody told the socket (the signals send after commit, which has happened)
        await sync(park_a_call, api)
        assert await closed_with(socket) == code  # the card was not delivered first


@in_event_loop
async def test_a_ping_re_checks_too(rita):
    async with connected_inbox(rita) as (socket, _):
        await sync(_deactivate_quietly, rita)
        await socket.send_json_to({"type": "ping"})
        assert await closed_with(socket) == SIGNED_OUT


@in_event_loop
async def test_a_card_the_reviewer_may_not_see_is_not_pushed(rita, api, monkeypatch):
    # The hook review teams narrow: every push goes through ReviewerScope.can_see.
    async with connected_inbox(rita) as (socket, _):
        monkeypatch.setattr(ReviewerScope, "can_see", lambda self, card: card["tool_call_id"] != "call-1")
        await sync(park_a_call, api)
        assert await pong_is_next(socket)


# ------------------------------------------------------------------ origin


@pytest.mark.parametrize(
    ("origin", "host"),
    [
        (b"http://127.0.0.1:8001", b"127.0.0.1:8000"),  # another port of the same host
        (b"http://127.0.0.1:8000", b"127.0.0.1"),  # :8000 is not the default port 80
        (b"https://127.0.0.1", b"127.0.0.1"),  # the socket came over plain ws
        (b"http://evil.example", b"evil.example"),  # a Host not in ALLOWED_HOSTS
        (b"null", b"127.0.0.1"),  # a sandboxed page
        (b"http://127.0.0.1:notaport", b"127.0.0.1"),
    ],
    ids=["other-port", "port-vs-default", "other-scheme", "host-not-allowed", "null", "malformed"],
)
@in_event_loop
async def test_an_origin_differing_in_scheme_host_or_port_is_refused(rita, origin, host):
    assert await refused(rita, origin=origin, host=host)


@in_event_loop
async def test_the_same_scheme_host_and_port_is_let_in(rita):
    assert not await refused(rita, origin=b"http://127.0.0.1:8000", host=b"127.0.0.1:8000")
    assert not await refused(rita, origin=b"http://localhost:80", host=b"localhost")


@override_settings(CSRF_TRUSTED_ORIGINS=["https://inbox.example.org", "https://*.wards.example.org"])
@in_event_loop
async def test_csrf_trusted_origins_are_let_in_with_their_exact_port(rita):
    assert not await refused(rita, origin=b"https://inbox.example.org")
    assert not await refused(rita, origin=b"https://ward7.wards.example.org:443")
    assert await refused(rita, origin=b"https://inbox.example.org:8443")
    assert await refused(rita, origin=b"http://inbox.example.org")


# ------------------------------------------------------------------ what the page sends


@pytest.mark.parametrize(
    "text",
    ["not json", "[1, 2]", '"ping"', "null", '{"type": "ping", "pad": "%s"}' % ("x" * 5000)],
    ids=["not-json", "array", "string", "null", "oversized"],
)
@in_event_loop
async def test_a_bad_message_is_answered_and_the_socket_stays_open(rita, text):
    async with connected_inbox(rita) as (socket, _):
        await socket.send_to(text_data=text)
        assert (await next_message(socket))["error"] == "invalid_message"
        await socket.send_json_to({"type": "ping"})
        assert await next_message(socket) == {"type": "pong"}


@in_event_loop
async def test_a_binary_message_is_answered_and_the_socket_stays_open(rita):
    async with connected_inbox(rita) as (socket, _):
        await socket.send_to(bytes_data=b"\x00\xff")
        assert (await next_message(socket))["error"] == "invalid_message"
        await socket.send_json_to({"type": "ping"})
        assert await next_message(socket) == {"type": "pong"}
