"""The operators' admin pages load, search and flip the kill switch."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import User, Workspace
from accounts.services import invitation_create
from weft.events import emit


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_superuser(email="ops@example.com", password="x")


def test_it_lists_and_searches_every_model(client: Client, operator, alice, bob, ws_a):
    invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")
    emit(workspace_id=ws_a.pk, type="task.created", entity_type="task", entity_id="1", payload={})
    client.force_login(operator)
    for model in ["workspace", "user", "plan", "invitation", "agentconnection", "usage"]:
        assert client.get(f"/admin/accounts/{model}/?q=acme").status_code == 200, model
    assert client.get("/admin/weft/event/").status_code == 200
    page = client.get(f"/admin/accounts/workspace/{ws_a.pk}/change/")
    assert page.status_code == 200
    assert b"bob@example.com" in page.content
    assert b"is_suspended" in page.content
    assert client.get(f"/admin/accounts/user/{alice.pk}/change/").status_code == 200


def test_it_suspends_a_workspace_with_the_kill_switch(client: Client, operator, ws_a):
    client.force_login(operator)
    response = client.post("/admin/accounts/workspace/", {"action": "suspend", "_selected_action": [ws_a.pk]})
    assert response.status_code == 302
    assert Workspace.objects.get(pk=ws_a.pk).is_suspended


def test_it_keeps_the_event_log_read_only(client: Client, operator, ws_a):
    event = emit(workspace_id=ws_a.pk, type="task.created", entity_type="task", entity_id="1", payload={})
    client.force_login(operator)
    assert client.get("/admin/weft/event/add/").status_code == 403
    assert client.get(f"/admin/weft/event/{event.pk}/change/").status_code == 200
    assert client.post(f"/admin/weft/event/{event.pk}/delete/").status_code == 403
