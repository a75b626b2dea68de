"""An approved call is re-checked against the policy in force (SPEC section 4): at the decision, at the
resume and at a cold replay. A call the registry or egress allow-list now blocks is refused, 409
policy_changed naming the rule, nothing approved or consumed, audited; one that merely needs approval
now already has it. (An edit to a host off the list stays the reviewer's bad input, 400 invalid_payload:
tests/approvals/test_decision_api.py.)
"""

import pytest
from django.core.management import call_command

from audit.models import AuditEvent
from registry import descriptors as registry
from registry.models import ToolDescriptor
from tests.approvals.test_cold_replay import open_next_run
from tests.approvals.test_decision_api import EMAIL, parked_email  # noqa: F401 - a fixture
from tests.helpers.approval_loop import approval_row, approve, decide, gate, parked_run, resume
from tests.helpers.http import error_of
from tests.helpers.runs import run_state

pytestmark = pytest.mark.usefixtures("catalog")

HOST_GONE = "egress.host-not-allowed"


@pytest.fixture
def email(parked_email):
    """(run id, approval) of an email a guarded adult session must have approved."""
    return parked_email


@pytest.fixture
def approved_email(email, reviewer_http):
    approve(reviewer_http, email[1]["id"])
    return email


def take_the_clinic_host_off_the_allow_list():
    # Narrowing an allow-list raises risk: it applies at once, no second admin.
    call_command("register_tool", "send_email", "--allowed-host", "example.org")


def email_resume(api, run_id, approval):
    return resume(api, run_id, approval["id"], args=EMAIL)


def test_a_resume_after_the_host_left_the_allow_list_is_refused(approved_email, api):
    run_id, approval = approved_email
    take_the_clinic_host_off_the_allow_list()

    response = email_resume(api, run_id, approval)

    assert error_of(response) == (409, "policy_changed")
    assert HOST_GONE in response.json()["detail"]
    assert approval_row(approval["id"]).status == "approved"
    assert run_state(run_id) == ("suspended", "")


def test_a_refused_resume_is_audited_with_the_rule(approved_email, api):
    run_id, approval = approved_email
    take_the_clinic_host_off_the_allow_list()

    email_resume(api, run_id, approval)

    row = AuditEvent.objects.get(kind=AuditEvent.Kind.CONSUME)
    assert (row.decision, row.rule_id, str(row.approval_id)) == ("policy_changed", HOST_GONE, approval["id"])


def test_an_approval_after_the_host_left_the_allow_list_is_refused(email, reviewer_http):
    _, approval = email
    take_the_clinic_host_off_the_allow_list()

    response = decide(reviewer_http, approval["id"], {"approved": True})

    assert error_of(response) == (409, "policy_changed")
    assert HOST_GONE in response.json()["detail"]
    assert approval_row(approval["id"]).status == "pending"
    row = AuditEvent.objects.get(kind=AuditEvent.Kind.DECISION)
    assert (row.decision, row.rule_id, row.actor) == ("policy_changed", HOST_GONE, "user:rita")


def test_a_decision_sees_a_registry_change_this_process_was_not_told_of(email, reviewer_http):
    # As another web process's change reaches this one: no invalidation here, only the registry's stamp,
    # which the decision reads with the approval it locks (approvals/locking.py, registry/cache.py).
    _, approval = email
    ToolDescriptor.objects.filter(name="send_email").update(allowed_hosts=["example.org"])

    response = decide(reviewer_http, approval["id"], {"approved": True})

    assert error_of(response) == (409, "policy_changed")
    assert HOST_GONE in response.json()["detail"]
    assert approval_row(approval["id"]).status == "pending"


def test_an_edit_of_a_call_the_policy_now_blocks_is_refused_as_a_policy_change(email, reviewer_http):
    _, approval = email
    take_the_clinic_host_off_the_allow_list()

    response = decide(reviewer_http, approval["id"], {"approved": True, "edited_args": {**EMAIL, "body": "Shorter."}})

    assert error_of(response) == (409, "policy_changed")
    assert approval_row(approval["id"]).status == "pending"


def test_a_cold_replay_after_the_host_left_is_blocked_and_leaves_the_grant_unused(approved_email, api):
    run_id, approval = approved_email
    next_run = open_next_run(api, run_id)
    take_the_clinic_host_off_the_allow_list()

    response = gate(api, next_run, tool="send_email", op="send", args=EMAIL, tool_call_id="call-9")

    assert (response.status_code, response.json()["decision"], response.json()["rule_id"]) == (
        200,
        "blocked",
        HOST_GONE,
    )
    assert approval_row(approval["id"]).status == "approved"


def test_a_call_made_comms_in_a_childs_session_is_refused_at_resume(api, reviewer_http):
    run_id, approval = parked_run(api, {"age_band": "child"}, tool="run_script", op="run", args={"script": "x"})
    approve(reviewer_http, approval["id"])
    registry.register("run_script", policy_class="comms", allowed_hosts=["lab.example"], actor_system="test")

    response = resume(api, run_id, approval["id"], args={"script": "x"})

    assert error_of(response) == (409, "policy_changed")
    assert "comms.child-blocked" in response.json()["detail"]
    assert approval_row(approval["id"]).status == "approved"


def test_a_call_that_now_merely_needs_approval_still_resumes(approved_email, api):
    run_id, approval = approved_email
    # Made exec, the email would now always ask for approval: it has its approval.
    registry.register("send_email", policy_class="exec", actor_system="test")

    assert email_resume(api, run_id, approval).status_code == 200
    assert approval_row(approval["id"]).status == "consumed"
