"""The audit log's search: exact on the log's indexed columns, and through an approval's arguments.

Audit rows keep no arguments (only their hash), so a word such as "amoxicillin" is looked
up in the approvals first: one query over the approvals table (a scan of its arguments'
text, as the approvals page's own search does; that table holds only the calls that
waited for a person, a fraction of the log). The log then finds those approvals' rows by
its approval_id index, beside the exact matches on its other indexed columns: no query
here reads the log row by row.

Every word must match, either the row itself (patient ref, actor, tool, rule id exactly;
a row id; a run, approval or session id) or, for a row of an approval, that approval
(its arguments as the agent asked, its tool, patient ref, rule id or ids).
"""

import uuid

from django.db.models import Q

from approvals.models import Approval
from core.admin_search import as_uuid, json_texts
from core.query_numbers import whole_number

# Past this many approvals the list of ids would stop being cheap to send and to look up:
# the rows of the newest ones are listed, and the page says so.
APPROVALS_AT_MOST = 1000


def _in_row(word: str) -> Q:
    if (found := as_uuid(word)) is not None:
        return Q(run_id=found) | Q(approval_id=found) | Q(session_id=found)
    match = Q(patient_ref=word) | Q(actor=word) | Q(tool=word) | Q(rule_id=word)
    if (row_id := whole_number(word)) is not None:
        match |= Q(pk=row_id)
    return match


def _in_approval(word: str) -> Q:
    if (found := as_uuid(word)) is not None:
        return Q(pk=found) | Q(run_id=found) | Q(session_id=found)
    return Q(args_text__icontains=word) | Q(tool=word) | Q(session__patient_ref=word) | Q(rule_id=word)


def approvals_matching(words: list[str]) -> tuple[list[uuid.UUID], bool]:
    """The newest APPROVALS_AT_MOST approvals every word matches, and whether more did."""
    ids = list(
        Approval.objects.alias(**json_texts("args"))
        .filter(Q.create([_in_approval(word) for word in words]))
        .order_by("-requested_at")
        .values_list("pk", flat=True)[: APPROVALS_AT_MOST + 1]
    )
    return ids[:APPROVALS_AT_MOST], len(ids) > APPROVALS_AT_MOST


def search(queryset, words: list[str], *, through_approvals: bool):
    """`queryset` narrowed to the rows every word matches; and whether the approvals it went through were cut
    at APPROVALS_AT_MOST. `through_approvals`: whether the reader may read approvals (their arguments)."""
    in_row = Q.create([_in_row(word) for word in words])
    # An approval's rows carry its own, its run's and its session's ids: ids alone need no approval.
    if not through_approvals or all(as_uuid(word) is not None for word in words):
        return queryset.filter(in_row), False
    ids, cut = approvals_matching(words)
    return queryset.filter(in_row | Q(approval_id__in=ids) if ids else in_row), cut
