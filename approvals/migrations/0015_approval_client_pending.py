"""Approvals carry their session's client, so the pending limit counts one index range.

The limit counted a client's open cards through a join on its sessions: one probe of
the approvals per session the client ever had (19 ms a suspend at 10,000 sessions,
vacuumed and analyzed; bench/README.md, "Session 8").
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def copy_session_clients(apps, schema_editor):
    Approval = apps.get_model("approvals", "Approval")
    Session = apps.get_model("sessions_app", "Session")
    Approval.objects.update(client_id=Subquery(Session.objects.filter(pk=OuterRef("session_id")).values("client_id")))


class Migration(migrations.Migration):

    dependencies = [
        ("approvals", "0014_run_indexes_covered_by_unique_constraints"),
        ("sessions_app", "0005_message_session_index_covered_by_session_seq"),
    ]

    operations = [
        migrations.AddField(
            model_name="approval",
            name="client",
            field=models.ForeignKey(db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="+", to="approvals.apiclient"),
        ),
        migrations.RunPython(copy_session_clients, migrations.RunPython.noop, elidable=False),
        migrations.AlterField(
            model_name="approval",
            name="client",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="+", to="approvals.apiclient"),
        ),
        migrations.AddIndex(
            model_name="approval",
            index=models.Index(fields=["client", "expires_at"], name="approval_client_pending",
                               condition=models.Q(("status", "pending"))),
        ),
    ]
