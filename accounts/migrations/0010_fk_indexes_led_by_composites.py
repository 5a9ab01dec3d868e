import django.db.models.deletion
from django.db import migrations, models

from weft.migration_ops import without_own_indexes

CASCADE = django.db.models.deletion.CASCADE


class Migration(migrations.Migration):
    """Usage.workspace's own index: one_usage_row_per_month leads with it."""

    dependencies = [('accounts', '0009_plan_change')]

    operations = [
        without_own_indexes(
            ('usage', 'workspace', models.ForeignKey(db_index=False, on_delete=CASCADE, related_name='usage', to='accounts.workspace'), 'accounts_usage', 'workspace_id', 'accounts_usage_workspace_id_0cc3db12'),
        ),
    ]
