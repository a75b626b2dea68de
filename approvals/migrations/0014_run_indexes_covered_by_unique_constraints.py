import django.db.models.deletion
from django.db import migrations, models

from core.migration_ops import drop_covered_fk_index


class Migration(migrations.Migration):
    """Approval.run and ToolCall.run lose their own indexes: the unique constraints
    one_approval_per_suspend (run, step_id, contract_hash) and one_tool_call_per_id
    (run, tool_call_id) lead with the run and serve every lookup by run."""

    dependencies = [
        ('approvals', '0013_approval_inbox_queue_index'),
        ('runs', '0002_rundispatch'),
    ]

    operations = [
        drop_covered_fk_index(
            'approval', 'run',
            models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='approvals',
                              to='runs.run'),
            table='approvals_approval', column='run_id', index='approvals_approval_run_id_6bf3dbce'),
        drop_covered_fk_index(
            'toolcall', 'run',
            models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='tool_calls',
                              to='runs.run'),
            table='approvals_toolcall', column='run_id', index='approvals_toolcall_run_id_53f311e4'),
    ]
