"""A database built before the layout move upgrades with its rows, permissions and audit chain intact.

The move gave models new apps (agents, audit, registry, runs) without touching a table. Here the
suite's database is taken back to the migrations main had before the move (the content types of
the moved models labelled `approvals` again, as they were), given rows of its own there, and then
upgraded with `manage.py migrate`, as an operator would: every row is still read, every
permission still held (by the same content type, now under the new label), the admin's log still
opens its object, and `verify_audit` still finds the chain intact.
"""

import pytest
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth.models import Group, User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from agents.models import ApiClient, ApiClientKey, IdempotencyRecord
from audit import chain
from audit.models import AuditChainHead, AuditEvent
from registry.models import AccessGrant, ToolChange, ToolDescriptor
from runs.models import Heartbeat
from tests.helpers.approval_loop import suspend
from tests.helpers.personas import person
from tests.helpers.runs import open_executing_run

# The leaves of main's migration graph before the move; the new apps had none.
BEFORE_THE_MOVE = [
    ("approvals", "0023_quick_reasons"),
    ("runs", "0004_run_suspended_at"),
    ("sessions_app", "0006_session_as_of_now"),
    ("agents", None),
    ("audit", None),
    ("registry", None),
]
MOVED = [
    ApiClient,
    ApiClientKey,
    IdempotencyRecord,
    AuditEvent,
    AuditChainHead,
    ToolDescriptor,
    ToolChange,
    AccessGrant,
    Heartbeat,
]


def counts() -> dict[str, int]:
    return {model._meta.db_table: model.objects.count() for model in MOVED}


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_database_from_before_the_move_upgrades_intact(api, ward_agent):
    suspend(api, open_executing_run(api))  # a client, a key, a card and the audit rows they leave
    content_type_ids = {model: ContentType.objects.get_for_model(model).pk for model in MOVED}

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_THE_MOVE)
    old = executor.loader.project_state([target for target in BEFORE_THE_MOVE if target[1]]).apps
    labels = dict(ContentType.objects.filter(pk__in=content_type_ids.values()).values_list("model", "app_label"))
    assert set(labels.values()) == {"approvals"}, "before the move, the moved models were approvals'"
    # Rows written while the database was still on the old layout, through the old models.
    made_before = old.get_model("approvals", "ApiClient").objects.create(name="made before the move")
    old.get_model("approvals", "Heartbeat").objects.create(name="sweep", at=timezone.now(), details={"runs_idle": 0})
    admin_user = User.objects.create_superuser("olga", password="x")
    LogEntry.objects.create(
        user=admin_user,
        content_type_id=content_type_ids[ApiClient],
        object_id=str(made_before.pk),
        object_repr=made_before.name,
        action_flag=ADDITION,
    )
    before = counts()

    call_command("migrate", verbosity=0)

    assert counts() == before
    assert ApiClient.objects.get(name="made before the move").pk == made_before.pk
    assert Heartbeat.objects.get(name="sweep").details == {"runs_idle": 0}
    # Each content type moved, rather than a new one being made beside it: what pointed at it follows.
    assert {model: ContentType.objects.get_for_model(model).pk for model in MOVED} == content_type_ids
    assert not ContentType.objects.filter(app_label="approvals", model__in=labels)
    entry = LogEntry.objects.get(object_repr="made before the move")
    assert entry.get_edited_object() == ApiClient.objects.get(pk=made_before.pk)
    compliance = Group.objects.get(name="compliance")
    assert compliance.permissions.filter(content_type__app_label="audit", codename="view_auditevent").exists()
    carl, gina = person("carl", "compliance"), person("gina", "governance")
    assert carl.has_perm("audit.view_auditevent") and carl.has_perm("agents.view_apiclient")
    assert gina.has_perm("registry.change_tooldescriptor") and not carl.has_perm("registry.change_tooldescriptor")
    report = chain.verify(None)
    assert report.intact and report.rows == AuditEvent.objects.count()
