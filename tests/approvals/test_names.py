"""Names agents and operators choose must read as what they are (issue 9, items 1 and 11).

Tool names and ops are plain ASCII (SPEC section 2), so a Cyrillic "dеlete" or a
zero-width space cannot dress a destructive call up as another; a tool call id is a
routable path segment; a clarification field name is an identifier a browser object
can hold; an API client name fits the model. See core/identifiers.py.
"""

from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from agents.models import ApiClient
from approvals.models import Approval, ToolCall
from audit.models import AuditEvent
from registry.models import ToolDescriptor
from tests.helpers.approval_loop import clarify, gate
from tests.helpers.http import post
from tests.helpers.runs import open_executing_run

LOOKALIKES = [
    "d\u0435lete",  # Cyrillic е
    "delete\u200b",  # zero-width space
    "\u202edelete",  # right-to-left override
    "ｄelete",  # fullwidth d
    "de lete",
    "delete/all",
    " delete",  # whitespace is no part of the alphabet either: taken as sent, not trimmed
    "delete\n",
    "\tdelete_all ",
]


def assert_invalid(response, field):
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_payload"
    assert field in response.json()["detail"]


def assert_nothing_gated():
    assert not ToolCall.objects.exists()
    assert not Approval.objects.exists()
    assert not AuditEvent.objects.filter(kind=AuditEvent.Kind.VERDICT).exists()


# --- tool names and ops -----------------------------------------------------------------------


@pytest.mark.parametrize("op", LOOKALIKES, ids=ascii)
def test_an_op_that_is_not_plain_ascii_is_refused_at_the_gate(api, run_id, op):
    assert_invalid(gate(api, run_id, tool="record_allergy", op=op, args={"allergen": "penicillin"}), "op")
    assert_nothing_gated()


@pytest.mark.parametrize(
    "tool",
    [
        "record_allerg\u0443",
        "record_allergy\u200d",
        "record allergy",
        "notes/append",
        " record_allergy ",
        "record_allergy\n",
    ],
    ids=ascii,
)
def test_a_tool_name_that_is_not_plain_ascii_is_refused_at_the_gate(api, run_id, tool):
    assert_invalid(gate(api, run_id, tool=tool, op="create", args={}), "tool")
    assert_nothing_gated()


@pytest.mark.parametrize("field, value", [("op", "d\u0435lete"), ("tool", "prescribe_medicati\u043en")], ids=ascii)
def test_clarifications_refuse_names_that_are_not_plain_ascii(api, run_id, field, value):
    assert_invalid(clarify(api, run_id, [{"name": "route"}], **{field: value}), field)
    assert_nothing_gated()


@pytest.mark.parametrize(
    "op",
    [
        "delete_all",
        "bulk-remove",
        "remove.item",
        "bulkDelete",
        "CANCELled",
        "DELETEall",
        "de-lete",
        "de_lete",
        "d.e.l.e.t.e",
        "purge",
        "erase",
        "destroy",
        "drop",
        "wipe",
        "truncate",
        "expunge",
        "revoke",
        "rm",
        "del",
        "deletion",
        "removal",
        "erasing",
        "revocation",
        "discontinuation",
        "wiping",
    ],
)
def test_a_destructive_word_part_parks_a_low_tier_write_the_clinician_typed(api, catalog, op):
    run_id = open_executing_run(api, autonomy="autonomous", age_band="adult", consent=True)
    response = gate(api, run_id, tool="record_allergy", op=op, args={"allergen": "penicillin"})
    assert response.status_code == 202, response.content
    assert response.json()["rule_id"] == "mutate.destructive-op-approval"


@pytest.mark.parametrize(
    "body",
    [{"args": {"action": "delete"}}, {"op": "", "args": {"allergen": "penicillin"}}],
    ids=["no-op-action-delete", "empty-op"],
)
def test_a_low_tier_write_that_names_no_op_parks_with_its_own_rule(api, catalog, body):
    run_id = open_executing_run(api, autonomy="autonomous", age_band="adult", consent=True)
    payload = {"tool_call_id": "call-1", "step_id": "step-1", "tool": "record_allergy", **body}
    response = post(api, f"/api/v1/runs/{run_id}/tool-calls/", payload)
    assert response.status_code == 202, response.content
    assert response.json()["rule_id"] == "mutate.missing-op-approval"
    assert response.json()["approval"]["hitl_tier"] == "high"


