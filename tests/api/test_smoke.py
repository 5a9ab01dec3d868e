from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_it_runs_the_loop(api):
    work = api.get("work")
    assert work.status == 200, work.body
    created = api.post("tasks", {"title": "Write the API"})
    assert created.status == 201, created.body
    task_id = created.body["task"]["id"]
    assert created.body["_next_action"] == f"Next: POST /api/v1/tasks/{task_id}/start {{}}"
    started = api.post(f"tasks/{task_id}/start")
    assert started.status == 200, started.body
    print(started.body["_next_action"])
    run = started.body["runId"]
    beat = api.post(f"runs/{run}/heartbeat", {"leaseToken": started.body["leaseToken"], "note": "x"})
    assert beat.status == 200, beat.body
    print(beat.body["_next_action"])
    missing = api.get("tasks/987654321")
    assert missing.status == 404, missing.body
    print(missing.body)
    bad = api.post("tasks", {"title": "x" * 201})
    assert bad.status == 422, bad.body
    print(bad.body)
    print(api.get("tasks").body)
    print(api.get("tasks/search", {"query": "API"}).body)
    print(api.get("nope").body)
