from django.apps import AppConfig


class HooksConfig(AppConfig):
    name = "hooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from hooks.relay import connect

        # The relay hands every freshly positioned event to hooks.relay.on_events.
        connect()
