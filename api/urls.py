"""The REST API's URLs, built from the route table (api/routes.py), and its OpenAPI document.

`/api/v1/events/stream` is not here: weft/asgi.py sends it to the SSE app before Django sees it.
"""

from __future__ import annotations

import re
from collections import defaultdict

from django.urls import URLPattern, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from api.routes import ROUTES, Route
from api.views import ToolView, unknown_path

app_name = "api"


def _pattern(template: str) -> str:
    return re.sub(r"{([A-Za-z]+)}", r"<str:\1>", template.lstrip("/"))


def _paths() -> list[URLPattern]:
    """One URL per path, named by its first operation, serving each of its methods."""
    by_path: dict[str, dict[str, Route]] = defaultdict(dict)
    for route in ROUTES:
        if not route.external:
            by_path[route.template][route.method] = route
    return [
        path(
            _pattern(template),
            ToolView.as_view(routes=methods, http_method_names=[m.lower() for m in methods]),
            name=next(iter(methods.values())).operation_id,
        )
        for template, methods in by_path.items()
    ]


urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    *_paths(),
    path("<path:rest>", unknown_path, name="unknown"),
]
