"""approvals.resume_schemas: approval and clarification resume schemas (SPEC section 4)."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from jsonschema import Draft202012Validator

from approvals.resume_schemas import (
    InvalidClarificationRequest,
    approval_resume_schema,
    clarification_resume_schema,
)
from core.hashing import canonical_json
from tests.approvals.hint_strategies import forms

MCP_FORM = json.loads((Path(__file__).parent / "mcp_elicitation_schema.json").read_text())
MCP_VALIDATOR = Draft202012Validator(MCP_FORM)
DEGRADED = {"title": "dose", "type": "string", "minLength": 1}


def assert_mcp_form(schema):
    Draft202012Validator.check_schema(schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in MCP_VALIDATOR.iter_errors(schema)]
    assert errors == []


def form(*missing, message="Which route?"):
    schema = clarification_resume_schema(message, list(missing))
    assert_mcp_form(schema)
    return schema


def field(item):
    return form(item)["properties"][item["name"]]


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "pattern": "^a$"},
        {"type": "string", "format": "phone"},
        {"type": "object", "properties": {}},
        {"type": "string", "enum": ["a"], "x-condor-widget": "textarea"},
        {"type": "array", "items": {"type": "number"}},
    ],
)
def test_the_mcp_transcription_refuses_what_mcp_does_not_define(prop):
    # Guards the guard: the property tests below are only as strict as this schema.
    assert not MCP_VALIDATOR.is_valid({"type": "object", "properties": {"f": prop}})


# --- approval schema ----------------------------------------------------------------


def test_approval_schema_properties_are_exactly_approved_and_reason():
    schema = approval_resume_schema()
    assert set(schema["properties"]) == {"approved", "reason"}
    assert schema["properties"]["approved"]["type"] == "boolean"
    assert schema["properties"]["reason"]["type"] == "string"


def test_approval_schema_requires_only_approved():
    assert approval_resume_schema()["required"] == ["approved"]


def test_approval_schema_has_no_default_anywhere():
    assert "default" not in json.dumps(approval_resume_schema())


def test_approval_schema_is_an_mcp_form():
    assert_mcp_form(approval_resume_schema())


def test_approval_schema_is_a_fresh_dict_each_call():
    approval_resume_schema()["properties"]["approver_id"] = {"type": "string"}
    assert set(approval_resume_schema()["properties"]) == {"approved", "reason"}


# --- clarification schema: the form -------------------------------------------------


def test_form_root_is_a_closed_object_carrying_the_message():
    schema = form({"name": "route"}, {"name": "dose"}, message="Route and dose?")
    assert schema["type"] == "object"
    assert schema["description"] == "Route and dose?"
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == ["route", "dose"]  # the agent's order
    assert schema["required"] == ["route", "dose"]


def test_plain_field_is_required_free_text_titled_by_its_name():
    assert field({"name": "dose"}) == {"title": "dose", "type": "string", "minLength": 1}


def test_label_and_description_become_title_and_description():
    hint = {"label": "Dose (mg)", "description": "Per administration"}
    assert field({"name": "dose", "hint": hint}) == {
        "title": "Dose (mg)",
        "type": "string",
        "minLength": 1,
        "description": "Per administration",
    }


def test_optional_field_is_left_out_of_required():
    schema = form({"name": "note", "hint": {"required": False}}, {"name": "dose"})
    assert schema["required"] == ["dose"]
    assert schema["properties"]["note"] == {"title": "note", "type": "string"}


def test_null_hint_values_mean_absent():
    assert field({"name": "dose", "type": None, "hint": {"label": None, "options": None}}) == DEGRADED


def test_string_options_make_a_single_select():
    assert field({"name": "route", "hint": {"options": ["oral", "iv"]}}) == {
        "title": "route",
        "type": "string",
        "enum": ["oral", "iv"],
    }


def test_radio_flag_is_carried_as_a_widget_hint():
    assert field({"name": "route", "hint": {"options": ["oral", "iv"], "radio": True}}) == {
        "title": "route",
        "type": "string",
        "enum": ["oral", "iv"],
        "x-condor-widget": "radio",
    }


def test_labelled_options_make_a_titled_single_select():
    hint = {"options": [{"value": "po", "label": "By mouth"}, "iv", {"value": "im"}]}
    assert field({"name": "route", "hint": hint}) == {
        "title": "route",
        "type": "string",
        "oneOf": [
            {"const": "po", "title": "By mouth"},
            {"const": "iv", "title": "iv"},
            {"const": "im", "title": "im"},
        ],
    }


@pytest.mark.parametrize(
    "item",
    [
        {"name": "symptoms", "hint": {"options": ["cough", "fever"], "multiple": True}},
        {"name": "symptoms", "type": "array", "hint": {"options": ["cough", "fever"]}},
        {"name": "symptoms", "type": "array", "hint": {"options": ["cough", "fever"], "multiple": True}},
    ],
)
def test_multiple_or_array_type_makes_a_multi_select(item):
    assert field(item) == {
        "title": "symptoms",
        "type": "array",
        "items": {"type": "string", "enum": ["cough", "fever"]},
        "uniqueItems": True,
    }


def test_labelled_multi_select_with_choice_count_bounds():
    hint = {"options": [{"value": "c", "label": "Cough"}, "fever", "rash"], "min": 1, "max": 2}
    assert field({"name": "symptoms", "type": "array", "hint": hint}) == {
        "title": "symptoms",
        "type": "array",
        "items": {
            "anyOf": [
                {"const": "c", "title": "Cough"},
                {"const": "fever", "title": "fever"},
                {"const": "rash", "title": "rash"},
            ]
        },
        "uniqueItems": True,
        "minItems": 1,
        "maxItems": 2,
    }


@pytest.mark.parametrize(
    "item",
    [
        {"name": "start", "type": "date", "hint": {"min": "2025-01-01", "max": "2025-12-31"}},
        {"name": "start", "hint": {"format": "date", "min": "2025-01-01", "max": "2025-12-31"}},
        {"name": "start", "type": "date", "hint": {"format": "date", "min": "2025-01-01", "max": "2025-12-31"}},
    ],
)
def test_date_field_with_bounds(item):
    assert field(item) == {
        "title": "start",
        "type": "string",
        "format": "date",
        "formatMinimum": "2025-01-01",
        "formatMaximum": "2025-12-31",
    }


def test_date_time_field_with_bounds():
    hint = {"min": "2025-01-01T00:00:00Z", "max": "2025-01-02T00:00:00+01:00"}
    assert field({"name": "at", "type": "date-time", "hint": hint}) == {
        "title": "at",
        "type": "string",
        "format": "date-time",
        "formatMinimum": "2025-01-01T00:00:00Z",
        "formatMaximum": "2025-01-02T00:00:00+01:00",
    }


def test_textarea_flag_is_carried_as_a_widget_hint():
    assert field({"name": "note", "hint": {"textarea": True}}) == {
        "title": "note",
        "type": "string",
        "minLength": 1,
        "x-condor-widget": "textarea",
    }


def test_text_length_bounds():
    assert field({"name": "note", "hint": {"min": 3, "max": 200}}) == {
        "title": "note",
        "type": "string",
        "minLength": 3,
        "maxLength": 200,
    }


def test_required_text_with_only_a_maximum_still_needs_an_answer():
    assert field({"name": "note", "hint": {"max": 200}}) == {
        "title": "note",
        "type": "string",
        "minLength": 1,
        "maxLength": 200,
    }


def test_email_format():
    assert field({"name": "contact", "hint": {"format": "email"}}) == {
        "title": "contact",
        "type": "string",
        "minLength": 1,
        "format": "email",
    }


def test_number_with_bounds():
    assert field({"name": "dose", "type": "number", "hint": {"min": 0.5, "max": 10}}) == {
        "title": "dose",
        "type": "number",
        "minimum": 0.5,
        "maximum": 10,
    }


def test_integer_with_bounds_written_as_integers():
    prop = field({"name": "count", "type": "integer", "hint": {"min": 1.0, "max": 5}})
    assert prop == {"title": "count", "type": "integer", "minimum": 1, "maximum": 5}
    assert isinstance(prop["minimum"], int)


def test_boolean_field():
    assert field({"name": "fasting", "type": "boolean"}) == {"title": "fasting", "type": "boolean"}


# --- malformed hints degrade only their own field -----------------------------------

MALFORMED = {
    "hint is a string": {"hint": "radio"},
    "hint is a number": {"hint": 5},
    "hint is a list": {"hint": ["options"]},
    "hint is true": {"hint": True},
    "unknown hint key": {"hint": {"colour": "red"}},
    "type inside the hint": {"hint": {"type": "date"}},
    "unknown item key": {"label": "Dose"},
    "type not a string": {"type": 5},
    "type empty": {"type": ""},
    "unknown type": {"type": "datetime"},
    "object type": {"type": "object"},
    "options not a list": {"hint": {"options": "oral,iv"}},
    "options empty": {"hint": {"options": []}},
    "options not strings": {"hint": {"options": [1, 2]}},
    "option empty string": {"hint": {"options": ["oral", " "]}},
    "option with unknown key": {"hint": {"options": [{"value": "a", "colour": "red"}]}},
    "option without value": {"hint": {"options": [{"label": "A"}]}},
    "option label not a string": {"hint": {"options": [{"value": "a", "label": 5}]}},
    "duplicate option values": {"hint": {"options": ["oral", "oral"]}},
    "radio not a boolean": {"hint": {"options": ["a", "b"], "radio": "yes"}},
    "multiple not a boolean": {"hint": {"options": ["a", "b"], "multiple": 1}},
    "textarea not a boolean": {"hint": {"textarea": "true"}},
    "required not a boolean": {"hint": {"required": "no"}},
    "label not a string": {"hint": {"label": 5}},
    "label empty": {"hint": {"label": ""}},
    "description not a string": {"hint": {"description": ["x"]}},
    "format unknown": {"hint": {"format": "phone"}},
    "format uri is not checked so not offered": {"hint": {"format": "uri"}},
    "format not a string": {"hint": {"format": True}},
    "date bound not a date": {"type": "date", "hint": {"min": "yesterday"}},
    "date bound impossible": {"type": "date", "hint": {"min": "2025-02-30"}},
    "date bound is a number": {"type": "date", "hint": {"max": 20250101}},
    "date bound with time": {"type": "date", "hint": {"min": "2025-01-01T00:00:00Z"}},
    "date min after max": {"type": "date", "hint": {"min": "2025-12-31", "max": "2025-01-01"}},
    "date-time bound is a date": {"type": "date-time", "hint": {"min": "2025-01-01"}},
    "date-time bound without offset": {"type": "date-time", "hint": {"min": "2025-01-01T00:00:00"}},
    "date-time min after max": {
        "type": "date-time",
        "hint": {"min": "2025-01-01T01:00:00Z", "max": "2025-01-01T01:30:00+01:00"},
    },
    "number bound a string": {"type": "number", "hint": {"min": "1"}},
    "number bound a boolean": {"type": "number", "hint": {"min": True}},
    "number min after max": {"type": "number", "hint": {"min": 5, "max": 1}},
    "integer bound fractional": {"type": "integer", "hint": {"min": 1.5}},
    "text length negative": {"hint": {"min": -1}},
    "text length fractional": {"hint": {"max": 2.5}},
    "integer bound beyond 2**53 - 1": {"type": "number", "hint": {"max": 2**53}},
    "integer bound beyond float range": {"type": "integer", "hint": {"max": 10**400}},
    "float bound too big for an integer": {"type": "integer", "hint": {"max": 1e300}},
    "length beyond 2**53 - 1": {"hint": {"max": 2**60}},
    "more choices required than offered": {"type": "array", "hint": {"options": ["a"], "min": 2}},
    "choice count min after max": {"type": "array", "hint": {"options": ["a", "b"], "min": 2, "max": 1}},
    "radio on a multi select": {"hint": {"options": ["a", "b"], "multiple": True, "radio": True}},
    "radio without options": {"hint": {"radio": True}},
    "multiple without options": {"hint": {"multiple": True}},
    "array without options": {"type": "array"},
    "array but multiple false": {"type": "array", "hint": {"options": ["a"], "multiple": False}},
    "textarea with options": {"hint": {"options": ["a"], "textarea": True}},
    "textarea on a date": {"type": "date", "hint": {"textarea": True}},
    "textarea with email": {"hint": {"format": "email", "textarea": True}},
    "options on a number": {"type": "number", "hint": {"options": ["1", "2"]}},
    "options on a boolean": {"type": "boolean", "hint": {"options": ["yes"]}},
    "bounds on a boolean": {"type": "boolean", "hint": {"min": 0}},
    "bounds on a single select": {"hint": {"options": ["a", "b"], "min": 1}},
    "format on a number": {"type": "number", "hint": {"format": "date"}},
    "format with options": {"hint": {"options": ["a"], "format": "date"}},
    "date type with date-time format": {"type": "date", "hint": {"format": "date-time"}},
}


@pytest.mark.parametrize("broken", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_hint_degrades_only_that_field(broken):
    route = {"name": "route", "hint": {"options": ["oral", "iv"], "radio": True}}
    healthy = form(route)
    schema = form({"name": "dose", **broken}, route)
    assert schema["properties"]["dose"] == DEGRADED
    assert schema["properties"]["route"] == healthy["properties"]["route"]
    assert schema["required"] == ["dose", "route"]


def test_degraded_field_keeps_a_well_typed_label_description_and_required():
    hint = {"options": "oral,iv", "label": "Route", "description": "How it is given", "required": False}
    schema = form({"name": "route", "hint": hint})
    assert schema["properties"]["route"] == {"title": "Route", "type": "string", "description": "How it is given"}
    assert schema["required"] == []


# --- caller errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    "missing, words",
    [
        ([{"type": "string"}], "missing[0].name"),
        ([{"name": None}], "missing[0].name"),
        ([{"name": ""}], "missing[0].name"),
        ([{"name": "   "}], "missing[0].name"),
        ([{"name": 5}], "missing[0].name"),
        ([{"name": "a"}, "b"], "missing[1].name"),
        ([{"name": "a"}, {"name": "a"}], "duplicate"),
        ([], "non-empty list"),
        ({"name": "a"}, "non-empty list"),
        (None, "non-empty list"),
    ],
)
def test_bad_names_are_a_caller_error(missing, words):
    with pytest.raises(InvalidClarificationRequest, match=words.replace("[", r"\[").replace("]", r"\]")):
        clarification_resume_schema("Which route?", missing)


@pytest.mark.parametrize("message", ["", "  ", None, 5])
def test_a_missing_message_is_a_caller_error(message):
    with pytest.raises(InvalidClarificationRequest, match="message"):
        clarification_resume_schema(message, [{"name": "a"}])


def test_invalid_clarification_request_is_a_value_error():
    assert issubclass(InvalidClarificationRequest, ValueError)


# --- property: arbitrary hints never break the builder ------------------------------


@settings(max_examples=400, deadline=None)
@given(forms)
def test_arbitrary_hints_always_build_a_valid_mcp_form(missing):
    schema = clarification_resume_schema("Please answer", missing)
    assert_mcp_form(schema)
    assert list(schema["properties"]) == [item["name"] for item in missing]
    canonical_json(schema)  # stored and served: must stay portable JSON (no NaN, no huge ints)


@settings(max_examples=200, deadline=None)
@given(forms)
def test_each_field_is_built_independently_of_the_others(missing):
    schema = clarification_resume_schema("Please answer", missing)
    for item in missing:
        alone = clarification_resume_schema("Please answer", [item])
        assert schema["properties"][item["name"]] == alone["properties"][item["name"]]
