"""Every result type and every error code keeps the five hint rules in text, JSON and CLI form."""

import json
from typing import Any

import pytest

from accounts.models import Usage
from boards import selectors
from boards.models import Column, Task
from boards.results import (
    AttentionStatus,
    BoardStateResult,
    ClaimResult,
    CompleteResult,
    InboxListResult,
    InboxResult,
    QuestionResult,
    RunResult,
    SearchResult,
    TaskDetailResult,
    TaskResult,
    WorkResult,
)
from boards.services import (
    inbox_decide,
    question_answer,
    task_claim,
    task_create,
    task_move,
    task_restore,
    task_trash,
    task_update,
)
from tests.boards.helpers import ask, beat, complete, release
from weft.errors import WeftError
from weft.hints import problems, render

ERROR_CODES = {
    "not_found",
    "invalid_argument",
    "already_claimed",
    "lease_lost",
    "attention_queue_full",
    "plan_limit_reached",
    "workspace_suspended",
    "already_decided",
}
RESULT_TYPES = {
    TaskResult,
    ClaimResult,
    RunResult,
    QuestionResult,
    CompleteResult,
    InboxResult,
    AttentionStatus,
    WorkResult,
    BoardStateResult,
    TaskDetailResult,
    SearchResult,
    InboxListResult,
}


def check_result(result):
    text, payload = render(result)
    assert problems(text, payload) == [], text
    json.dumps(payload)
    # The CLI's text mirrors MCP's; its --json output is the same JSON as above.
    cli_text, _ = render(result, cli=True)
    assert problems(cli_text, cli=True) == [], cli_text
    assert cli_text.splitlines()[-1].split(":")[0] == text.splitlines()[-1].split(":")[0]


def check_error(error):
    assert problems(error.as_text(), error.as_json()) == [], error.as_text()
    assert problems(error.as_text(cli=True), cli=True) == [], error.as_text(cli=True)
    json.dumps(error.as_json())
    assert error.as_text().splitlines()[0].startswith("Error: ")


def catch(fn, *args, **kwargs):
    with pytest.raises(WeftError) as exc:
        fn(*args, **kwargs)
    return exc.value


def test_every_result_and_error_keeps_the_rules(agent, agent2, agent_b, alice, ws_a, ws_b, make_task):
    results: list[Any] = []
    errors = []
    w = lambda: selectors.work_for_connection(connection=agent)  # noqa: E731
    results.append(w())  # empty board: Done.
    todo = make_task("Write the changelog", description="For 0.2")
    backlog = make_task("Later idea", column=Column.BACKLOG)
    results += [task_update(task=todo, by_user=alice, priority=2)]
    results.append(task_create(workspace=ws_a, title="Created", by_user=alice))
    results.append(task_move(task=backlog, column=Column.BACKLOG, by_user=alice))
    trashed = task_trash(task=make_task("Trash me"), by_user=alice)
    results += [trashed, task_restore(task=trashed.task, by_user=alice)]
    results.append(w())  # best next task
    claim = task_claim(task_id=todo.pk, connection=agent)
    results += [claim, w(), beat(claim)]
    results.append(task_claim(task_id=todo.pk, connection=agent))  # resumed
    claim = results[-1]
    errors.append(catch(task_claim, task_id=todo.pk, connection=agent2))  # already_claimed
    errors.append(catch(beat, type(claim)(**{**claim.__dict__, "lease_token": "wrong"})))  # lease_lost
    errors.append(catch(task_claim, task_id=todo.pk, connection=agent_b))  # not_found
    errors.append(catch(ask, claim, "x" * 501))  # invalid_argument
    asked = ask(claim, "Which changelog format?", ["Keep a Changelog", "Plain"])
    results += [asked, w()]  # waiting on a question
    results.append(question_answer(question=asked.question, user=alice, answer="Plain"))
    results.append(w())  # answer delivered
    results.append(selectors.task_detail(workspace=ws_a, task_id=todo.pk))  # held
    results.append(complete(claim, next_step="publish it"))
    reviewed = make_task("Review me", review_required=True)
    review_claim = task_claim(task_id=reviewed.pk, connection=agent)
    review = complete(review_claim, next_step="announce it")
    results += [review, selectors.task_detail(workspace=ws_a, task_id=reviewed.pk), w()]
    results.append(selectors.inbox_for_user(workspace=ws_a, user=alice))
    accepted = inbox_decide(item=review.inbox_item, user=alice, decision="accept")
    results += [accepted, w()]  # approval delivered
    errors.append(catch(inbox_decide, item=review.inbox_item, user=alice, decision="drop"))
    approved = task_claim(task_id=reviewed.pk, connection=agent)
    results += [approved, release(approved)]
    for decision in ("rework", "later", "drop"):
        t = make_task(f"Decide {decision}", review_required=True)
        item = complete(task_claim(task_id=t.pk, connection=agent)).inbox_item
        results.append(inbox_decide(item=item, user=alice, decision=decision, note="because"))
    results.append(selectors.inbox_for_user(workspace=ws_a, user=alice))  # only snoozed left... or open
    results += [selectors.board_state(workspace=ws_a), selectors.attention_status(workspace=ws_a)]
    results += [
        selectors.search_tasks(workspace=ws_a, query="changelog"),
        selectors.search_tasks(workspace=ws_a, query="nothing like this"),
        selectors.task_detail(workspace=ws_a, task_id=todo.pk),  # done
        selectors.task_detail(workspace=ws_a, task_id=backlog.pk),  # startable
        selectors.inbox_for_user(workspace=ws_b, user=alice),  # empty
    ]
    for n in range(5):
        t = make_task(f"Fill {n}", review_required=True)
        complete(task_claim(task_id=t.pk, connection=agent2))
    results += [w(), selectors.attention_status(workspace=ws_a)]  # full
    errors.append(catch(task_claim, task_id=make_task("Blocked").pk, connection=agent))
    ws_b.plan.monthly_task_cap = 0
    errors.append(catch(task_create, workspace=ws_b, title="Over the cap", by_user=alice))
    ws_a.is_suspended = True
    agent.workspace = ws_a
    errors.append(catch(task_claim, task_id=todo.pk, connection=agent))
    errors.append(catch(selectors.search_tasks, workspace=ws_b, query=" "))

    assert {type(r) for r in results} == RESULT_TYPES
    assert {e.code for e in errors} == ERROR_CODES
    markers = {r.hint.marker for r in results} | {e.fix.marker for e in errors}
    assert markers == {"Next", "Wait", "Done", "Fix"}
    for result in results:
        check_result(result)
    for error in errors:
        check_error(error)
    # Every task made on the way was metered once, and the refused one over the cap not at all.
    created = Task.objects.filter(workspace=ws_a).count()
    assert Usage.objects.get(workspace=ws_a, kind=Usage.TASKS).count == created
    assert not Usage.objects.filter(workspace=ws_b, kind=Usage.TASKS, count__gt=0).exists()
