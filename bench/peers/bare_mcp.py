"""The bare official MCP SDK: one no-op tool, Weft's transport settings, nothing else.

Served by bench/infra.py under uvicorn with one worker, as Weft is: stateless HTTP, JSON
responses, DNS-rebinding protection on with loopback hosts allowed. No auth, no database:
this is the floor an MCP call through the SDK costs on this machine.
"""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent

server = MCPServer(name="bare")
# Weft's logging settings: the SDK logs "Terminating session: None" at INFO for every stateless request.
logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)


async def noop() -> CallToolResult:
    """Do nothing."""
    return CallToolResult(
        content=[TextContent(type="text", text="Nothing done.\nDone.")], structured_content={}
    )


server.add_tool(noop, name="noop", structured_output=True)

app = server.streamable_http_app(
    streamable_http_path="/api/mcp",
    stateless_http=True,
    json_response=True,
    transport_security=TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
    ),
)
