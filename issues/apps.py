from django.apps import AppConfig


class IssuesConfig(AppConfig):
    name = "issues"
    default_auto_field = "django.db.models.BigAutoField"
