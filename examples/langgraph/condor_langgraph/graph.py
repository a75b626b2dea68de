"""Condor as the tool approval of a LangGraph agent.

    START ─▶ agent ─(tool calls)─▶ ask_condor ─(parked)─▶ review ─▶ run_tools ─▶ agent
               └─(none)─▶ END         └──(allowed / blocked)──────────▲

`ask_condor` asks Condor's gate about every call the agent proposed, once each:
it is a node of its own because LangGraph re-runs an interrupted node from its
start on resume, and a gate call is not something to repeat. A call Condor
parks goes to `review`, which suspends the graph with `interrupt(card)` — the
card the reviewer sees in Condor's inbox — and is resumed with
`Command(resume=decision)`, Condor's decision on it; Condor's resume checks that
decision against what the reviewer approved, so a resume value cannot approve
anything by itself. `run_tools` runs what was allowed with the approved args (a
reviewer's edit, after one), reports each result to Condor, and tells the agent,
as tool messages, what ran and what was refused and why.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from condor_client import Blocked, Denied, Expired, Parked, Run

# What the reviewer sees on the card, handed to whoever drives the graph.
CARD_FIELDS = ("id", "tool", "op", "args", "rule_id", "explanation", "reason_code", "hitl_tier", "expires_at")


@dataclass(frozen=True)
class Tool:
    """A tool the agent may call: its name is Condor's registry name; `op` the verb Condor's rules read."""

    function: Callable[..., Any]
    op: str | None = None


@dataclass
class Wiring:
    """What a graph invocation works with (LangGraph's runtime context: never checkpointed)."""

    run: Run  # the Condor run this conversation's calls gate in
    tools: dict[str, Tool]
    agent: Callable[[list[AnyMessage]], AIMessage]  # the model, or a script standing in for it


class AgentState(MessagesState):
    # Condor's answer for each call of the agent's last message, until run_tools settles them:
    # {"args": {...}} run it, {"refusal": "..."} do not, {"card": {...}} a reviewer must decide.
    verdicts: dict[str, dict]


def agent(state: AgentState, runtime: Runtime[Wiring]) -> dict:
    return {"messages": [runtime.context.agent(state["messages"])]}


def ask_condor(state: AgentState, runtime: Runtime[Wiring]) -> dict:
    run, tools, verdicts = runtime.context.run, runtime.context.tools, {}
    for call in state["messages"][-1].tool_calls:
        if call["name"] not in tools:
            verdicts[call["id"]] = {"refusal": f"There is no tool named {call['name']}."}
            continue
        try:
            asked = run.ask(call["name"], call["args"], op=tools[call["name"]].op, tool_call_id=call["id"])
        except Blocked as blocked:
            verdicts[call["id"]] = {"refusal": f"Condor blocked it ({blocked.rule_id}): {blocked.explanation}"}
        else:
            verdicts[call["id"]] = {"card": _card(asked)} if isinstance(asked, Parked) else {"args": dict(asked)}
    return {"verdicts": verdicts}


def review(state: AgentState, runtime: Runtime[Wiring]) -> dict:
    """Suspend on each parked call until its decision comes back, then resume Condor's run with it."""
    run, verdicts = runtime.context.run, dict(state["verdicts"])
    for call_id, verdict in state["verdicts"].items():
        if "card" not in verdict:
            continue
        decision = interrupt(verdict["card"])
        # Replayed when a later interrupt in this loop resumes the node: the resume is idempotent.
        try:
            verdicts[call_id] = {"args": dict(run.resume(verdict["card"]["id"], decision))}
        except Denied as denied:
            verdicts[call_id] = {"refusal": f"The reviewer rejected it: {denied.reason or 'no reason given'}"}
        except Expired:
            verdicts[call_id] = {"refusal": "Nobody decided in time: the approval expired."}
    return {"verdicts": verdicts}


def run_tools(state: AgentState, runtime: Runtime[Wiring]) -> dict:
    run, tools, replies = runtime.context.run, runtime.context.tools, []
    for call in state["messages"][-1].tool_calls:
        verdict = state["verdicts"][call["id"]]
        if "refusal" in verdict:
            replies.append(ToolMessage(verdict["refusal"], tool_call_id=call["id"], name=call["name"], status="error"))
            continue
        try:
            result = tools[call["name"]].function(**verdict["args"])
        except Exception as error:  # the agent hears a failed tool, as LangGraph's own ToolNode does
            failure = f"{type(error).__name__}: {error}"
            run.report(call["id"], {"error": failure}, is_error=True)
            replies.append(ToolMessage(failure, tool_call_id=call["id"], name=call["name"], status="error"))
            continue
        run.report(call["id"], result)
        replies.append(ToolMessage(json.dumps(result), tool_call_id=call["id"], name=call["name"]))
    return {"messages": replies, "verdicts": {}}


def after_agent(state: AgentState) -> str:
    return "ask_condor" if state["messages"][-1].tool_calls else END


def after_asking(state: AgentState) -> str:
    return "review" if any("card" in verdict for verdict in state["verdicts"].values()) else "run_tools"


def build_graph(checkpointer):
    """The agent's graph; a checkpointer is required, since `interrupt()` resumes from one."""
    graph = StateGraph(AgentState, context_schema=Wiring)
    graph.add_node(agent)
    graph.add_node(ask_condor)
    graph.add_node(review)
    graph.add_node(run_tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", after_agent, ["ask_condor", END])
    graph.add_conditional_edges("ask_condor", after_asking, ["review", "run_tools"])
    graph.add_edge("review", "run_tools")
    graph.add_edge("run_tools", "agent")
    return graph.compile(checkpointer=checkpointer)


def _card(parked: Parked) -> dict:
    return {name: parked.approval.get(name) for name in CARD_FIELDS}
