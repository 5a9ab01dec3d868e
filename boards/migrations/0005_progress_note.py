"""A heartbeat's note is a progress note (the glossary's word); a report is the completion evidence."""

from django.conf import settings
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("boards", "0004_report_not_accepted"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameModel(old_name="ProgressReport", new_name="ProgressNote"),
    ]
