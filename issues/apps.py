from django.apps import AppConfig


class IssuesConfig(AppConfig):
    name = "issues"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from boards.news import register_news_source
        from issues.news import issue_news
        from issues.relay import connect

        # get_my_work tells a reporting agent when an issue it filed has news.
        register_news_source(issue_news)
        # The relay hands every freshly positioned event to issues.relay.on_events.
        connect()
