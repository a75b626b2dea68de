"""approvals.resume_schemas: approval and clarification resume schemas (SPEC section 4)."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from approvals.hashing import canonical_json
from approvals.resume_schemas import (
    InvalidClarificationRequest,
    approval_resume_schema,
    clarification_resume_schema,
    validate_resume_data,
)

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
        "title": "Dose (mg)", "type": "string", "minLength": 1, "description": "Per administration",
    }


def test_optional_field_is_left_out_of_required():
    schema = form({"name": "note", "hint": {"required": False}}, {"name": "dose"})
    assert schema["required"] == ["dose"]
    assert schema["properties"]["note"] == {"title": "note", "type": "string"}


def test_null_hint_values_mean_absent():
    assert field({"name": "dose", "type": None, "hint": {"label": None, "options": None}}) == DEGRADED


def test_string_options_make_a_single_select():
    assert field({"name": "route", "hint": {"options": ["oral", "iv"]}}) == {
        "title": "route", "type": "string", "enum": ["oral", "iv"],
    }


def test_radio_flag_is_carried_as_a_widget_hint():
    assert field({"name": "route", "hint": {"options": ["oral", "iv"], "radio": True}}) == {
        "title": "route", "type": "string", "enum": ["oral", "iv"], "x-condor-widget": "radio",
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
        "items": {"anyOf": [{"const": "c", "title": "Cough"}, {"const": "fever", "title": "fever"},
                            {"const": "rash", "title": "rash"}]},
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
        "title": "start", "type": "string", "format": "date",
        "formatMinimum": "2025-01-01", "formatMaximum": "2025-12-31",
    }


def test_date_time_field_with_bounds():
    hint = {"min": "2025-01-01T00:00:00Z", "max": "2025-01-02T00:00:00+01:00"}
    assert field({"name": "at", "type": "date-time", "hint": hint}) == {
        "title": "at", "type": "string", "format": "date-time",
        "formatMinimum": "2025-01-01T00:00:00Z", "formatMaximum": "2025-01-02T00:00:00+01:00",
    }


def test_textarea_flag_is_carried_as_a_widget_hint():
    assert field({"name": "note", "hint": {"textarea": True}}) == {
        "title": "note", "type": "string", "minLength": 1, "x-condor-widget": "textarea",
    }


def test_text_length_bounds():
    assert field({"name": "note", "hint": {"min": 3, "max": 200}}) == {
        "title": "note", "type": "string", "minLength": 3, "maxLength": 200,
    }


def test_required_text_with_only_a_maximum_still_needs_an_answer():
    assert field({"name": "note", "hint": {"max": 200}}) == {
        "title": "note", "type": "string", "minLength": 1, "maxLength": 200,
    }


def test_email_format():
    assert field({"name": "contact", "hint": {"format": "email"}}) == {
        "title": "contact", "type": "string", "minLength": 1, "format": "email",
    }


def test_number_with_bounds():
    assert field({"name": "dose", "type": "number", "hint": {"min": 0.5, "max": 10}}) == {
        "title": "dose", "type": "number", "minimum": 0.5, "maximum": 10,
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
    "date-time min after max": {"type": "date-time",
                                "hint": {"min": "2025-01-01T01:00:00Z", "max": "2025-01-01T01:30:00+01:00"}},
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


# --- validating a reviewer's values -------------------------------------------------

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
    "route": "iv", "site": "l", "symptoms": ["cough"], "start": "2025-06-01",
    "at": "2025-01-15T09:30:00.123456789+02:00", "dose": 2.5, "count": 3, "fasting": False,
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
    assert validate_resume_data(clarification_resume_schema("Details?", FULL_FORM), answer) == [
        f"{name}: is required"
    ]


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


# --- property: arbitrary hints never break the builder ------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# Near-valid values per hint key, so the rich field kinds (selects, bounds, widgets)
# are reached often, with a sprinkling of wrong types and arbitrary JSON.
option = st.one_of(
    st.sampled_from(["a", "b", "c", "d"]),
    st.fixed_dictionaries({"value": st.sampled_from(["a", "b", "e"])},
                          optional={"label": st.sampled_from(["A", "B", "C", ""])}),
)
option_lists = st.one_of(
    st.lists(option, min_size=1, max_size=4, unique_by=lambda o: o["value"] if isinstance(o, dict) else o),
    st.lists(option, max_size=4),  # may repeat a value or be empty
)
bounds = st.one_of(
    st.integers(-2, 6),
    st.floats(-10, 10),
    st.sampled_from(["2025-01-01", "2025-12-31", "2025-02-30", "2025-01-01T00:00:00Z",
                     "2025-06-01T12:00:00+02:00", "2025-06-01T12:00:00", "soon"]),
)
flags = st.integers(0, 19).flatmap(lambda n: st.sampled_from(["yes", 1]) if n == 0 else st.booleans())


def near(good):
    # Mostly well-shaped, one time in twenty arbitrary JSON.
    return st.integers(0, 19).flatmap(lambda n: json_values if n == 0 else good)


def hint_of(**keys):
    common = {"label": near(st.sampled_from(["Dose", "Route", "Site", ""])),
              "description": near(st.just("Why we ask")), "required": near(flags)}
    return st.fixed_dictionaries({}, optional={**common, **{k: near(v) for k, v in keys.items()}})


structured_hints = st.one_of(
    hint_of(options=option_lists, radio=flags),
    hint_of(options=option_lists, multiple=flags, min=st.integers(0, 4), max=st.integers(0, 4)),
    hint_of(format=st.sampled_from(["date", "date-time"]), min=bounds, max=bounds),
    hint_of(textarea=flags, format=st.just("email"), min=st.integers(0, 9), max=st.integers(0, 99)),
    hint_of(min=bounds, max=bounds),
    hint_of(options=option_lists, radio=flags, multiple=flags, format=st.sampled_from(["date", "uri", "phone"]),
            textarea=flags, min=bounds, max=bounds),
)
hint_keys = st.sampled_from(["label", "description", "required", "options", "radio", "multiple",
                             "format", "min", "max", "textarea", "type", "colour"])
hints = st.integers(0, 7).flatmap(
    lambda n: json_values if n == 0 else st.dictionaries(hint_keys, json_values, max_size=5) if n == 1
    else structured_hints
)
types = near(st.sampled_from(["string", "number", "integer", "boolean", "date", "date-time", "array", "object"]))
names = st.text(min_size=1, max_size=10).filter(str.strip)
items = st.one_of(
    st.fixed_dictionaries({"name": names}, optional={"type": types, "hint": hints}),
    # type and hint drawn to fit each other, so bounded dates, numbers and multi selects are common
    st.fixed_dictionaries({"name": names, "type": st.sampled_from(["date", "date-time"]),
                           "hint": hint_of(min=bounds, max=bounds)}),
    st.fixed_dictionaries({"name": names, "type": st.sampled_from(["number", "integer"]),
                           "hint": hint_of(min=bounds, max=bounds)}),
    st.fixed_dictionaries({"name": names, "type": st.just("array"),
                           "hint": hint_of(options=option_lists, min=st.integers(0, 4), max=st.integers(0, 4))}),
)
forms = st.lists(items, min_size=1, max_size=5, unique_by=lambda item: item["name"])


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


@settings(max_examples=200, deadline=None)
@given(forms, json_values)
def test_validation_of_arbitrary_answers_never_raises(missing, answer):
    schema = clarification_resume_schema("Please answer", missing)
    assert all(isinstance(message, str) for message in validate_resume_data(schema, answer))
