"""How the admin shows JSON, argument edits, durations and links: readable, escaped, never a dead end.

Every value reaches HTML through ``format_html`` / ``conditional_escape``: arguments
come from agents and may hold markup. ``args_line`` is the one place a line of
arguments text becomes HTML, so a helper that makes invisible characters visible can
wrap it and both the pretty view and the edit diff pick it up.
"""

import difflib
import json
from datetime import timedelta
from urllib.parse import urlencode

from django.contrib import admin
from django.urls import NoReverseMatch, reverse
from django.utils import formats, timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from core.display import reveal


def json_text(value) -> str:
    """JSON as JSON (not Python repr), indented, keys sorted, non-ASCII kept readable."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def args_line(text: str) -> SafeString:
    # Escaped, with every hidden or look-alike character shown as a marked ⟨U+…⟩.
    return reveal(text)


# The args summary of a list row: enough to tell one call from the next, never the whole payload.
SUMMARY_VALUES = 6
SUMMARY_VALUE_CHARS = 40
SUMMARY_CHARS = 100


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def leading_values(args, *, shown=()) -> str:
    """A call's leading scalar values in one short line: "500 mg · amoxicillin · oral · days 7".

    Text values first (they name the drug, the route, the test), then numbers and booleans
    with their key (a bare 7 says nothing); nested values and values the row shows already
    (`shown`: its patient ref) are left out. The database decides the order of the keys
    (PostgreSQL's jsonb keeps the shortest first), so within each group the line follows it.
    """
    if not isinstance(args, dict):
        return ""
    texts, others = [], []
    for key, value in args.items():
        if isinstance(value, str):
            if value and value not in shown:
                texts.append(value)
        elif value is not None and not isinstance(value, dict | list):
            others.append(f"{key} {json.dumps(value)}")
    values = [_clipped(value, SUMMARY_VALUE_CHARS) for value in texts + others]
    line = " · ".join(values[:SUMMARY_VALUES]) + (" · …" if len(values) > SUMMARY_VALUES else "")
    return _clipped(line, SUMMARY_CHARS)


def args_summary(args, *, shown=()) -> SafeString | str:
    """`leading_values` as HTML, each hidden, right-to-left or look-alike character marked (args_line)."""
    return args_line(line) if (line := leading_values(args, shown=shown)) else "—"


def pretty_json(value) -> SafeString:
    if value is None:
        return "—"
    lines = json_text(value).splitlines()
    return format_html(
        '<pre class="condor-json">{}</pre>', format_html_join("\n", "{}", ((args_line(line),) for line in lines))
    )


def json_field(attr: str, description: str):
    """An admin display method showing the JSON field `attr` pretty-printed."""

    @admin.display(description=description)
    def display(model_admin, obj):
        return pretty_json(getattr(obj, attr))

    return display


def args_diff(original, edited) -> SafeString:
    """The reviewer's edit as a line diff of the pretty JSON: removed lines red, added green."""
    if edited is None or edited == original:
        return "— (approved as requested)" if edited is not None else "—"
    rows = []
    for line in difflib.ndiff(json_text(original).splitlines(), json_text(edited).splitlines()):
        mark, text = line[:1], line[2:]
        if mark == "?":
            continue  # ndiff's intraline hints: noise next to whole-line marks
        css = {"-": "condor-diff-removed", "+": "condor-diff-added"}.get(mark, "condor-diff-same")
        rows.append((css, mark if mark in "+-" else " ", args_line(text)))
    return format_html(
        '<pre class="condor-json condor-diff">{}</pre>', format_html_join("\n", '<span class="{}">{} {}</span>', rows)
    )


def when(moment) -> str:
    """A time as the rest of the admin shows it: local, to the second."""
    return formats.date_format(timezone.localtime(moment), "DATETIME_FORMAT") if moment else "—"


def duration(delta: timedelta | None) -> str:
    """A duration to the second: '2 h 03 min 07 s', '4 min 12 s', '9 s'."""
    if delta is None:
        return "—"
    seconds = max(int(delta.total_seconds()), 0)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min {seconds:02d} s"
    if minutes:
        return f"{minutes} min {seconds:02d} s"
    return f"{seconds} s"


def change_link(obj, label=None) -> SafeString:
    """A link to `obj`'s admin page (the read-only view for compliance), or plain text."""
    if obj is None:
        return "—"
    opts = obj._meta
    text = reveal(label if label is not None else str(obj))  # str(obj) may carry a session's title
    try:
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
    except NoReverseMatch:
        return text
    return format_html('<a href="{}">{}</a>', url, text)


def changelist_link(app_model: str, label: str, **filters) -> SafeString:
    """A link to a changelist filtered by querystring, e.g. the audit rows of one approval."""
    url = reverse(f"admin:{app_model}_changelist")
    return format_html('<a href="{}?{}">{}</a>', url, urlencode(filters), label)


def audit_links(**ids) -> SafeString:
    """Links to the audit rows of an approval / run / session (the audit changelist, filtered)."""
    links = [
        changelist_link("audit_auditevent", f"audit rows of this {what.removesuffix('_id')}", **{what: str(value)})
        for what, value in ids.items()
        if value is not None
    ]
    return format_html_join(mark_safe("<br>"), "{}", ((link,) for link in links))


def person(user) -> str:
    """A user as plain text: compliance may not open the user admin, so it is never a link."""
    return user.get_username() if user is not None else "—"


def call_outcome(call) -> SafeString | str:
    """What became of a gated call, as a link to its ledger row: run (and how), not reported yet, or no row."""
    if call is None:
        return "— (no call recorded)"
    if call.reported_at is None:
        outcome = "no result reported"
    else:
        outcome = f"{'failed' if call.is_error else 'ran'}, result reported {when(call.reported_at)}"
    return format_html("{} ({})", change_link(call, call.tool_call_id), outcome)
