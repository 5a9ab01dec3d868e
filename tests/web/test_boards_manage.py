"""The Boards page (boards/views_boards.py): owners and admins create, rename, archive and restore
boards with forms; a member sees the boards without the forms and is refused; another workspace's
board id is a 404 that changes nothing; the board page says when its board is archived."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from boards import limits
from boards.models import Board
from boards.services import board_default, task_create
from weft.events import Event

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def as_alice(alice) -> Client:
    return signed_in(alice)


@pytest.fixture
def main(ws_a) -> Board:
    return board_default(workspace=ws_a)


def url(name, ws, **kwargs):
    return reverse(f"boards:{name}", kwargs={"slug": ws.slug, **kwargs})


def said(response) -> list[str]:
    """What the request added to the messages (those of earlier requests, never shown, come first)."""
    return [str(m) for m in get_messages(response.wsgi_request)][-1:]


def test_it_creates_a_board_and_opens_it(as_alice, ws_a, main):
    response = as_alice.post(url("board_create", ws_a), {"name": "Ops"})
    ops = Board.objects.get(workspace=ws_a, name="Ops")
    assert response.status_code == 302 and response["Location"] == url("board", ws_a) + f"?board={ops.pk}"
    assert said(response) == ["Created the board Ops."]
    assert Event.objects.filter(type="board.created", entity_id=str(ops.pk)).exists()
    page = as_alice.get(response["Location"]).content.decode()
    assert "<h1>Ops</h1>" in page and 'id="board-pick"' in page


def test_a_refused_name_keeps_what_was_typed_with_the_reason(as_alice, ws_a, main):
    long_name = "x" * (limits.BOARD_NAME + 1)
    response = as_alice.post(url("board_create", ws_a), {"name": long_name})
    assert response["Location"] == url("boards", ws_a)
    assert said(response) == [f"Name: at most {limits.BOARD_NAME} characters (got {limits.BOARD_NAME + 1})"]
    page = as_alice.get(url("boards", ws_a)).content.decode()
    assert f'value="{long_name}"' in page
    response = as_alice.post(url("board_create", ws_a), {"name": "Ops\x00"})
    assert said(response) == ["Name: must not contain NUL (\\u0000) characters"]
    assert list(Board.objects.filter(workspace=ws_a)) == [main]
    at_limit = "y" * limits.BOARD_NAME
    as_alice.post(url("board_create", ws_a), {"name": at_limit})
    assert Board.objects.filter(workspace=ws_a, name=at_limit).exists()


def test_it_renames_archives_with_undo_and_restores(as_alice, ws_a, main):
    as_alice.post(url("board_create", ws_a), {"name": "Ops"})
    ops = Board.objects.get(workspace=ws_a, name="Ops")
    response = as_alice.post(url("board_rename", ws_a, board_id=ops.pk), {"name": "Operations"})
    assert said(response) == ["Renamed Ops to Operations."]
    response = as_alice.post(url("board_archive", ws_a, board_id=ops.pk))
    assert said(response) == ["Archived Operations: agents are no longer offered its tasks"]
    ops.refresh_from_db()
    assert ops.name == "Operations" and ops.archived_at is not None
    page = as_alice.get(url("boards", ws_a)).content.decode()
    live, archived = page.split('id="live-boards-title"')[1].split('id="archived-boards-title"')
    assert main.name in live and "Operations" not in live
    assert "Operations" in archived and url("board_restore", ws_a, board_id=ops.pk) in archived
    response = as_alice.post(url("board_restore", ws_a, board_id=ops.pk))
    assert said(response) == ["Restored Operations: agents are offered its tasks again."]
    assert Board.objects.get(pk=ops.pk).archived_at is None
    types = list(Event.objects.filter(entity_type="board").values_list("type", flat=True).order_by("pk"))
    assert types == ["board.created", "board.renamed", "board.archived", "board.restored"]


def test_the_last_board_is_not_archived(as_alice, ws_a, main):
    response = as_alice.post(url("board_archive", ws_a, board_id=main.pk))
    assert said(response) == [
        f"“{main.name}” is the workspace's last live board; create another before archiving it"
    ]
    assert Board.objects.get(pk=main.pk).archived_at is None
    assert "The last board stays" in as_alice.get(url("boards", ws_a)).content.decode()


def test_an_archived_board_reads_with_a_restore_button_and_no_new_task_form(as_alice, alice, ws_a, main):
    as_alice.post(url("board_create", ws_a), {"name": "Ops"})
    ops = Board.objects.get(workspace=ws_a, name="Ops")
    task_create(workspace=ws_a, board=ops, title="Quarterly report", by_user=alice)
    as_alice.post(url("board_archive", ws_a, board_id=ops.pk))
    page = as_alice.get(url("board", ws_a) + f"?board={ops.pk}").content.decode()
    assert "This board is archived" in page and "Quarterly report" in page
    assert f'<option value="{ops.pk}" selected>Ops (archived)</option>' in page
    assert url("board_restore", ws_a, board_id=ops.pk) in page
    assert url("task_create", ws_a) not in page
    default = as_alice.get(url("board", ws_a)).content.decode()
    assert f"<h1>{main.name}</h1>" in default and "This board is archived" not in default


def test_a_member_sees_the_boards_without_forms_and_is_refused(bob, ws_a, main):
    as_bob = signed_in(bob)
    page = as_bob.get(url("boards", ws_a)).content.decode()
    assert main.name in page and "Only owners and admins" in page
    assert url("board_create", ws_a) not in page and url("board_archive", ws_a, board_id=main.pk) not in page
    before = Event.objects.count()
    response = as_bob.post(url("board_create", ws_a), {"name": "Mine"})
    assert said(response) == ["Only owners and admins can create, rename, archive or restore boards."]
    response = as_bob.post(url("board_rename", ws_a, board_id=main.pk), {"name": "Mine"})
    assert said(response) == ["Only owners and admins can create, rename, archive or restore boards."]
    assert [b.name for b in Board.objects.filter(workspace=ws_a)] == [main.name]
    assert Event.objects.count() == before


def test_another_workspaces_board_is_a_404_and_changes_nothing(carol, ws_b, ws_a, main):
    as_carol = signed_in(carol)
    mine = board_default(workspace=ws_b)
    as_carol.post(url("board_create", ws_b), {"name": "Spare"})  # carol could archive her own
    for name, data in (("board_rename", {"name": "Taken"}), ("board_archive", {}), ("board_restore", {})):
        assert as_carol.post(url(name, ws_b, board_id=main.pk), data).status_code == 404
        assert as_carol.post(url(name, ws_a, board_id=main.pk), data).status_code == 404
    assert as_carol.get(url("board", ws_b) + f"?board={main.pk}").status_code == 404
    main.refresh_from_db()
    assert main.name == "Board" and main.archived_at is None
    assert Board.objects.get(pk=mine.pk).archived_at is None
