from django.apps import AppConfig


class BoardsConfig(AppConfig):
    name = "boards"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from datetime import timedelta

        from django.conf import settings

        from boards import lease
        from boards.news import approved_steps, register_news_source
        from boards.push import push_event
        from weft.events import register_fanout

        # Every committed event becomes a live-push notice to its workspace's open pages.
        register_fanout(push_event)
        # get_my_work names a next step a person approved until the agent starts it.
        register_news_source(approved_steps)
        # A fault run compresses every lease (WEFT_LEASE_SECONDS); the pure rules read the
        # duration at each claim and heartbeat.
        if settings.WEFT_LEASE_SECONDS:
            lease.LEASE_DURATION = timedelta(seconds=settings.WEFT_LEASE_SECONDS)
