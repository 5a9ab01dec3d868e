import django.db.models.deletion
from django.db import migrations, models

from weft.migration_ops import without_own_indexes

CASCADE = django.db.models.deletion.CASCADE


class Migration(migrations.Migration):
    """Event.workspace's own index, where event_workspace_position leads with the same column
    and serves its lookups (tests/weft/test_indexes.py): one index fewer for every event written
    and every position the relay sets."""

    dependencies = [('weft', '0002_event_position')]

    operations = [
        without_own_indexes(
            ('event', 'workspace', models.ForeignKey(db_index=False, on_delete=CASCADE, related_name='events', to='accounts.workspace'), 'weft_event', 'workspace_id', 'weft_event_workspace_id_7df41e5e'),
        ),
    ]
