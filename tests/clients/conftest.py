"""The Python client against a real daphne: the agent is `condor_client`, rita decides over the API.

`rita_deciding(policy)` runs rita at her inbox on a thread: every approval that
turns up pending is handed to `policy`, whose answer (a decision body, or None
to leave the card alone) she posts with her session cookie and CSRF token.
"""

import threading
import time

import pytest
from django.db import connection

from approvals.models import Approval, ApprovalStatus
from tests.helpers.approval_loop import decide
from tests.live.conftest import daphne_server, live_agent, live_reviewer  # noqa: F401 - the live-wire fixtures


@pytest.fixture
def condor(live_agent):
    from condor_client import Condor

    with Condor(f"http://{live_agent.host}", live_agent.key, wait_timeout=20) as client:
        yield client


@pytest.fixture
def condor_url(live_agent) -> str:
    return f"http://{live_agent.host}"


class Rita:
    def __init__(self, browser, policy, second_eyes=None):
        self.browser, self.policy = browser, policy
        # A second reviewer who gives a four-eyes card (sign_document) the same answer as rita.
        self.second_eyes = second_eyes
        self.seen: list[Approval] = []
        self.answers: list[tuple[int, dict]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, daemon=True)

    def _work(self):
        try:
            while not self._stop.is_set():
                fresh = (
                    Approval.objects.filter(status=ApprovalStatus.PENDING)
                    .exclude(pk__in=[a.pk for a in self.seen])
                    .order_by("requested_at")
                )
                for approval in fresh:
                    self.seen.append(approval)
                    body = self.policy(approval)
                    if body is not None:
                        answer = decide(self.browser, approval.pk, body)
                        if (
                            answer.status_code == 200
                            and answer.json()["status"] == "pending"
                            and self.second_eyes is not None
                        ):
                            answer = decide(self.second_eyes, approval.pk, body)
                        self.answers.append((answer.status_code, answer.json()))
                time.sleep(0.05)
        finally:
            connection.close()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)


@pytest.fixture
def rita_deciding(live_reviewer, daphne_server):
    from tests.helpers.personas import person
    from tests.live.wire import LiveBrowser

    second_eyes = LiveBrowser(daphne_server.host, person("rob", "reviewers"))

    def start(policy) -> Rita:
        return Rita(live_reviewer, policy, second_eyes)

    return start


def approve_all(approval):
    return {"approved": True}
