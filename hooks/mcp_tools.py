"""The webhook MCP tools: thin adapters over hooks.services and hooks.selectors.

The tenant comes from the connection (weft.mcp.server.call_as_connection), never an argument.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from accounts.models import AgentConnection
from boards.mcp_tools import READ_ONLY, HintedOutput
from hooks import rules, selectors, services
from hooks.access import access_subscription
from weft.mcp.server import call_as_connection

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


class SubscribeOutput(HintedOutput):
    secret: str | None = Field(default=None, description="The signing secret (whsec_…), shown only here.")


async def subscribe(
    url: Annotated[
        str,
        Field(
            min_length=1,
            max_length=rules.URL,
            description="The https URL that receives the events.",
        ),
    ],
    eventTypes: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=rules.EVENT_TYPE)]] | None,
        Field(
            max_length=rules.EVENT_TYPES,
            description="Event types, such as task.created.",
        ),
    ] = None,
    entityType: Annotated[
        str | None,
        Field(max_length=rules.ENTITY_TYPE, description="Only this entity type, e.g. task."),
    ] = None,
    entityId: Annotated[
        str | None,
        Field(
            max_length=rules.ENTITY_ID,
            description="Only this entity's id (with entityType).",
        ),
    ] = None,
) -> Annotated[CallToolResult, SubscribeOutput]:
    """Send this workspace's events to a URL as Standard Webhooks (POST, signed). A filter is required:
    eventTypes, entityType, or one entity (entityType and entityId); all given parts must match.
    Owners' and admins' agents only; at most 50 per workspace."""

    def run(c: AgentConnection) -> Any:
        return services.subscription_create(
            workspace=c.workspace,
            url=url,
            event_types=eventTypes,
            entity_type=entityType,
            entity_id=entityId,
            by_connection=c,
        )

    return await call_as_connection(run)


async def unsubscribe(
    id: Annotated[int, Field(ge=1, le=2**63 - 1, description="The subscription's id (list_subscriptions).")],
) -> Annotated[CallToolResult, HintedOutput]:
    """Delete a subscription: its URL receives nothing more and its delivery log is gone."""
    return await call_as_connection(
        lambda c: services.subscription_delete(
            subscription=access_subscription(c.workspace, id), by_connection=c
        )
    )


async def list_subscriptions() -> Annotated[CallToolResult, HintedOutput]:
    """This workspace's webhook subscriptions: URL, filter, and whether a 410 disabled them (owners'
    and admins' agents only)."""
    return await call_as_connection(
        lambda c: selectors.subscriptions_list(workspace=c.workspace, by_connection=c)
    )


def _writes(*, idempotent: bool, destructive: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=True
    )


TOOLS: list[tuple[Any, ToolAnnotations]] = [
    (subscribe, _writes(idempotent=False, destructive=False)),
    (unsubscribe, _writes(idempotent=True, destructive=True)),
    (list_subscriptions, READ_ONLY),
]


def register(server: MCPServer) -> None:
    for fn, hints in TOOLS:
        server.add_tool(fn, name=fn.__name__, annotations=hints, structured_output=True)
