"""An unexpected exception on the web answers a proper 500: a page, or JSON for API callers."""

from __future__ import annotations

import json
import logging

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import get_resolver, include, path

from weft.hints import problems
from weft.views import server_error


def _boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("the unexpected")


urlpatterns = [path("boom/", _boom), path("api/v1/boom/", _boom), path("", include("weft.urls"))]
handler500 = "weft.views.server_error"

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.faults.test_server_error_page")]


def test_it_wires_the_handler_in_the_project_urls():
    assert get_resolver("weft.urls").resolve_error_handler(500) is server_error


def test_it_answers_a_page_with_a_request_id(caplog):
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.ERROR, logger="weft.views"):
        response = client.get("/boom/", headers={"accept": "text/html"})
    assert response.status_code == 500
    assert response["content-type"].startswith("text/html")
    body = response.content.decode()
    assert "Something went wrong" in body and "Traceback" not in body
    logged = [r.getMessage() for r in caplog.records if r.name == "weft.views"]
    request_id = logged[0].split("request_id=")[1].split()[0]
    assert request_id in body
    assert response.has_header("Content-Security-Policy")


@pytest.mark.parametrize(("url", "accept"), [("/api/v1/boom/", "*/*"), ("/boom/", "application/json")])
def test_it_answers_json_with_the_hint_to_api_callers(url, accept):
    response = Client(raise_request_exception=False).get(url, headers={"accept": accept})
    assert response.status_code == 500
    assert response["content-type"] == "application/json"
    payload = json.loads(response.content)
    assert payload["error"]["code"] == "internal_error"
    assert len(payload["error"]["details"]["request_id"]) == 32
    assert payload["_next_action"].startswith("Wait: ")
    assert not problems(payload["_next_action"], payload)
