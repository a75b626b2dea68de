"""Condor's policy gate: pure functions over plain data (SPEC section 2).

No Django and no I/O anywhere in this package, so it is importable and testable without
settings, and the API, the admin simulator and the tests share one implementation.
"""

from .catalog import STATIC_REGISTRY
from .egress import check_egress
from .engine import (
    DESTRUCTIVE_OPS,
    effective_spec,
    evaluate,
    is_destructive,
    is_missing_op,
    resolve_policy_class,
)
from .types import (
    RULE_IDS,
    RULES,
    AgeBand,
    Autonomy,
    Context,
    Decision,
    PolicyClass,
    Tier,
    ToolCall,
    ToolSpec,
    Trust,
    Verdict,
)

__all__ = [
    "DESTRUCTIVE_OPS",
    "RULES",
    "RULE_IDS",
    "STATIC_REGISTRY",
    "AgeBand",
    "Autonomy",
    "Context",
    "Decision",
    "PolicyClass",
    "Tier",
    "ToolCall",
    "ToolSpec",
    "Trust",
    "Verdict",
    "check_egress",
    "effective_spec",
    "evaluate",
    "is_destructive",
    "is_missing_op",
    "resolve_policy_class",
]
