"""The production database arrangement: the application is not the owner of its tables.

Migrations run as the owner. The application connects as another role that may
read and write Condor's tables, except that on the audit log it may only INSERT
and SELECT, and on the chain heads not DELETE or TRUNCATE. So neither an
application bug, an injected query, nor `SET LOCAL pgtrigger.ignore = ...` can
change or remove an audit row: the privilege is missing, whatever the triggers
do. Disabling the triggers takes ALTER TABLE, which only the owner has, or a
superuser's `session_replication_role`; this role is neither.
"""

import re

from django.db import connection

from audit.models import AuditChainHead, AuditEvent

_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def grant_statements(role: str, schema: str = "public") -> list[str]:
    """SQL (run as the table owner, after every migrate) that gives `role` exactly the application's rights."""
    if not _ROLE.match(role) or not _ROLE.match(schema):
        raise ValueError(f"Use a plain lower-case identifier for the role and schema (got {role!r}, {schema!r}).")
    audit = connection.ops.quote_name(AuditEvent._meta.db_table)
    heads = connection.ops.quote_name(AuditChainHead._meta.db_table)
    return [
        f"GRANT USAGE ON SCHEMA {schema} TO {role}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {role}",
        # The audit log: append and read, nothing else.
        f"REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON {schema}.{audit} FROM {role}",
        # The chain heads move forward (UPDATE, checked by a trigger) and are never removed.
        f"REVOKE DELETE, TRUNCATE, REFERENCES, TRIGGER ON {schema}.{heads} FROM {role}",
    ]
