from django.db import migrations


def create_plans(apps, schema_editor):
    Plan = apps.get_model("accounts", "Plan")
    Plan.objects.update_or_create(
        code="free",
        defaults={
            "name": "Free",
            "monthly_task_cap": 50,
            "monthly_agent_call_cap": 200,
            "seat_price_month_cents": 0,
            "seat_price_year_cents": 0,
        },
    )
    Plan.objects.update_or_create(
        code="pro",
        defaults={
            "name": "Pro",
            "monthly_task_cap": None,
            "monthly_agent_call_cap": None,
            "seat_price_month_cents": 700,
            "seat_price_year_cents": 6000,
        },
    )


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]
    operations = [migrations.RunPython(create_plans, migrations.RunPython.noop)]
