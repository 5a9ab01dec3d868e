"""Project-wide views: the page or JSON answer for an unexpected error."""

from __future__ import annotations

import logging
import uuid

from django.http import HttpRequest, HttpResponse, HttpResponseServerError, JsonResponse
from django.template import loader

from weft.errors import internal_error
from weft.hints import wait

log = logging.getLogger(__name__)


def _wants_json(request: HttpRequest) -> bool:
    """API paths and callers that ask for JSON rather than a page (agents, scripts, fetch)."""
    if request.path.startswith("/api/"):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a request id in the log, the page and the JSON, so a report finds the traceback.

    Rendered without the request's context processors: they read the database, which may be
    what failed.
    """
    request_id = uuid.uuid4().hex
    # Django logs the traceback itself (django.request) right after this view returns.
    log.error("internal_error request_id=%s %s %s", request_id, request.method, request.path)
    if _wants_json(request):
        error = internal_error(request_id, retry_tool="get_my_work")
        return JsonResponse(error.as_json(), status=500)
    hint = wait("the operators look at the logged error; reload this page in a minute")
    html = loader.get_template("500.html").render({"request_id": request_id, "hint": hint.lines()[0]})
    return HttpResponseServerError(html)
