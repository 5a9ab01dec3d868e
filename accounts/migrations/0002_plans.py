from django.db import migrations

from accounts.models import STANDARD_PLANS


def create_plans(apps, schema_editor):
    Plan = apps.get_model("accounts", "Plan")
    for code, fields in STANDARD_PLANS.items():
        Plan.objects.update_or_create(code=code, defaults=fields)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]
    operations = [migrations.RunPython(create_plans, migrations.RunPython.noop)]
