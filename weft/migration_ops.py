"""Migration operations Weft's apps share (imported by migrations: keep what is here stable)."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def without_own_indexes(*dropped: tuple[str, str, Any, str, str, str]) -> migrations.SeparateDatabaseAndState:
    """Foreign keys declared `db_index=False` where a composite index leads with their column:
    each (model, field name, the field as it is now, table, column, the index Django gave it).

    The database loses the index alone: Django's AlterField would drop and re-add the foreign key
    too, checking every row of the table again. The reverse builds the index back."""
    return migrations.SeparateDatabaseAndState(
        state_operations=[
            migrations.AlterField(model_name=model, name=name, field=field)
            for model, name, field, _table, _column, _index in dropped
        ],
        database_operations=[
            migrations.RunSQL(
                f'DROP INDEX IF EXISTS "{index}"',
                reverse_sql=f'CREATE INDEX IF NOT EXISTS "{index}" ON "{table}" ("{column}")',
            )
            for _model, _name, _field, table, column, index in dropped
        ],
    )
