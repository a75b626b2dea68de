"""Condor as the tool approval of a LangGraph agent: see ../README.md."""

from condor_langgraph.driver import converse
from condor_langgraph.graph import Tool, Wiring, build_graph

__all__ = ["Tool", "Wiring", "build_graph", "converse"]
