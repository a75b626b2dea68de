"""A reviewer's edit cannot retarget the patient (SPEC section 4): 400 locked_arg, naming the field.

Locked: an object key patient_ref, patient_id or mrn at any depth (case and separators ignored), a
top-level arg the tool's registry row lists in identity_args, and any value equal to the card's
patient_ref. The card lists them (`locked_args`) for the inbox to show read-only.
"""

import pytest
from django.core.management import call_command

from approvals.locked_args import card_paths
from registry.models import ToolDescriptor
from tests.helpers.approval_loop import approval_row, approve, decide, parked_run
from tests.helpers.http import error_of

pytestmark = pytest.mark.usefixtures("catalog")

SESSION = {"patient_ref": "MRN-S005", "age_band": "adult"}
# A high-risk chemotherapy order naming its patient three ways: by key, nested, and by value.
ORDER = {
    "patient_ref": "MRN-S005",
    "drug": "methotrexate",
    "dose_mg": 1000,
    "order": {"mrn": "MRN-S005", "ward": "ONC"},
    "copy_to": "MRN-S005",
}


@pytest.fixture
def order(api):
    """(run id, approval) of ORDER parked in MRN-S005's session."""
    return parked_run(api, SESSION, args=ORDER)


def edit(reviewer_http, approval, **changes):
    return decide(reviewer_http, approval["id"], {"approved": True, "edited_args": {**ORDER, **changes}})


def assert_unchanged(approval) -> None:
    row = approval_row(approval["id"])
    assert (row.status, row.approved_args, row.payload_hash) == ("pending", None, approval["payload_hash"])


def test_an_edit_of_the_patient_ref_is_refused_naming_it(order, reviewer_http):
    _, approval = order

    response = edit(reviewer_http, approval, patient_ref="MRN-S006", dose_mg=10000)

    assert error_of(response) == (400, "locked_arg")
    assert "'patient_ref'" in response.json()["detail"]
    assert_unchanged(approval)


def test_an_edit_of_a_nested_mrn_is_refused(order, reviewer_http):
    _, approval = order

    response = edit(reviewer_http, approval, order={"mrn": "MRN-S006", "ward": "ONC"})

    assert error_of(response) == (400, "locked_arg")
    assert "'order.mrn'" in response.json()["detail"]
    assert_unchanged(approval)


def test_an_edit_of_an_arg_equal_to_the_sessions_patient_ref_is_refused(order, reviewer_http):
    _, approval = order

    response = edit(reviewer_http, approval, copy_to="MRN-S006")

    assert error_of(response) == (400, "locked_arg")
    assert "'copy_to'" in response.json()["detail"]
    assert_unchanged(approval)


def test_an_edit_of_an_identity_arg_the_registry_names_is_refused(api, reviewer_http):
    call_command("register_tool", "order_scan", "--class", "mutate", "--tier", "high", "--identity-arg", "subject")
    _, approval = parked_run(api, SESSION, tool="order_scan", args={"subject": "bed-12", "modality": "CT"})

    response = decide(
        reviewer_http, approval["id"], {"approved": True, "edited_args": {"subject": "bed-14", "modality": "CT"}}
    )

    assert error_of(response) == (400, "locked_arg")
    assert "'subject'" in response.json()["detail"]
    assert_unchanged(approval)


def test_an_edit_that_adds_or_removes_a_patient_key_is_refused(order, reviewer_http):
    _, approval = order
    added = decide(reviewer_http, approval["id"], {"approved": True, "edited_args": {**ORDER, "PatientId": "p-9"}})
    removed = decide(
        reviewer_http,
        approval["id"],
        {"approved": True, "edited_args": {key: value for key, value in ORDER.items() if key != "patient_ref"}},
    )

    assert error_of(added) == error_of(removed) == (400, "locked_arg")
    assert_unchanged(approval)


def test_an_edit_that_keeps_the_patient_is_approved(order, reviewer_http):
    _, approval = order

    body = approve(reviewer_http, approval["id"], edited_args={**ORDER, "dose_mg": 500})

    assert (body["status"], body["approved_args"]["dose_mg"]) == ("approved", 500)


def test_the_card_lists_the_locked_args(order):
    _, approval = order
    assert approval["locked_args"] == ["patient_ref", "order.mrn", "copy_to"]


def test_a_registry_change_that_drops_an_identity_arg_lowers_risk():
    from registry.changes import lowering_reasons

    before = {"policy_class": "mutate", "hitl_tier": "high", "identity_args": ["subject"]}
    assert lowering_reasons("order_scan", before, {**before, "identity_args": []}) == [
        "identity args no longer locked: subject"
    ]


def test_identity_args_must_be_a_short_list_of_names():
    from django.core.exceptions import ValidationError

    for bad in (["ok", ""], ["x" * 121], "subject", [f"a{n}" for n in range(21)], [" padded"]):
        with pytest.raises(ValidationError, match="Identity args"):
            ToolDescriptor(name="order_scan", identity_args=bad).full_clean()


@pytest.mark.parametrize(
    ("args", "paths"),
    [
        ({"patientRef": "x", "PATIENT-ID": "y", "Mrn": "z"}, ["patientRef", "PATIENT-ID", "Mrn"]),
        ({"orders": [{"mrn": "a"}, {"drug": "b"}]}, ["orders[0].mrn"]),
        ({"patient_ref": {"mrn": "a", "name": "A"}}, ["patient_ref"]),  # the whole value, once
        ({"cc": ["MRN-1", "MRN-2"]}, ["cc[0]"]),
        ({"dose": 1, "note": "MRN-1 seen"}, []),  # a value that merely mentions the patient is not the patient
    ],
    ids=["names", "nested-in-a-list", "whole-value", "value-in-a-list", "none"],
)
def test_the_locked_paths(args, paths):
    assert card_paths(args, patient_ref="MRN-1") == paths
