from django.apps import AppConfig


class IssuesConfig(AppConfig):
    name = "issues"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from issues.relay import connect

        # The relay hands every freshly positioned event to issues.relay.on_events.
        connect()
