"""Seeding: people, workspaces and agents through the services; bulk rows in SQL.

A million tasks cannot go through the ORM in a benchmark's time, so bulk rows are cloned from
one template row with INSERT … SELECT over generate_series: every column the template has is
copied, only the named ones are set, so a column added by a later migration comes along.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import connection

# Ten tasks out of each ten: mostly Done, as a board that has been used for a while.
COLUMN_BY_TENTH = "(ARRAY['done','done','done','done','done','done','done','done','todo','backlog'])"


@dataclass
class Agent:
    token: str
    connection_id: int
    workspace_id: int


@dataclass
class Place:
    """A workspace with its owner and first board."""

    workspace: Any
    owner: Any
    board_id: int


def place(name: str) -> Place:
    from accounts.models import User
    from accounts.services import workspace_create
    from boards.services import board_default

    owner = User.objects.create_user(email=f"bench-{secrets.token_hex(4)}@example.com", password="x")
    workspace = workspace_create(owner=owner, name=name, plan_code="pro")
    return Place(workspace=workspace, owner=owner, board_id=board_default(workspace=workspace).pk)


def agent(where: Place, resource: str, name: str) -> Agent:
    """An agent signed in to `where`: its own OAuth client, connection and access token."""
    from django.utils import timezone
    from oauth2_provider.models import AccessToken, Application

    from accounts.connections import connection_authorize

    app = Application.objects.create(
        name=name, client_type="public", authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/cb",
    )  # fmt: skip
    conn = connection_authorize(user=where.owner, application=app, workspace=where.workspace)
    token = secrets.token_urlsafe(32)
    AccessToken.objects.create(
        user=where.owner, application=app, token=token, expires=timezone.now() + timedelta(hours=6),
        scope="mcp", resource=[resource],
    )  # fmt: skip
    return Agent(token=token, connection_id=conn.pk, workspace_id=where.workspace.pk)


def _columns(table: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s AND column_name <> 'id'"
            " ORDER BY ordinal_position",
            [table],
        )
        return [row[0] for row in cursor.fetchall()]


def clone(
    table: str,
    template_id: int,
    overrides: dict[str, str],
    source: str,
    params: list[Any],
    where: str = "TRUE",
) -> int:
    """INSERT into `table` one row per row of `source` (SQL FROM items) that matches `where`, copying
    the template's columns except `overrides` (SQL expressions over `source`). Returns the rows
    inserted; `params` fill the overrides, then `source`, then `where`."""
    cols = _columns(table)
    select = ", ".join(overrides.get(c, f't."{c}"') for c in cols)
    names = ", ".join(f'"{c}"' for c in cols)
    sql = (
        f'INSERT INTO "{table}" ({names}) SELECT {select} FROM "{table}" t, {source}'
        f" WHERE ({where}) AND t.id = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, template_id])
        return cursor.rowcount


def _template_task(where: Place) -> int:
    from boards.models import Task

    return Task.objects.create(workspace=where.workspace, board_id=where.board_id, title="template").pk


def tasks(where: Place, n: int, *, column: str | None = None, prefix: str = "Task") -> list[int]:
    """`n` tasks on the place's board: all in `column`, or mostly Done with a tenth each in Todo and
    Backlog. Returns the ids of the Todo ones, in board order."""
    template = _template_task(where)
    col = f"'{column}'" if column else f"{COLUMN_BY_TENTH}[mod(g, 10) + 1]"
    clone(
        "boards_task",
        template,
        {"title": f"'{prefix} ' || g", "column": col, "position": "g::float",
         "workspace_id": str(int(where.workspace.pk)), "board_id": str(int(where.board_id))},
        "generate_series(1, %s) g",
        [n],
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM boards_task WHERE id = %s", [template])
        cursor.execute(
            "SELECT id FROM boards_task WHERE workspace_id = %s AND \"column\" = 'todo' AND id > %s"
            " ORDER BY position, id",
            [where.workspace.pk, template],
        )
        return [row[0] for row in cursor.fetchall()]


def workspaces_beside(template: Place, n: int, tasks_each: int) -> None:
    """`n` other workspaces, each with a board of `tasks_each` tasks: the tenants beside the measured one."""
    marker = f"beside-{secrets.token_hex(3)}"
    clone(
        "accounts_workspace",
        template.workspace.pk,
        {"name": f"'{marker} ' || g", "slug": f"'{marker}-' || g"},
        "generate_series(1, %s) g",
        [n],
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM boards_board WHERE workspace_id = %s", [template.workspace.pk])
        board_template = cursor.fetchone()[0]  # type: ignore[index]
    clone("boards_board", board_template, {"workspace_id": "w.id"}, "accounts_workspace w", [f"{marker}-%"],
          where="w.slug LIKE %s")  # fmt: skip
    task_template = _template_task(template)
    clone(
        "boards_task",
        task_template,
        {"title": "'Other task ' || g", "column": f"{COLUMN_BY_TENTH}[mod(g, 10) + 1]",
         "position": "g::float", "workspace_id": "b.workspace_id", "board_id": "b.id"},
        "boards_board b JOIN accounts_workspace w ON w.id = b.workspace_id, generate_series(1, %s) g",
        [tasks_each, f"{marker}-%"],
        where="w.slug LIKE %s",
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM boards_task WHERE id = %s", [task_template])


def analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
