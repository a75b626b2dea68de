"""The policy simulator: the real gate's verdict for a tool and a context, and per-tool truth tables.

Nothing here decides. Every verdict comes from ``registry.policy.evaluate`` with the
descriptor the gate itself would load (the ToolDescriptor row, laid over the static
registry by the engine), so the simulator cannot drift from what agents get.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import product
from typing import Any

from registry.models import ToolDescriptor
from registry.policy import (
    STATIC_REGISTRY,
    AgeBand,
    Autonomy,
    Context,
    Decision,
    ToolCall,
    ToolSpec,
    Verdict,
    evaluate,
    is_destructive,
)

# The matrix's axes, in the order the table lists them: 3 x 2 x 2 x 4 = 48 contexts.
AUTONOMIES = tuple(a.value for a in Autonomy)
TAINTS = (False, True)
CONSENTS = (True, False)
AGE_BANDS = tuple(b.value for b in AgeBand)

# How much a decision lets through: a cell whose rank rises after an edit loosened policy.
PERMISSIVENESS = {Decision.BLOCKED: 0, Decision.REQUIRE_APPROVAL: 1, Decision.ALLOW: 2}


def contexts() -> list[Context]:
    return [
        Context(autonomy=a, tainted=t, consent=c, age_band=b)
        for a, t, c, b in product(AUTONOMIES, TAINTS, CONSENTS, AGE_BANDS)
    ]


def tool_names() -> list[str]:
    """Every tool the gate knows: the built-in catalog and the registry rows."""
    return sorted(set(STATIC_REGISTRY) | set(ToolDescriptor.objects.values_list("name", flat=True)))


def registered_spec(name: str) -> ToolSpec | None:
    """The registry row as the gate reads it (approvals.gate loads the same row)."""
    row = ToolDescriptor.objects.filter(name=name).first()
    return row.to_spec() if row is not None else None


def simulate(
    tool: str,
    ctx: Context,
    *,
    op: str = "",
    args: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    registered: ToolSpec | None = None,
) -> Verdict:
    """The engine's verdict for one call; `registered` is the row (None = no row)."""
    return evaluate(ToolCall(tool=tool, op=op, args=args or {}, metadata=metadata or {}), ctx, registered)


def table_ops(op: str) -> tuple[str, ...]:
    """The chosen op plus one of the other kind, so every table shows destructive and not."""
    chosen = op or "update"
    return (chosen, "update") if is_destructive(chosen) else (chosen, "delete")


@dataclass(frozen=True)
class TruthTable:
    tool: str
    ops: tuple[tuple[str, bool], ...]  # (op, destructive)
    rows: tuple[tuple[Context, tuple[Verdict, ...]], ...]


def truth_table(
    tool: str,
    registered: ToolSpec | None,
    *,
    op: str = "",
    args: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> TruthTable:
    """The verdict for every context of the matrix, for `op` and an op of the other kind."""
    ops = table_ops(op)
    rows = tuple(
        (ctx, tuple(simulate(tool, ctx, op=o, args=args, metadata=metadata, registered=registered) for o in ops))
        for ctx in contexts()
    )
    return TruthTable(tool, tuple((o, is_destructive(o)) for o in ops), rows)


@dataclass(frozen=True)
class Cell:
    before: Verdict
    after: Verdict

    @property
    def changed(self) -> bool:
        return (self.before.decision, self.before.rule_id) != (self.after.decision, self.after.rule_id)

    @property
    def loosened(self) -> bool:
        return PERMISSIVENESS[self.after.decision] > PERMISSIVENESS[self.before.decision]


@dataclass(frozen=True)
class TableDiff:
    tool: str
    ops: tuple[tuple[str, bool], ...]
    rows: tuple[tuple[Context, tuple[Cell, ...]], ...]

    @property
    def changed_cells(self) -> int:
        return sum(cell.changed for _, cells in self.rows for cell in cells)

    @property
    def loosened_cells(self) -> int:
        return sum(cell.loosened for _, cells in self.rows for cell in cells)


def impact(tool: str, before: ToolSpec | None, after: ToolSpec | None, *, op: str = "") -> TableDiff:
    """The truth table before and after a registry edit, cell by cell."""
    old, new = truth_table(tool, before, op=op), truth_table(tool, after, op=op)
    rows = tuple(
        (ctx, tuple(Cell(b, a) for b, a in zip(old_verdicts, new_verdicts, strict=True)))
        for (ctx, old_verdicts), (_, new_verdicts) in zip(old.rows, new.rows, strict=True)
    )
    return TableDiff(tool, old.ops, rows)
