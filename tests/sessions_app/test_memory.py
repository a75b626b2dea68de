"""Working memory: one parser of run-summary blocks; malformed blocks are kept as text (SPEC section 7)."""

import pytest

from sessions_app.memory import MAX_ITEMS, parse_summary, rolling_memory
from tests.helpers.runs import close, make_session, open_run

WELL_FORMED = """## Facts
- Potassium 5.9 mmol/L
- On ramipril
## Open questions
- Repeat K+ at 18:00?
"""


@pytest.mark.parametrize(
    "text, sections, notes",
    [
        (
            WELL_FORMED,
            {"facts": ["Potassium 5.9 mmol/L", "On ramipril"], "open_questions": ["Repeat K+ at 18:00?"]},
            [],
        ),
        ("Plain prose, no blocks.", {}, ["Plain prose, no blocks."]),
        ("Intro line\n## plan\n* stop ramipril\n", {"plan": ["stop ramipril"]}, ["Intro line"]),
        ("## Vitals\n- BP 150/90\n", {}, ["## Vitals\n- BP 150/90"]),  # unknown section
        ("## facts\n", {}, ["## facts"]),  # no items
        ("## facts\n- a\nnot an item\n", {}, ["## facts\n- a\nnot an item"]),  # a stray line
        ("### Decisions:\n- hold ramipril\n", {"decisions": ["hold ramipril"]}, []),  # level and colon
        ("## open-questions\n- ok?\n", {"open_questions": ["ok?"]}, []),
        ("", {}, []),
        ("\n\n##\n", {}, ["##"]),
    ],
)
def test_the_parser_vectors(text, sections, notes):
    parsed = parse_summary(text)

    assert (parsed.sections, parsed.notes) == (sections, notes)


def test_facts_accumulate_and_plan_is_the_latest():
    memory = rolling_memory(
        [
            ("r1", "## facts\n- a\n- b\n## plan\n- old plan"),
            ("r2", "## facts\n- a\n- c\n## plan\n- new plan"),
            ("r3", "## facts\n- d"),
        ]
    )

    assert memory["facts"] == ["b", "a", "c", "d"]
    assert memory["plan"] == ["new plan"]


def test_accumulated_items_are_capped_newest_kept():
    memory = rolling_memory([("r1", "## facts\n" + "\n".join(f"- f{n}" for n in range(MAX_ITEMS + 5)))])

    assert memory["facts"][0] == "f5" and len(memory["facts"]) == MAX_ITEMS


def test_the_endpoint_reads_the_summaries_runs_closed_with(api, other_api):
    session = make_session(api)
    close(api, open_run(api, session["id"])["id"], "completed", summary=WELL_FORMED)
    second = open_run(api, session["id"])["id"]
    assert close(api, second, "completed", summary="## facts\n- Creatinine 140\nhalf a block").status_code == 200

    body = api.get(f"/api/v1/sessions/{session['id']}/memory/").json()

    assert body["facts"] == ["Potassium 5.9 mmol/L", "On ramipril"]
    assert body["open_questions"] == ["Repeat K+ at 18:00?"]
    assert body["notes"] == [{"run": second, "text": "## facts\n- Creatinine 140\nhalf a block"}]
    assert other_api.get(f"/api/v1/sessions/{session['id']}/memory/").status_code == 404
