"""The loop over REST end to end, the listing's cursor, unknown paths and parameters, and the
OpenAPI document with its docs pages served from the installed package."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_runs_the_loop(api):
    assert api.get("work").status == 200
    created = api.post("tasks", {"title": "Write the API"})
    assert created.status == 201
    task_id = created.body["task"]["id"]
    assert created.body["_next_action"] == f"Next: POST /api/v1/tasks/{task_id}/start {{}}"
    claim = api.post(f"tasks/{task_id}/start").body
    run, token = claim["runId"], claim["leaseToken"]
    body = json.dumps({"leaseToken": token, "note": f"working on task {task_id}"}, separators=(", ", ": "))
    assert claim["_next_action"] == f"Next: POST /api/v1/runs/{run}/heartbeat {body}"
    beat = api.post(f"runs/{run}/heartbeat", {"leaseToken": token, "note": "halfway"})
    assert beat.status == 200 and beat.body["_next_action"].startswith("Wait: ")
    done = api.post(f"runs/{run}/complete", {"leaseToken": token, "outcome": "Written."})
    assert done.status == 200 and done.body["column"] == "done"
    again = api.post(f"runs/{run}/heartbeat", {"leaseToken": token, "note": "late"})
    assert again.status == 409 and again.body["error"]["code"] == "lease_lost"


def test_it_pages_tasks_with_a_cursor(api):
    ids = [api.post("tasks", {"title": f"Task {n}"}).body["task"]["id"] for n in range(5)]
    seen, query = [], {"limit": 2}
    while True:
        page = api.get("tasks", query).body
        seen += [t["id"] for t in page["tasks"]]
        if page["nextCursor"] is None:
            assert page["_next_action"] == "Next: GET /api/v1/work"
            break
        assert page["_next_action"] == f"Next: GET /api/v1/tasks?cursor={page['nextCursor']}&limit=2"
        query = {"limit": 2, "cursor": page["nextCursor"]}
    assert seen == ids
    assert api.get("tasks", {"column": "done"}).body["tasks"] == []
    bad = api.get("tasks", {"cursor": "bm9wZQ"})
    assert bad.status == 422 and bad.body["_next_action"] == "Fix: GET /api/v1/tasks"


def test_it_refuses_an_unknown_query_parameter(api):
    refused = api.get("tasks/search", {"query": "x", "qeury": "y"})
    assert refused.status == 422 and refused.body["error"]["details"]["field"] == "qeury"
    assert refused.body["_next_action"] == "Fix: GET /api/v1/tasks/search?query=x"


def test_an_unknown_path_is_a_json_not_found(api):
    answer = api.get("nothing/here")
    assert answer.status == 404 and answer.body["error"]["code"] == "not_found"
    assert answer.body["_next_action"] == "Fix: GET /api/v1/work"


def test_the_schema_is_openapi_3_1_with_every_operation(db):
    response = Client().get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.1")
    operations = {op["operationId"]: op for path in schema["paths"].values() for op in path.values()}
    from api.routes import ROUTES

    assert set(operations) == {r.operation_id for r in ROUTES if not r.external}
    for name, op in operations.items():
        assert {"200", "201"} & set(op["responses"]), name
        assert {"401", "404", "422"} <= set(op["responses"]), name
        assert op["security"] == [{"personalToken": []}, {"bearer": []}], name
    assert "requestBody" in operations["complete_task"]


@pytest.mark.parametrize("page", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_the_docs_pages_load_their_assets_from_the_installed_package(db, page):
    response = Client().get(page)
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/" in html
    # Every script is this server's, none from a CDN. The page's random CSRF token may spell
    # anything, so the check reads the scripts' sources, not the text.
    scripts = re.findall(r"""<script[^>]*\bsrc=["']([^"']+)["']""", html)
    assert scripts and all(src.startswith("/static/") for src in scripts), scripts
    assert "unpkg" not in html.lower() and "cdn.jsdelivr" not in html.lower()
