"""People's side of agent connections: the connected-agents list (with revoke) and set-up help."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse

from accounts.access import access_connection_for_user
from accounts.connections import connection_revoke, connections_for_user


@login_required
def connections(request: HttpRequest) -> HttpResponse:
    """Every live connection the user signed in, across their workspaces."""
    rows = connections_for_user(user=request.user)  # type: ignore[arg-type]
    return render(request, "accounts/connections.html", {"connections": rows})


@login_required
def connection_revoke_view(request: HttpRequest, connection_id: int) -> HttpResponse:
    # Look the connection up before checking the method: someone else's id answers 404 either way.
    connection = access_connection_for_user(request.user, connection_id)  # type: ignore[arg-type]
    if request.method == "GET":
        confirm = {
            "title": f"Revoke {connection.name}?",
            "text": f"{connection.name} is signed out of {connection.workspace.name} at once: its tokens "
            "stop working and its calls are refused. To use it again, connect it again.",
            "action": request.path,
            "button": f"Revoke {connection.name}",
            "cancel": reverse("connections"),
        }
        return render(request, "accounts/confirm.html", {"confirm": confirm})
    if request.method != "POST":
        return HttpResponseNotAllowed(["GET", "POST"])
    connection_revoke(connection=connection)
    messages.success(request, f"{connection.name} is disconnected; its sign-in no longer works.")
    return redirect("connections")


@login_required
def agent_connect(request: HttpRequest) -> HttpResponse:
    """Exact set-up for Claude Code, Cursor, Codex and ChatGPT with this server's URL."""
    url = settings.WEFT_MCP_URL
    setups = [
        {
            "client": "Claude Code",
            "how": "Run in your project, then type /mcp in Claude Code and pick weft to sign in.",
            "code": f"claude mcp add --transport http weft {url}",
        },
        {
            "client": "Cursor",
            "how": "Add to ~/.cursor/mcp.json (or .cursor/mcp.json in the project), then press Connect "
            "next to weft in Cursor's MCP settings.",
            "code": '{\n  "mcpServers": {\n    "weft": {\n      "url": "' + url + '"\n    }\n  }\n}',
        },
        {
            "client": "Codex",
            "how": "Add to ~/.codex/config.toml, then run the login command.",
            "code": f'[mcp_servers.weft]\nurl = "{url}"\n\n# then:\n# codex mcp login weft',
        },
        {
            "client": "ChatGPT",
            "how": "Settings → Apps & Connectors → Advanced: turn on developer mode, then Create: "
            "name it Weft, paste this URL, choose OAuth and sign in.",
            "code": url,
        },
    ]
    return render(request, "accounts/connect.html", {"mcp_url": url, "setups": setups})
