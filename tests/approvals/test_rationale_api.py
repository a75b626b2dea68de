"""`metadata.rationale` on POST runs/{id}/tool-calls/ (SPEC section 11): the agent's reason for a
call, in its own words, shown on the card. A string of at most 2000 characters; anything else is
refused (400 invalid_payload) before the gate, with nothing stored."""

import pytest
from rest_framework.test import APIClient

from approvals.card_context import RATIONALE_MAX_CHARS
from approvals.models import ToolCall
from tests.helpers.approval_loop import assert_nothing_gated, gate, suspend
from tests.helpers.runs import open_executing_run

URL = "/api/v1/inbox/cards/"


def test_a_rationale_of_the_full_length_reaches_the_card(api, reviewer_http):
    rationale = "Creatinine doubled since Monday; " + "x" * (RATIONALE_MAX_CHARS - 33)
    assert len(rationale) == RATIONALE_MAX_CHARS
    approval = suspend(api, open_executing_run(api), metadata={"rationale": rationale})

    [card] = reviewer_http.get(URL).json()["cards"]

    assert (card["id"], card["rationale"]) == (approval["id"], rationale)


def test_a_rationale_past_the_limit_is_refused_and_nothing_is_gated(api):
    response = gate(api, open_executing_run(api), metadata={"rationale": "x" * (RATIONALE_MAX_CHARS + 1)})

    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert "rationale" in response.json()["detail"]
    assert_nothing_gated()


@pytest.mark.parametrize("rationale", [{"why": "nested"}, ["a", "b"], 42, True])
def test_a_rationale_that_is_not_text_is_refused(api, rationale):
    response = gate(api, open_executing_run(api), metadata={"rationale": rationale})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert_nothing_gated()


def test_other_metadata_keys_are_kept_as_sent(api):
    metadata = {"rationale": None, "model": "gpt-x", "trace": [1]}
    suspend(api, open_executing_run(api), metadata=metadata)
    assert ToolCall.objects.get().metadata == metadata


def test_the_schema_documents_the_rationale_and_its_limit(db):
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    body = schema["paths"]["/api/v1/runs/{run_id}/tool-calls/"]["post"]["requestBody"]["content"]["application/json"]
    request = schema["components"]["schemas"][body["schema"]["$ref"].rsplit("/", 1)[1]]
    rationale = request["properties"]["metadata"]["properties"]["rationale"]
    assert (rationale["type"], rationale["maxLength"]) == ("string", RATIONALE_MAX_CHARS)
    assert "Why the agent wants this" in rationale["description"]
