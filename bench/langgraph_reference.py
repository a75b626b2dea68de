"""The HITL cycle's reference: LangGraph's interrupt() and Command(resume=...), checkpointed by PostgresSaver."""

from __future__ import annotations

import statistics
import time
from typing import TypedDict

from bench.condor_http import PRESCRIPTION


class State(TypedDict):
    tool: str
    args: dict
    decision: dict | None


def cycle_ms(url: str, cycles: int) -> float:
    """The median of `cycles` cycles in the database at `url`: a node interrupts, the caller resumes it.

    In this process, no HTTP: LangGraph keeps the checkpoint, the caller is the reviewer.
    """
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    def gate(state: State) -> dict:
        return {"decision": interrupt({"tool": state["tool"], "args": state["args"]})}

    builder = StateGraph(State)
    builder.add_node("gate", gate)
    builder.add_edge(START, "gate")
    builder.add_edge("gate", END)
    totals = []
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        graph = builder.compile(checkpointer=saver)
        for i in range(cycles):
            config = {"configurable": {"thread_id": f"bench-{time.time_ns()}-{i}"}}
            started = time.perf_counter()
            parked = graph.invoke({"tool": "prescribe_medication", "args": PRESCRIPTION, "decision": None}, config)
            assert "__interrupt__" in parked, parked
            done = graph.invoke(Command(resume={"approved": True}), config)
            assert done["decision"] == {"approved": True}, done
            totals.append(time.perf_counter() - started)
    return statistics.median(totals) * 1000
