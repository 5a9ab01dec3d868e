"""A workspace's boards (boards/services/boards_manage.py): create, rename, archive and restore with
their events and refusals, and what agents are offered once a board is archived — get_my_work,
start_task, startNext, search, list_tasks and get_board_state — with the races on PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from accounts.models import Seat
from boards import clock, limits
from boards.models import Board, Column, Priority
from boards.selectors import board_state, boards_of, search_tasks
from boards.selectors.listing import tasks_page
from boards.services import (
    board_archive,
    board_create,
    board_default,
    board_rename,
    board_restore,
    inbox_decide,
    question_answer,
    task_claim,
    task_create,
    work_for_connection,
)
from tests.boards.helpers import ask, codes, complete, race, refused, release
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft.events import Event
from weft.hints import fix, next_

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("moved_clock")]


@pytest.fixture
def owner(ws_a: Any, alice: Any) -> Seat:
    return Seat.objects.select_related("workspace").get(workspace=ws_a, user=alice)


@pytest.fixture
def member(ws_a: Any, bob: Any) -> Seat:
    return Seat.objects.select_related("workspace").get(workspace=ws_a, user=bob)


@pytest.fixture
def main(ws_a: Any) -> Board:
    return board_default(workspace=ws_a)


def events(type: str) -> list[dict[str, Any]]:
    return [e.payload for e in Event.objects.filter(type=type).order_by("pk")]


# Create, rename, archive, restore ---------------------------------------------------------------


def test_it_creates_renames_archives_and_restores_a_board_with_one_event_each(ws_a, owner, main):
    ops = board_create(workspace=ws_a, name="  Ops  ", by_seat=owner)
    assert ops.name == "Ops" and ops.archived_at is None
    assert events("board.created") == [{"boardId": ops.pk, "name": "Ops"}]
    board_rename(board=ops, name="Operations", by_seat=owner)
    assert events("board.renamed") == [{"boardId": ops.pk, "from": "Ops", "to": "Operations"}]
    archived = board_archive(board=ops, by_seat=owner)
    assert archived.archived_at is not None
    assert events("board.archived") == [{"boardId": ops.pk, "name": "Operations"}]
    assert list(boards_of(ws_a)) == [main]
    restored = board_restore(board=ops, by_seat=owner)
    assert restored.archived_at is None
    assert events("board.restored") == [{"boardId": ops.pk, "name": "Operations"}]
    assert list(boards_of(ws_a)) == [main, ops]


def test_what_changes_nothing_emits_nothing(ws_a, owner, main):
    ops = board_create(workspace=ws_a, name="Ops", by_seat=owner)
    board_rename(board=ops, name="Ops", by_seat=owner)
    board_restore(board=ops, by_seat=owner)
    board_archive(board=ops, by_seat=owner)
    board_archive(board=ops, by_seat=owner)
    assert events("board.renamed") == events("board.restored") == []
    assert len(events("board.archived")) == 1


def test_a_name_at_its_limit_is_taken_and_one_past_it_refused(ws_a, owner, main):
    at_limit = "b" * limits.BOARD_NAME
    assert board_create(workspace=ws_a, name=at_limit, by_seat=owner).name == at_limit
    error = refused(
        "invalid_argument", board_create, workspace=ws_a, name="c" * (limits.BOARD_NAME + 1), by_seat=owner
    )
    assert error.details["field"] == "name" and error.details["problem"] == "too_long"
    assert error.details["limit"] == limits.BOARD_NAME
    error = refused(
        "invalid_argument", board_rename, board=main, name="d" * (limits.BOARD_NAME + 1), by_seat=owner
    )
    assert Board.objects.get(pk=main.pk).name == main.name


@pytest.mark.parametrize("name", ["Ops\x00", "", "   ", None, 7])
def test_nul_empty_and_non_text_names_are_refused(ws_a, owner, main, name):
    refused("invalid_argument", board_create, workspace=ws_a, name=name, by_seat=owner)
    assert Board.objects.filter(workspace=ws_a).count() == 1
    assert events("board.created") == []


def test_live_boards_never_share_a_name_whatever_its_case(ws_a, ws_b, owner, main):
    carol_seat = Seat.objects.get(workspace=ws_b)
    board_create(workspace=ws_b, name="Ops", by_seat=carol_seat)  # another workspace's name is free
    ops = board_create(workspace=ws_a, name="Ops", by_seat=owner)
    error = refused("conflict", board_create, workspace=ws_a, name="OPS", by_seat=owner)
    assert error.details == {"reason": "name_taken", "name": "OPS"}
    refused("conflict", board_rename, board=main, name="ops", by_seat=owner)
    assert board_rename(board=ops, name="OPS", by_seat=owner).name == "OPS"  # its own name, recased


def test_an_archived_boards_name_is_free_and_restoring_it_then_waits_for_a_rename(ws_a, owner, main):
    old = board_create(workspace=ws_a, name="Ops", by_seat=owner)
    board_archive(board=old, by_seat=owner)
    board_create(workspace=ws_a, name="Ops", by_seat=owner)
    refused("conflict", board_restore, board=old, by_seat=owner)
    assert Board.objects.get(pk=old.pk).archived_at is not None
    board_rename(board=old, name="Ops (2025)", by_seat=owner)  # an archived board can be renamed
    assert board_restore(board=old, by_seat=owner).archived_at is None


def test_the_last_live_board_cannot_be_archived(ws_a, owner, main):
    error = refused("conflict", board_archive, board=main, by_seat=owner)
    assert error.details == {"reason": "last_board", "boardId": main.pk}
    assert Board.objects.get(pk=main.pk).archived_at is None
    other = board_create(workspace=ws_a, name="Ops", by_seat=owner)
    board_archive(board=main, by_seat=owner)
    refused("conflict", board_archive, board=other, by_seat=owner)
    assert list(boards_of(ws_a)) == [other]


def test_a_member_and_another_workspaces_owner_are_refused_and_nothing_changes(
    ws_a, ws_b, owner, member, main
):
    ops = board_create(workspace=ws_a, name="Ops", by_seat=owner)
    before = Event.objects.count()
    carol_seat = Seat.objects.get(workspace=ws_b)
    for seat in (member, carol_seat):
        error = refused("forbidden", board_create, workspace=ws_a, name="Mine", by_seat=seat)
        assert error.details == {"reason": "not_a_manager"}
        refused("forbidden", board_rename, board=ops, name="Mine", by_seat=seat)
        refused("forbidden", board_archive, board=ops, by_seat=seat)
        refused("forbidden", board_restore, board=ops, by_seat=seat)
    assert Event.objects.count() == before
    assert [(b.name, b.archived_at) for b in Board.objects.filter(workspace=ws_a).order_by("pk")] == [
        (main.name, None),
        ("Ops", None),
    ]


def test_an_admin_may(ws_a, owner, member, main):
    member.role = Seat.ADMIN
    member.save(update_fields=["role"])
    assert board_create(workspace=ws_a, name="Ops", by_seat=member).name == "Ops"


# What agents are offered --------------------------------------------------------------------


@pytest.fixture
def archived(ws_a, owner, main) -> Board:
    board = board_create(workspace=ws_a, name="Old project", by_seat=owner)
    return board


def test_get_my_work_never_offers_an_archived_boards_task(ws_a, alice, owner, main, archived, agent):
    now = clock.db_now()
    hidden = task_create(
        workspace=ws_a,
        board=archived,
        title="Urgent, archived",
        priority=Priority.URGENT,
        due_at=now + timedelta(hours=1),
        by_user=alice,
    ).task
    live = task_create(workspace=ws_a, board=main, title="Normal, live", by_user=alice).task
    assert work_for_connection(connection=agent).best == hidden
    board_archive(board=archived, by_seat=owner)
    work = work_for_connection(connection=agent)
    assert work.best == live
    assert work.hint == next_("start_task", {"id": live.pk})
    assert hidden not in work.due_soon and hidden not in work.overdue
    board_restore(board=archived, by_seat=owner)
    assert work_for_connection(connection=agent).best == hidden


def test_start_task_refuses_an_archived_boards_task_and_startnext_skips_it(
    ws_a, alice, owner, main, archived, agent
):
    hidden = task_create(
        workspace=ws_a, board=archived, title="Archived", priority=Priority.URGENT, by_user=alice
    ).task
    first = task_create(workspace=ws_a, board=main, title="First", by_user=alice).task
    second = task_create(workspace=ws_a, board=main, title="Second", by_user=alice).task
    board_archive(board=archived, by_seat=owner)
    error = refused("invalid_argument", task_claim, task_id=hidden.pk, connection=agent)
    assert "archived" in error.message and error.fix == fix("get_my_work")
    hidden.refresh_from_db()
    assert hidden.column == Column.TODO and hidden.epoch == 0
    done = complete(task_claim(task_id=first.pk, connection=agent), start_next_for=agent)
    assert done.next is not None and done.next.claim is not None
    assert done.next.claim.task.pk == second.pk


def test_an_approved_step_and_an_answer_on_an_archived_board_are_not_offered(
    ws_a, alice, owner, main, archived, agent
):
    approved = task_create(
        workspace=ws_a, board=archived, title="Ship", review_required=True, by_user=alice
    ).task
    item = complete(task_claim(task_id=approved.pk, connection=agent), next_step="deploy").inbox_item
    inbox_decide(item=item, user=alice, decision="accept")
    asked = task_create(workspace=ws_a, board=archived, title="Pick a database", by_user=alice).task
    claim = task_claim(task_id=asked.pk, connection=agent)
    question = ask(claim).question
    release(claim)  # the question stays; its answer would lead back to the task
    question_answer(question=question, user=alice, answer="Postgres")
    live = task_create(workspace=ws_a, board=main, title="Live", by_user=alice).task
    board_archive(board=archived, by_seat=owner)
    work = work_for_connection(connection=agent)
    assert work.approvals == [] and [q.pk for q in work.answers] == [question.pk]
    assert work.hint == next_("start_task", {"id": live.pk})
    board_restore(board=archived, by_seat=owner)
    assert work_for_connection(connection=agent).hint == next_("start_task", {"id": approved.pk})


def test_a_run_already_held_goes_on_when_its_board_is_archived(ws_a, alice, owner, main, archived, agent):
    task = task_create(workspace=ws_a, board=archived, title="Held", by_user=alice).task
    claim = task_claim(task_id=task.pk, connection=agent)
    board_archive(board=archived, by_seat=owner)
    again = task_claim(task_id=task.pk, connection=agent)
    assert again.resumed and again.lease_token == claim.lease_token
    complete(again)
    task.refresh_from_db()
    assert task.column == Column.DONE


def test_an_archived_boards_tasks_leave_search_and_list_tasks_but_its_state_reads(
    ws_a, alice, owner, main, archived
):
    hidden = task_create(workspace=ws_a, board=archived, title="Quarterly report", by_user=alice).task
    board_archive(board=archived, by_seat=owner)
    assert search_tasks(workspace=ws_a, query="Quarterly").tasks == []
    assert tasks_page(workspace=ws_a).tasks == []
    assert tasks_page(workspace=ws_a, boardId=archived.pk).tasks == [hidden]
    assert board_state(workspace=ws_a).payload()["board"] == {
        "id": main.pk,
        "name": main.name,
        "archived": False,
    }
    state = board_state(workspace=ws_a, board_id=archived.pk)
    assert state.payload()["board"]["archived"] is True and "(archived)" in state.summary()


def test_an_archived_board_takes_no_new_task_and_the_default_board_is_a_live_one(
    ws_a, alice, owner, main, archived, agent
):
    main = board_archive(board=main, by_seat=owner)
    refused("invalid_argument", task_create, workspace=ws_a, board=main, title="Late", by_user=alice)
    refused("invalid_argument", task_create, workspace=ws_a, board=main, title="Late", by_connection=agent)
    assert not main.tasks.exists()
    assert task_create(workspace=ws_a, title="Anywhere", by_user=alice).task.board == archived
    assert board_state(workspace=ws_a).board == archived


# Races, on PostgreSQL -------------------------------------------------------------------------

RACE = pytest.mark.django_db(transaction=True)


@RACE
def test_two_archives_at_once_leave_one_live_board(on_postgres, ws_a, owner):
    for round_no in range(10):
        pair = [board_create(workspace=ws_a, name=f"Round {round_no} {n}", by_seat=owner) for n in range(2)]
        Board.objects.filter(workspace=ws_a).exclude(pk__in=[b.pk for b in pair]).update(
            archived_at=clock.db_now()
        )
        outcomes = race(pair, lambda board: board_archive(board=board, by_seat=owner))
        assert codes(outcomes) == {"Board": 1, "conflict": 1}, outcomes
        assert Board.objects.filter(workspace=ws_a, archived_at=None).count() == 1


@RACE
def test_eight_creates_of_one_name_at_once_make_one_board(on_postgres, ws_a, owner):
    outcomes = race(
        list(range(8)), lambda n: board_create(workspace=ws_a, name="Ops" if n % 2 else "OPS", by_seat=owner)
    )
    assert codes(outcomes) == {"Board": 1, "conflict": 7}, outcomes
    assert Board.objects.filter(workspace=ws_a, name__iexact="ops").count() == 1


# Over MCP, as an agent sees it ------------------------------------------------------------------


@RACE
def test_over_mcp_an_archived_boards_task_is_neither_offered_nor_started(ws_a, alice, owner, main, archived):
    hidden = task_create(
        workspace=ws_a, board=archived, title="Archived work", priority=Priority.URGENT, by_user=alice
    ).task
    live = task_create(workspace=ws_a, board=main, title="Live work", by_user=alice).task
    board_archive(board=archived, by_seat=owner)
    token, _ = agent_token(alice, ws_a)
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with in_process() as client:
            mcp = MCP(client, token)
            seen["work"] = await mcp.call("get_my_work")
            seen["start"] = await mcp.call("start_task", {"id": hidden.pk})
            seen["search"] = await mcp.call("search", {"query": "Archived work"})
            seen["state"] = await mcp.call("get_board_state", {"boardId": archived.pk})

    asyncio.run(session())
    work = seen["work"]["structuredContent"]
    assert work["_next_action"] == f'Next: start_task {{"id": {live.pk}}}', text_of(seen["work"])
    start = seen["start"]
    assert start["isError"] and start["structuredContent"]["error"]["code"] == "invalid_argument"
    assert "archived" in text_of(start) and text_of(start).endswith("Fix: get_my_work {}")
    assert seen["search"]["structuredContent"]["results"] == []
    assert seen["state"]["structuredContent"]["board"] == {
        "id": archived.pk,
        "name": "Old project",
        "archived": True,
    }
