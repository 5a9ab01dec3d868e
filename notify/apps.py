from django.apps import AppConfig


class NotifyConfig(AppConfig):
    name = "notify"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from notify.relay import connect

        # Every freshly positioned inbox.item_created becomes one push message per device.
        connect()
