import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from weft.migration_ops import without_own_indexes

SET_NULL = django.db.models.deletion.SET_NULL


class Migration(migrations.Migration):
    """The optional links of tasks and runs indexed only where set: a claim and a completion rewrite
    those rows, and a full index takes an entry for every NULL too (tests/weft/test_indexes.py)."""

    dependencies = [
        ('accounts', '0010_fk_indexes_led_by_composites'),
        ('boards', '0012_fk_indexes_led_by_composites'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        without_own_indexes(
            ('run', 'approval', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=SET_NULL, related_name='runs', to='boards.approval'), 'boards_run', 'approval_id', 'boards_run_approval_id_08047d7d'),
            ('run', 'user', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=SET_NULL, related_name='runs', to=settings.AUTH_USER_MODEL), 'boards_run', 'user_id', 'boards_run_user_id_9eeab719'),
            ('task', 'assigned_connection', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=SET_NULL, related_name='+', to='accounts.agentconnection'), 'boards_task', 'assigned_connection_id', 'boards_task_assigned_connection_id_d7774d1a'),
            ('task', 'assigned_user', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL), 'boards_task', 'assigned_user_id', 'boards_task_assigned_user_id_8f7d9468'),
            ('task', 'assignee_connection', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=SET_NULL, related_name='+', to='accounts.agentconnection'), 'boards_task', 'assignee_connection_id', 'boards_task_assignee_connection_id_a7885eef'),
            ('task', 'assignee_user', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL), 'boards_task', 'assignee_user_id', 'boards_task_assignee_user_id_301f88d7'),
            ('task', 'created_by_connection', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=SET_NULL, related_name='+', to='accounts.agentconnection'), 'boards_task', 'created_by_connection_id', 'boards_task_created_by_connection_id_ed758ed7'),
            ('task', 'created_by_user', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL), 'boards_task', 'created_by_user_id', 'boards_task_created_by_user_id_6e8163f3'),
        ),
        *[
            migrations.AddIndex(
                model_name=model,
                index=models.Index(condition=models.Q((f'{field}__isnull', False)), fields=[field], name=name),
            )
            for model, field, name in [
                ('run', 'user', 'run_user_set'),
                ('run', 'approval', 'run_approval_set'),
                ('task', 'assignee_connection', 'task_assignee_conn_set'),
                ('task', 'assignee_user', 'task_assignee_user_set'),
                ('task', 'created_by_user', 'task_creator_user_set'),
                ('task', 'created_by_connection', 'task_creator_conn_set'),
                ('task', 'assigned_user', 'task_assigned_user_set'),
                ('task', 'assigned_connection', 'task_assigned_conn_set'),
            ]
        ],
    ]
