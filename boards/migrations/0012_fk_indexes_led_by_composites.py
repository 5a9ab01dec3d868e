import django.db.models.deletion
from django.db import migrations, models

from weft.migration_ops import without_own_indexes

CASCADE = django.db.models.deletion.CASCADE


class Migration(migrations.Migration):
    """The foreign keys' own indexes where a composite index leads with the same column
    (tests/weft/test_indexes.py)."""

    dependencies = [
        ('accounts', '0010_fk_indexes_led_by_composites'),
        ('boards', '0011_run_live_by_connection'),
    ]

    operations = [
        without_own_indexes(
            ('inboxitem', 'workspace', models.ForeignKey(db_index=False, on_delete=CASCADE, related_name='inbox', to='accounts.workspace'), 'boards_inboxitem', 'workspace_id', 'boards_inboxitem_workspace_id_e6c47102'),
            ('run', 'workspace', models.ForeignKey(db_index=False, on_delete=CASCADE, related_name='runs', to='accounts.workspace'), 'boards_run', 'workspace_id', 'boards_run_workspace_id_939b8573'),
            ('task', 'board', models.ForeignKey(db_index=False, on_delete=CASCADE, related_name='tasks', to='boards.board'), 'boards_task', 'board_id', 'boards_task_board_id_46a9ecbe'),
            ('task', 'workspace', models.ForeignKey(db_index=False, on_delete=CASCADE, related_name='tasks', to='accounts.workspace'), 'boards_task', 'workspace_id', 'boards_task_workspace_id_51914b1d'),
        ),
    ]
