"""The README's examples, run as written against a live server while rita decides over the API.

Each block is read from the README by its `readme-test` marker (tests/helpers/readme.py),
so what a reader copies is what runs here.
"""

import json
import sys

import pytest

from approvals.models import Approval, ApprovalStatus
from tests.clients.conftest import approve_all
from tests.helpers.processes import REPO
from tests.helpers.readme import fenced_block, run_shell

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# Generous for two machines' worth of suites at once, and still a bound: the hang it guards
# against (a stream read that never ends) would run forever.
EXITS_WITHIN_SECONDS = 90


@pytest.fixture
def checkout(tmp_path, live_agent):
    """A directory laid out as the examples expect of the checkout: the agent key in var/demo-agent.key."""
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "demo-agent.key").write_text(live_agent.key)
    return tmp_path


def last_json_line(output: str):
    return json.loads(output.strip().splitlines()[-1])


@pytest.mark.timeout(4 * EXITS_WITHIN_SECONDS)
def test_the_round_trip_exits_after_the_decision_and_resumes_again_and_again(checkout, daphne_server, rita_deciding):
    round_trip = fenced_block("round-trip")
    with rita_deciding(approve_all):
        runs = [
            run_shell(round_trip, cwd=checkout, env={"PORT": str(daphne_server.port)}, timeout=EXITS_WITHIN_SECONDS)
            for _ in range(2)
        ]
    for finished in runs:
        assert finished.returncode == 0, finished.stderr
        assert last_json_line(finished.stdout) == {"proceed": True, "args": {"drug": "amoxicillin", "dose_mg": 500}}
    assert Approval.objects.filter(status=ApprovalStatus.CONSUMED).count() == 2


@pytest.mark.timeout(2 * EXITS_WITHIN_SECONDS)
def test_the_round_trip_ends_with_the_reviewers_reason_after_a_rejection(checkout, daphne_server, rita_deciding):
    with rita_deciding(lambda approval: {"approved": False, "reason": "Penicillin allergy on file."}):
        finished = run_shell(
            fenced_block("round-trip"),
            cwd=checkout,
            env={"PORT": str(daphne_server.port)},
            timeout=EXITS_WITHIN_SECONDS,
        )
    assert finished.returncode == 0, finished.stderr
    assert last_json_line(finished.stdout) == {
        "error": "approval_rejected",
        "detail": "The reviewer rejected this call: Penicillin allergy on file.",
    }


def test_the_python_client_example_is_the_same_in_both_readmes():
    assert fenced_block("python-client") == fenced_block("python-client", REPO / "clients" / "python" / "README.md")


@pytest.mark.timeout(4 * EXITS_WITHIN_SECONDS)
def test_the_python_client_example_prints_what_the_approved_tool_returned(checkout, daphne_server, rita_deciding):
    example = fenced_block("python-client")
    assert example.count("http://127.0.0.1:8000") == 1
    script = example.replace("http://127.0.0.1:8000", daphne_server.url())
    with rita_deciding(approve_all):
        # The interpreter of the environment `make run` builds (here, the suite's own).
        finished = run_shell(
            f"{sys.executable} - <<'EXAMPLE'\n{script}EXAMPLE\n", cwd=checkout, env={}, timeout=EXITS_WITHIN_SECONDS
        )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == ("prescribed: {'prescription_id': 'rx-1', 'drug': 'amoxicillin', 'dose_mg': 500}")
