"""Migration operations shared by the apps' migrations."""

from django.db import migrations


def drop_covered_fk_index(model_name: str, field_name: str, field, *, table: str, column: str, index: str):
    """`field` (the same foreign key with db_index=False) in the state; only its own index dropped in the database.

    Django's AlterField would drop and re-add the foreign-key constraint to drop the
    index, and re-adding it validates every row of the table under a lock; the
    constraint is unchanged, so only the index goes. The index name is the one
    Django gave it (the same on PostgreSQL and SQLite); the reverse builds it again.
    """
    return migrations.SeparateDatabaseAndState(
        state_operations=[migrations.AlterField(model_name=model_name, name=field_name, field=field)],
        database_operations=[
            migrations.RunSQL(
                f'DROP INDEX IF EXISTS "{index}"',
                reverse_sql=f'CREATE INDEX IF NOT EXISTS "{index}" ON "{table}" ("{column}")',
            )
        ],
    )
