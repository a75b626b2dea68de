"""A ward round played by a script instead of a model, with two tools that only pretend.

Run it against `make run` (which writes the demo agent's key) and decide in the inbox:

    cd examples/langgraph && ../../.venv/bin/python -m condor_langgraph.ward
"""

from __future__ import annotations

import argparse
import itertools
import uuid
from pathlib import Path

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from condor_client import Condor
from condor_langgraph.driver import converse
from condor_langgraph.graph import Tool, Wiring, build_graph

PATIENT = "MRN-7"
# What the scripted agent proposes, one message per turn; then it answers with what it heard.
ROUND = [
    [("record_vitals", {"patient_ref": PATIENT, "heart_rate": 92, "spo2": 95})],
    [("prescribe_medication", {"patient_ref": PATIENT, "drug": "amoxicillin", "dose_mg": 1000})],
    [("prescribe_medication", {"patient_ref": PATIENT, "drug": "co-amoxiclav", "dose_mg": 625})],
]


def scripted(turns=ROUND):
    """A stand-in for the model: its n-th turn proposes `turns[n]`; after the last, it sums up what it heard."""

    def agent(messages: list[AnyMessage]) -> AIMessage:
        turn = sum(isinstance(message, AIMessage) for message in messages)
        if turn < len(turns):
            return AIMessage(
                "",
                tool_calls=[
                    {"name": name, "args": args, "id": f"call-{uuid.uuid4().hex[:12]}"} for name, args in turns[turn]
                ],
            )
        heard = [f"{message.name}: {message.content}" for message in messages if isinstance(message, ToolMessage)]
        return AIMessage("Done. " + "; ".join(heard))

    return agent


def ward_tools(calls: list | None = None) -> dict[str, Tool]:
    """The tools, pretending; each call's args are appended to `calls` (what actually ran)."""
    numbers = itertools.count(1)

    def ran(name, result):
        def tool(**args):
            if calls is not None:
                calls.append((name, args))
            return result(args)

        return tool

    return {
        "record_vitals": Tool(ran("record_vitals", lambda args: {"saved": True}), op="create"),
        "prescribe_medication": Tool(
            ran(
                "prescribe_medication",
                lambda args: {
                    "prescription_id": f"rx-{next(numbers)}",
                    "drug": args["drug"],
                    "dose_mg": args["dose_mg"],
                },
            ),
            op="create",
        ),
    }


def waiting(card: dict) -> None:
    print(f"waiting for a reviewer: {card['tool']} {card['args']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="A scripted ward round through LangGraph, gated by Condor.")
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--key-file", default=str(Path(__file__).resolve().parents[3] / "var/demo-agent.key"))
    options = parser.parse_args()
    graph = build_graph(InMemorySaver())
    with Condor(options.url, Path(options.key_file).read_text().strip()) as condor:
        # An adult's session, the clinician at the keyboard: the vitals (a low-tier write) are allowed
        # at once, the prescriptions (high tier) wait for a reviewer.
        session = condor.session(
            title="LangGraph ward round", patient_ref=PATIENT, age_band="adult", autonomy="autonomous"
        )
        with session.run(engine="langgraph") as run:
            messages = converse(
                graph,
                Wiring(run, ward_tools(), scripted()),
                "Morning round for bed 7.",
                thread_id=run.id,
                on_card=waiting,
            )
    print(messages[-1].content)


if __name__ == "__main__":
    main()
