from django.apps import AppConfig


class WeftConfig(AppConfig):
    name = "weft"
    default_auto_field = "django.db.models.BigAutoField"
