"""Events get a global position set by the relay; the per-workspace counter row goes."""

from django.db import migrations, models

# The relay's source of positions on PostgreSQL (SQLite takes max()+1 under its write lock).
SEQUENCE = "weft_event_position"


def backfill_positions(apps, schema_editor):
    """Existing events keep their order: positions 1, 2, ... in id order, the sequence after them."""
    table = schema_editor.quote_name("weft_event")
    schema_editor.execute(
        f"UPDATE {table} SET position = numbered.n FROM "  # noqa: S608
        f"(SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM {table}) AS numbered "
        f"WHERE {table}.id = numbered.id"
    )
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE} AS bigint OWNED BY weft_event.position")
        schema_editor.execute(
            f"SELECT setval('{SEQUENCE}', COALESCE((SELECT MAX(position) FROM {table}), 0) + 1, false)"  # noqa: S608
        )


def restore_sequence_numbers(apps, schema_editor):
    """Back to per-workspace numbers 1, 2, ... in position order, and a counter row per workspace."""
    table = schema_editor.quote_name("weft_event")
    schema_editor.execute(
        f"UPDATE {table} SET seq = numbered.n FROM (SELECT id, ROW_NUMBER() OVER "  # noqa: S608
        f"(PARTITION BY workspace_id ORDER BY position, id) AS n FROM {table}) AS numbered "
        f"WHERE {table}.id = numbered.id"
    )
    EventSequence = apps.get_model("weft", "EventSequence")
    Event = apps.get_model("weft", "Event")
    counts = Event.objects.values("workspace_id").annotate(last=models.Max("seq"))
    EventSequence.objects.bulk_create(
        [EventSequence(workspace_id=row["workspace_id"], last_seq=row["last"]) for row in counts]
    )
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP SEQUENCE IF EXISTS {SEQUENCE}")


class Migration(migrations.Migration):
    dependencies = [("weft", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="event", name="position", field=models.PositiveBigIntegerField(blank=True, null=True)
        ),
        migrations.RemoveConstraint(model_name="event", name="one_event_per_seq"),
        migrations.AlterField(model_name="event", name="seq", field=models.PositiveBigIntegerField(null=True)),
        migrations.RunPython(backfill_positions, restore_sequence_numbers),
        migrations.RemoveField(model_name="event", name="seq"),
        migrations.DeleteModel(name="EventSequence"),
        migrations.AlterField(
            model_name="event",
            name="position",
            field=models.PositiveBigIntegerField(blank=True, null=True, unique=True),
        ),
        migrations.AlterModelOptions(name="event", options={"ordering": ["position"]}),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(fields=["workspace", "position"], name="event_workspace_position"),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(position__isnull=True), fields=["id"], name="event_unpositioned"
            ),
        ),
    ]
