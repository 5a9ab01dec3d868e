"""Board access helpers at the points the first mutation run found untested: what a refusal says,
the ids that can exist, and the rows fetched with the object."""

from __future__ import annotations

import pytest

from accounts.models import AgentConnection
from boards.access import access_board, access_inbox_item, access_question, access_task
from boards.models import Task
from boards.services import board_default
from tests.web.factories import make_question, make_review
from weft.errors import WeftError


@pytest.fixture
def a_connection(ws_a, alice) -> AgentConnection:
    return AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")


@pytest.mark.parametrize(
    ("helper", "kind"),
    [
        (access_task, "task"),
        (access_board, "board"),
        (access_inbox_item, "inbox item"),
        (access_question, "question"),
    ],
)
@pytest.mark.parametrize("ident", [424242, "abc", 0])
def test_a_refusal_names_the_kind_and_the_id_asked_for(ws_a, helper, kind, ident):
    with pytest.raises(WeftError) as refused:
        helper(ws_a, ident)
    assert refused.value.code == "not_found"
    assert refused.value.message == f"{kind} {ident} does not exist in this workspace"
    assert refused.value.details == {"kind": kind, "id": str(ident)}


def test_id_1_exists_and_a_padded_string_id_finds_it(ws_a):
    task = Task.objects.create(pk=1, workspace=ws_a, board=board_default(workspace=ws_a), title="First")
    assert access_task(ws_a, 1) == task
    assert access_task(ws_a.pk, " 1 ") == task


def test_an_inbox_item_comes_with_its_task_run_and_report_in_one_query(
    ws_a, a_connection, django_assert_num_queries
):
    review = make_review(ws_a, a_connection)
    with django_assert_num_queries(1):
        item = access_inbox_item(ws_a, review.pk)
        report = item.report
        assert report is not None
        assert (item.task.title, item.run.epoch, report.pk) == ("Write the changelog", 1, review.report_id)


def test_a_question_item_comes_with_its_question_and_a_question_with_its_task(
    ws_a, a_connection, django_assert_num_queries
):
    asked = make_question(ws_a, a_connection)
    with django_assert_num_queries(1):
        question = access_inbox_item(ws_a, asked.pk).question
        assert question is not None and question.text == "Postgres or SQLite?"
    with django_assert_num_queries(1):
        assert access_question(ws_a, asked.question_id).task.title == "Pick a database"


@pytest.mark.parametrize("ident", [0, "0", -1, "abc", None])
def test_an_id_that_cannot_exist_is_refused_without_a_query(ws_a, ident, django_assert_num_queries):
    with django_assert_num_queries(0), pytest.raises(WeftError):
        access_task(ws_a, ident)
