"""The gate every REST call passes, as every MCP tool call does: the caller's connection is still
live (not revoked, its seat held), its workspace is not suspended, a personal access token is
within its rate, and the call is metered against the plan's monthly agent calls (a personal
token's calls are agent calls too: they count on the token's connection)."""

from __future__ import annotations

from accounts.access import require_active_workspace
from accounts.connections import connection_live
from accounts.models import AgentConnection, Usage
from accounts.services import usage_consume
from accounts.tokens import pat_rate_hit
from api.auth import ApiCaller
from api.responses import unauthenticated


def admit(caller: ApiCaller) -> AgentConnection:
    connection = connection_live(connection_id=caller.connection_id)
    if connection is None:
        raise unauthenticated("the agent connection of this token was disconnected")
    require_active_workspace(connection.workspace)
    if caller.token_id is not None:
        pat_rate_hit(token_id=caller.token_id)
    usage_consume(workspace=connection.workspace, kind=Usage.AGENT_CALLS)
    return connection
