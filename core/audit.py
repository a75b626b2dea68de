"""The audit log's front door: an app records a change here without knowing who keeps the log.

approvals keeps it (audit/trail.py: chained, append-only rows) and installs
its writer from ApprovalsConfig.ready(), so sessions_app can audit its changes
while dependencies keep running one way, condor ← sessions_app ← runs ←
approvals. The writer's contract holds: call `record` inside the change's
transaction, after the change's own row locks; a change whose row cannot be
written does not happen.
"""

from django.core.exceptions import ImproperlyConfigured

_writer = None


def install(writer) -> None:
    global _writer
    _writer = writer


def record(kind: str, **fields):
    """Append an audit row of `kind` (an AuditKind value) with audit/trail.py's `record` fields."""
    if _writer is None:
        raise ImproperlyConfigured("No audit writer is installed: approvals installs it in its AppConfig.ready().")
    return _writer(kind, **fields)
