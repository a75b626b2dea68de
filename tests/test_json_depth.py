"""JSON nested deeper than MAX_JSON_DEPTH (32, the body counting as the first level) is 400
invalid_payload at parse time, for args, metadata, values, outputs and cards alike. A list nested
some hundreds deep in metadata was a 500 (RecursionError in the payload hash); dicts nested
~926 deep were stored and then broke the admin's pages of that approval and run."""

import json

import pytest

from core.parsers import MAX_JSON_DEPTH, StrictJSONError, loads_strict
from tests.helpers.approval_loop import assert_nothing_gated, gate, park, report
from tests.helpers.http import post_json, raw_post
from tests.helpers.runs import open_executing_run


def nested_list(levels: int) -> list:
    """`levels` arrays inside one another: [[[...]]]."""
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def nested_dict(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def assert_too_deep(response):
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_payload"
    assert f"deeper than {MAX_JSON_DEPTH}" in response.json()["detail"]


def test_the_documented_limit_is_32():
    assert MAX_JSON_DEPTH == 32


def test_a_body_at_the_limit_parses_and_one_level_more_is_refused():
    at_limit = {"args": nested_list(MAX_JSON_DEPTH - 1)}
    assert loads_strict(json.dumps(at_limit)) == at_limit
    with pytest.raises(StrictJSONError, match="deeper than 32"):
        loads_strict(json.dumps({"args": nested_list(MAX_JSON_DEPTH)}))


def test_brackets_inside_strings_are_not_nesting():
    body = {"note": "[" * 500 + "{" * 500}
    assert loads_strict(json.dumps(body)) == body


@pytest.mark.parametrize(
    "field, value",
    [
        ("metadata", {"trace": nested_list(400)}),  # the table's RecursionError
        ("metadata", nested_dict(926)),  # stored, then the admin pages broke
        ("args", {"query": nested_list(40)}),
    ],
    ids=["metadata-list-400", "metadata-dict-926", "args-list-40"],
)
def test_a_gate_call_nested_too_deep_is_refused_and_nothing_gated(api, catalog, field, value):
    run_id = open_executing_run(api)
    body = {"tool_call_id": "c1", "step_id": "s1", "tool": "search_patients", "args": {}, field: value}
    assert_too_deep(raw_post(api, f"/api/v1/runs/{run_id}/tool-calls/", json.dumps(body)))
    assert_nothing_gated()


def test_a_gate_call_within_the_limit_is_gated(api, catalog):
    run_id = open_executing_run(api)
    response = gate(api, run_id, tool="search_patients", op="", args={"query": nested_list(MAX_JSON_DEPTH - 2)})
    assert response.status_code == 200, response.content


def test_a_result_with_outputs_or_cards_nested_too_deep_is_refused(api, catalog):
    run_id = open_executing_run(api)
    gate(api, run_id, tool="search_patients", op="", args={})
    assert_too_deep(report(api, run_id, "call-1", {"rows": nested_list(40)}))
    assert_too_deep(
        report(api, run_id, "call-1", {"ok": True}, cards=[{"kind": "k", "title": "t", "data": nested_dict(40)}])
    )


def test_a_decisions_edited_args_nested_too_deep_are_refused(api, catalog, reviewer_http):
    run_id = open_executing_run(api)
    approval = park(api, run_id)
    response = post_json(
        reviewer_http,
        f"/api/v1/approvals/{approval['id']}/decision/",
        {"approved": True, "edited_args": nested_dict(40)},
    )
    assert_too_deep(response)
