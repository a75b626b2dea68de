"""Driving the graph to the end: every interrupt waits for Condor's decision and resumes with it.

Here one process waits on the run's stream (`Run.decision`). A web app would
rather return the interrupt's card to its front end, end the request, and resume
the thread (same `thread_id`, same checkpointer) when the decision arrives.
"""

from __future__ import annotations

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.types import Command

from condor_langgraph.graph import Wiring


def converse(
    graph, wiring: Wiring, request: str, *, thread_id: str, on_card=None, timeout: float | None = None
) -> list[AnyMessage]:
    """Run the agent on `request` until it answers; `on_card(card)` sees each card before the wait."""
    config = {"configurable": {"thread_id": thread_id}}
    state = graph.invoke({"messages": [HumanMessage(request)]}, config, context=wiring)
    while state.get("__interrupt__"):
        card = state["__interrupt__"][0].value
        if on_card is not None:
            on_card(card)
        decision = wiring.run.decision(card["id"], timeout=timeout)
        state = graph.invoke(Command(resume=decision), config, context=wiring)
    return state["messages"]
