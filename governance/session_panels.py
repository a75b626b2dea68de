"""Read-only panels of a session's admin page: its history, pinned cards, linked entities and runs.

Each panel is bounded (the newest rows only) so a long conversation cannot make
the page slow; every value is escaped (format_html), text revealed (core/display.py), nothing is editable.
"""

from django.contrib import admin
from django.utils.html import format_html, format_html_join

from core import admin_display as show
from core.revealed_admin import revealed_value
from runs.session_history import build_history

PANEL_ROWS = 50


def _table(headers, rows) -> str:
    if not rows:
        return "—"
    return format_html(
        '<table class="condor-panel"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>',
        format_html_join("", "<th>{}</th>", ((h,) for h in headers)),
        format_html_join(
            "",
            "<tr>{}</tr>",
            ((format_html_join("", "<td>{}</td>", ((revealed_value(c),) for c in row)),) for row in rows),
        ),
    )


class SessionPanels:
    """Mixed into SessionAdmin: the display methods of the panels."""

    @admin.display(description=f"History (newest {PANEL_ROWS} messages, gated calls folded in)")
    def history_panel(self, session):
        messages = build_history(session)[-PANEL_ROWS:]
        return _table(("id", "role", "parts"), [(m["id"], m["role"], show.pretty_json(m["parts"])) for m in messages])

    @admin.display(description="Pinned cards")
    def pinned_panel(self, session):
        cards = session.pinned_cards.order_by("order")[:PANEL_ROWS]
        return _table(
            ("order", "kind", "title", "source card", "data"),
            [(c.order, c.kind, c.title, c.source_card or "—", show.pretty_json(c.data)) for c in cards],
        )

    @admin.display(description="Linked entities (latest per kind)")
    def entities_panel(self, session):
        return _table(
            ("kind", "ref", "label", "run", "tool call", "linked"),
            [
                (e.kind, e.ref, e.label or "—", str(e.run_id), e.tool_call_id, show.when(e.linked_at))
                for e in session.entities.all()
            ],
        )

    @admin.display(description=f"Runs (newest {PANEL_ROWS})")
    def runs_panel(self, session):
        runs = session.runs.order_by("-created_at")[:PANEL_ROWS]
        return _table(
            ("run", "state", "terminal reason", "flow", "opened", "closed"),
            [
                (
                    show.change_link(r, str(r.pk)),
                    r.state,
                    r.terminal_reason or "—",
                    r.flow_key or "—",
                    show.when(r.created_at),
                    show.when(r.closed_at),
                )
                for r in runs
            ],
        )
