"""Labels over REST: the same `labels` argument as the MCP tools, at the same limits."""

from __future__ import annotations

from boards.services import label_create


def test_tasks_take_and_show_labels_up_to_ten_of_their_workspace(api, ws_a, ws_b):
    names = [label_create(workspace=ws_a, name=f"L{i}").name for i in range(11)]
    label_create(workspace=ws_b, name="Secret")
    created = api.post("tasks", {"title": "Tagged", "labels": ["l1"]})
    assert created.status == 201, created.body
    task_id = created.body["task"]["id"]
    assert created.body["task"]["labels"] == ["L1"]
    assert api.call("PATCH", f"tasks/{task_id}", {"labels": names}).status == 422
    foreign = api.call("PATCH", f"tasks/{task_id}", {"labels": ["Secret"]})
    assert foreign.status == 422 and foreign.body["error"]["code"] == "invalid_argument", foreign.body
    assert api.call("PATCH", f"tasks/{task_id}", {"labels": names[:10]}).status == 200
    assert api.get(f"tasks/{task_id}").body["task"]["labels"] == sorted(names[:10], key=str.lower)