def test_register_tool_refuses_a_name_that_is_not_plain_ascii(db):
    with pytest.raises(CommandError, match="name"):
        call_command("register_tool", "send_\u0435mail", "--class", "read", stdout=StringIO())
    assert not ToolDescriptor.objects.exists()


@pytest.mark.parametrize("name", ["fhir.patient_read-v2", "A1"])
def test_a_descriptor_name_of_ascii_letters_digits_dots_underscores_and_dashes_is_valid(db, name):
    ToolDescriptor(name=name, policy_class="read").full_clean()


@pytest.mark.parametrize("name", ["send\u200bemail", "send email", "s\u0435nd", "send/email", ""], ids=ascii)
def test_descriptor_validation_refuses_other_names(db, name):
    with pytest.raises(ValidationError) as error:
        ToolDescriptor(name=name, policy_class="read").full_clean()
    assert "name" in error.value.message_dict


# --- tool call ids ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tool_call_id",
    [
        "call/1",
        "..",
        ".",
        "call 1",
        " call-1",
        "call-1\n",
        "call?1",
        "call#1",
        "call%2F1",
        "c\u0430ll-1",
        "call\\1",
        "-call",
    ],
    ids=ascii,
)
def test_a_tool_call_id_that_cannot_be_routed_is_refused_at_the_gate(api, run_id, tool_call_id):
    assert_invalid(gate(api, run_id, tool="search_patients", op="", args={}, tool_call_id=tool_call_id), "tool_call_id")
    assert_nothing_gated()


def test_a_tool_call_id_that_cannot_be_routed_is_refused_for_a_clarification(api, run_id):
    assert_invalid(clarify(api, run_id, [{"name": "route"}], tool_call_id="call/1"), "tool_call_id")
    assert_nothing_gated()


@pytest.mark.parametrize("tool_call_id", ["call_01HZY3", "toolu_01A:b.c-d", "x" * 120])
def test_an_allowed_tool_call_id_round_trips_through_the_result_url(api, run_id, tool_call_id):
    assert gate(api, run_id, tool="search_patients", op="", args={}, tool_call_id=tool_call_id).status_code == 200
    response = api.post(f"/api/v1/runs/{run_id}/tool-calls/{tool_call_id}/result/", {"output": []}, format="json")
    assert response.status_code == 200, response.content


def test_a_result_url_with_a_control_character_is_a_json_400_not_a_server_error(api, run_id):
    response = api.post(f"/api/v1/runs/{run_id}/tool-calls/call%00x/result/", {"output": []}, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"


# --- clarification field names ----------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "__proto__",
        "constructor",
        "prototype",
        "toString",
        "hasOwnProperty",
        "1st_dose",
        "_private",
        "dose mg",
        "dose-mg",
        "d\u043ese",
        "x" * 65,
        "route\u200b",
    ],
    ids=ascii,
)
def test_a_field_name_a_browser_object_cannot_hold_safely_is_refused(api, run_id, name):
    assert_invalid(clarify(api, run_id, [{"name": "route"}, {"name": name}]), "missing[1].name")
    assert_nothing_gated()


@pytest.mark.parametrize("name", ["route", "weight_kg", "Q2", "x" * 64])
def test_identifier_field_names_are_accepted(api, run_id, name):
    response = clarify(api, run_id, [{"name": name}])
    assert response.status_code == 202, response.content
    assert list(response.json()["approval"]["resume_schema"]["properties"]) == [name]


# --- create_api_client names ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, words",
    [
        ("x" * 121, "at most 120"),
        ("", "blank"),
        ("ward\x00agent", "control or invisible"),
        ("ward\u202eagent", "control or invisible"),
        (" ward-7", "spaces"),
    ],
)
def test_create_api_client_refuses_a_name_that_does_not_fit_with_a_clear_error(db, name, words):
    with pytest.raises(CommandError, match=words):
        call_command("create_api_client", name, stdout=StringIO(), stderr=StringIO())
    assert not ApiClient.objects.exists()


def test_create_api_client_takes_a_long_name_that_fits_the_model(db):
    # The key's own label holds 50 characters; the client's name holds 120.
    name = "north-west-regional-hospital-night-shift-triage-agent"
    out = StringIO()
    call_command("create_api_client", name, stdout=out, stderr=StringIO())
    client = ApiClient.objects.get(name=name)
    assert client.keys.count() == 1
    assert out.getvalue().strip()
