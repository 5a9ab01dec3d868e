"""Writes on accounts, one transaction each, keyword-only arguments.

Each write that changes a workspace appends one event per changed row (weft.events) in its own
transaction, and reads the time once from the database clock (boards.clock). Events carry ids and
the changed fields: never an invitation's token or address, never a person's email.

Split by subdomain: `workspaces` (workspaces, plans, usage), `invitations`, `seats`, `profile`
(a person's display name). Everything a
surface calls is re-exported here.
"""

from accounts.services.invitations import (
    invitation_accept,
    invitation_check,
    invitation_create,
    invitation_revoke,
    invitation_send,
)
from accounts.services.plan_changes import (
    plan_change_abandon,
    plan_change_begin,
    plan_change_settle,
    plan_quote,
)
from accounts.services.profile import user_set_name
from accounts.services.seats import seat_remove, seat_set_role
from accounts.services.workspaces import (
    usage_consume,
    usage_for,
    workspace_create,
    workspace_set_plan,
    workspace_set_suspended,
)

__all__ = [
    "invitation_accept",
    "invitation_check",
    "invitation_create",
    "invitation_revoke",
    "invitation_send",
    "plan_change_abandon",
    "plan_change_begin",
    "plan_change_settle",
    "plan_quote",
    "seat_remove",
    "seat_set_role",
    "usage_consume",
    "usage_for",
    "user_set_name",
    "workspace_create",
    "workspace_set_plan",
    "workspace_set_suspended",
]
