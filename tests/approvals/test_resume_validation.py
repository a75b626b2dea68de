"""approvals.resume_validation: a reviewer's answer checked against its resume schema (SPEC section 4)."""

import pytest
from hypothesis import given, settings

from approvals.resume_schemas import approval_resume_schema, clarification_resume_schema
from approvals.resume_validation import validate_resume_data
from tests.approvals.hint_strategies import forms, json_values

# --- approval decisions -------------------------------------------------------------


@pytest.mark.parametrize("answer", [{"approved": True}, {"approved": False, "reason": "wrong patient"}])
def test_approval_accepts_a_decision(answer):
    assert validate_resume_data(approval_resume_schema(), answer) == []


@pytest.mark.parametrize(
    "answer, message",
    [
        ({}, "approved: is required"),
        ({"reason": "ok"}, "approved: is required"),
        ({"approved": "yes"}, "approved: must be true or false"),
        ({"approved": 1}, "approved: must be true or false"),
        ({"approved": True, "reason": 5}, "reason: must be text"),
        ({"approved": True, "approver_id": "bob"}, "approver_id: is not a field of this form"),
        ([True], "answer must be a JSON object"),
    ],
)
def test_approval_refuses_a_bad_decision(answer, message):
    assert validate_resume_data(approval_resume_schema(), answer) == [message]


# --- clarification values -----------------------------------------------------------

FULL_FORM = [
    {"name": "route", "hint": {"options": ["oral", "iv"], "radio": True}},
    {"name": "site", "hint": {"options": [{"value": "l", "label": "Left"}, {"value": "r", "label": "Right"}]}},
    {"name": "symptoms", "type": "array", "hint": {"options": ["cough", "fever", "rash"], "min": 1, "max": 2}},
    {"name": "start", "type": "date", "hint": {"min": "2025-01-01", "max": "2025-12-31"}},
    {"name": "at", "type": "date-time", "hint": {"min": "2025-01-01T00:00:00Z", "max": "2025-01-31T23:59:59Z"}},
    {"name": "dose", "type": "number", "hint": {"min": 0, "max": 10}},
    {"name": "count", "type": "integer"},
    {"name": "fasting", "type": "boolean"},
    {"name": "note", "hint": {"textarea": True, "required": False}},
]
GOOD = {
    "route": "iv",
    "site": "l",
    "symptoms": ["cough"],
    "start": "2025-06-01",
    "at": "2025-01-15T09:30:00.123456789+02:00",
    "dose": 2.5,
    "count": 3,
    "fasting": False,
}


def check(**changes):
    answer = {**GOOD, **changes}
    return validate_resume_data(clarification_resume_schema("Details?", FULL_FORM), answer)


def test_good_values_are_accepted():
    assert check() == []
    assert check(note="took with food") == []


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"route": "im"}, "route: must be one of: oral, iv"),
        ({"site": "Left"}, "site: must be one of: l, r"),
        ({"symptoms": ["cough", "itch"]}, "symptoms: must be one of: cough, fever, rash"),
        ({"symptoms": []}, "symptoms: choose at least 1"),
        ({"symptoms": ["cough", "fever", "rash"]}, "symptoms: choose at most 2"),
        ({"symptoms": ["cough", "cough"]}, "symptoms: must not repeat a choice"),
        ({"start": "2024-12-31"}, "start: must be on or after 2025-01-01"),
        ({"start": "2026-01-01"}, "start: must be on or before 2025-12-31"),
        ({"start": "2025-13-01"}, "start: must be a date (YYYY-MM-DD)"),
        ({"start": "2025/06/01"}, "start: must be a date (YYYY-MM-DD)"),
        ({"start": "20250601"}, "start: must be a date (YYYY-MM-DD)"),
        ({"start": "２０２５-06-01"}, "start: must be a date (YYYY-MM-DD)"),
        ({"at": "2025-01-15T09:30:00"}, "at: must be a date-time with offset (e.g. 2025-01-31T09:30:00Z)"),
        ({"at": "not a time"}, "at: must be a date-time with offset (e.g. 2025-01-31T09:30:00Z)"),
        ({"at": "2025-01-01"}, "at: must be a date-time with offset (e.g. 2025-01-31T09:30:00Z)"),
        ({"at": "2025-01-01T00:30:00+01:00"}, "at: must be on or after 2025-01-01T00:00:00Z"),
        ({"at": "2025-02-01T00:00:00Z"}, "at: must be on or before 2025-01-31T23:59:59Z"),
        ({"dose": 10.5}, "dose: must be at most 10"),
        ({"dose": -1}, "dose: must be at least 0"),
        ({"dose": "2.5"}, "dose: must be a number"),
        ({"dose": True}, "dose: must be a number"),
        ({"count": 1.5}, "count: must be a whole number"),
        ({"fasting": "no"}, "fasting: must be true or false"),
        ({"note": 5}, "note: must be text"),
        ({"extra": "x"}, "extra: is not a field of this form"),
    ],
)
def test_bad_values_are_refused(changes, message):
    assert check(**changes) == [message]


def test_bounds_are_inclusive_and_compare_instants_across_offsets():
    assert check(start="2025-01-01") == []
    assert check(start="2025-12-31") == []
    assert check(at="2025-01-01T01:00:00+01:00") == []  # == the minimum, as an instant
    assert check(at="2025-01-31t23:59:59z") == []  # RFC 3339 allows lower-case t and z


@pytest.mark.parametrize("name", ["route", "site", "symptoms", "start", "at", "dose", "count", "fasting"])
def test_missing_required_value_is_refused(name):
    answer = {k: v for k, v in GOOD.items() if k != name}
    assert validate_resume_data(clarification_resume_schema("Details?", FULL_FORM), answer) == [f"{name}: is required"]


def test_required_free_text_must_not_be_empty():
    schema = clarification_resume_schema("Why?", [{"name": "why"}])
    assert validate_resume_data(schema, {"why": ""}) == ["why: must not be empty"]
    assert validate_resume_data(schema, {"why": "allergy"}) == []


def test_degraded_field_accepts_any_text():
    schema = clarification_resume_schema("Route?", [{"name": "route", "hint": {"options": "oral,iv"}}])
    assert validate_resume_data(schema, {"route": "oral please"}) == []


def test_several_problems_are_all_reported_sorted():
    assert check(route="im", dose=11, extra=1) == [
        "dose: must be at most 10",
        "extra: is not a field of this form",
        "route: must be one of: oral, iv",
    ]


# --- property: arbitrary answers never break the validator --------------------------


@settings(max_examples=200, deadline=None)
@given(forms, json_values)
def test_validation_of_arbitrary_answers_never_raises(missing, answer):
    schema = clarification_resume_schema("Please answer", missing)
    assert all(isinstance(message, str) for message in validate_resume_data(schema, answer))
