"""search_tasks: PostgreSQL full-text (stemmed, title ranked above description); a plain match on SQLite."""

from __future__ import annotations

import pytest

from boards.selectors import search_tasks
from boards.services import task_create, task_trash
from weft.errors import WeftError


@pytest.fixture
def tasks(ws_a, alice):
    def make(title: str, description: str = ""):
        return task_create(workspace=ws_a, title=title, description=description, by_user=alice).task

    return {
        "title": make("Fix the login redirect"),
        "body": make("Tidy the settings page", "The login button is misaligned"),
        "other": make("Write the changelog"),
    }


def test_it_finds_by_title_and_description_and_never_the_trash(ws_a, alice, tasks):
    task_trash(task=task_create(workspace=ws_a, title="login leftovers", by_user=alice).task, by_user=alice)
    found = search_tasks(workspace=ws_a, query="login")
    assert [t.pk for t in found.tasks] == [tasks["title"].pk, tasks["body"].pk]
    assert found.hint.call is not None and found.hint.call.args == {"id": tasks["title"].pk}


def test_it_stays_in_the_workspace(ws_a, ws_b, tasks):
    assert search_tasks(workspace=ws_b, query="login").tasks == []


def test_it_refuses_an_empty_query(ws_a):
    with pytest.raises(WeftError) as exc:
        search_tasks(workspace=ws_a, query="  ")
    assert exc.value.code == "invalid_argument"


def test_it_matches_word_forms_on_postgres(on_postgres, ws_a, tasks):
    # "logins" and "redirects" share stems with the title's words; a substring match would miss them.
    found = search_tasks(workspace=ws_a, query="logins redirects")
    assert [t.pk for t in found.tasks] == [tasks["title"].pk]
    ranked = search_tasks(workspace=ws_a, query="login")
    assert ranked.tasks[0].pk == tasks["title"].pk
