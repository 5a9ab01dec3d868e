from django.apps import AppConfig


class BoardsConfig(AppConfig):
    name = "boards"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from boards.push import push_event
        from weft.events import register_fanout

        # Every committed event becomes a live-push notice to its workspace's open pages.
        register_fanout(push_event)
