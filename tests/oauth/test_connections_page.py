"""People's side of agent connections: the list, revoking one, and the set-up page."""

from __future__ import annotations

from django.conf import settings
from django.test import Client
from django.urls import reverse

from accounts.connections import connection_for_token
from tests.mcp.harness import agent_token


def test_it_lists_and_revokes_a_connection(alice, ws_a, client: Client):
    token, connection = agent_token(alice, ws_a, name="Claude Code")
    client.force_login(alice)
    page = client.get(reverse("connections"))
    assert page.status_code == 200
    assert "Claude Code" in page.content.decode() and ws_a.name in page.content.decode()

    url = reverse("connection_revoke", kwargs={"connection_id": connection.pk})
    # A GET asks to confirm and changes nothing; the revoke is the confirmation's POST.
    confirm = client.get(url)
    assert confirm.status_code == 200 and "Revoke Claude Code?" in confirm.content.decode()
    assert f'action="{url}"' in confirm.content.decode() and 'method="post"' in confirm.content.decode()
    assert connection_for_token(token) is not None
    assert client.put(url).status_code == 405

    response = client.post(url)
    assert response.status_code == 302 and response["Location"] == reverse("connections")
    connection.refresh_from_db()
    assert connection.revoked_at is not None
    assert connection_for_token(token) is None
    after = client.get(reverse("connections")).content.decode()
    assert "is disconnected" in after and url not in after


def test_it_shows_setup_with_this_servers_url(alice, client: Client):
    client.force_login(alice)
    html = client.get(reverse("agent_connect")).content.decode()
    assert f"claude mcp add --transport http weft {settings.WEFT_MCP_URL}" in html
    for name in ("Claude Code", "Cursor", "Codex", "ChatGPT"):
        assert name in html
