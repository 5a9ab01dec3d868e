"""Every result type and every error code keeps the five hint rules in text, JSON and CLI form."""

import json
from dataclasses import dataclass
from typing import Any

import pytest

from accounts.models import Usage
from boards import selectors, services
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


@dataclass
class Seeded:
    """The fixtures a scenario plays with."""

    agent: Any
    agent2: Any
    agent_b: Any
    alice: Any
    ws_a: Any
    ws_b: Any
    make_task: Any

    def work(self) -> Any:
        return services.work_for_connection(connection=self.agent)


def board_writes(f: Seeded) -> list[Any]:
    empty = f.work()  # empty board: Done.
    todo = f.make_task("Write the changelog", description="For 0.2")
    backlog = f.make_task("Later idea", column=Column.BACKLOG)
    trashed = task_trash(task=f.make_task("Trash me"), by_user=f.alice)
    return [
        empty,
        task_update(task=todo, by_user=f.alice, priority=2),
        task_create(workspace=f.ws_a, title="Created", by_user=f.alice),
        task_move(task=backlog, column=Column.BACKLOG, by_user=f.alice),
        trashed,
        task_restore(task=trashed.task, by_user=f.alice),
        f.work(),  # the best next task: Next: start_task
        selectors.task_detail(workspace=f.ws_a, task_id=backlog.pk),  # startable
        selectors.search_tasks(workspace=f.ws_a, query="changelog"),
        selectors.search_tasks(workspace=f.ws_a, query="nothing like this"),
        selectors.board_state(workspace=f.ws_a),
    ]


def claim_and_heartbeat(f: Seeded) -> list[Any]:
    todo = f.make_task("Write the changelog")
    claim = task_claim(task_id=todo.pk, connection=f.agent)
    found = [claim, f.work(), beat(claim)]
    claim = task_claim(task_id=todo.pk, connection=f.agent)  # resumed
    return [
        *found,
        claim,
        catch(task_claim, task_id=todo.pk, connection=f.agent2),  # already_claimed
        catch(beat, type(claim)(**{**claim.__dict__, "lease_token": "wrong"})),  # lease_lost
        catch(task_claim, task_id=todo.pk, connection=f.agent_b),  # not_found
        catch(ask, claim, "x" * 501),  # invalid_argument
        release(claim),
    ]


def question_and_answer(f: Seeded) -> list[Any]:
    todo = f.make_task("Write the changelog")
    claim = task_claim(task_id=todo.pk, connection=f.agent)
    asked = ask(claim, "Which changelog format?", ["Keep a Changelog", "Plain"])
    found = [asked, f.work()]  # waiting on a question
    found.append(question_answer(question=asked.question, user=f.alice, answer="Plain"))
    found.append(f.work())  # the answer delivered
    found.append(selectors.task_detail(workspace=f.ws_a, task_id=todo.pk))  # held
    found.append(complete(claim, next_step="publish it"))
    found.append(selectors.task_detail(workspace=f.ws_a, task_id=todo.pk))  # done
    return found


def review_accepted(f: Seeded) -> list[Any]:
    reviewed = f.make_task("Review me", review_required=True)
    review = complete(task_claim(task_id=reviewed.pk, connection=f.agent), next_step="announce it")
    found = [review, selectors.task_detail(workspace=f.ws_a, task_id=reviewed.pk), f.work()]
    found.append(selectors.inbox_for_user(workspace=f.ws_a, user=f.alice))
    found.append(inbox_decide(item=review.inbox_item, user=f.alice, decision="accept"))
    found.append(f.work())  # the approval delivered
    found.append(catch(inbox_decide, item=review.inbox_item, user=f.alice, decision="drop"))
    approved = task_claim(task_id=reviewed.pk, connection=f.agent)
    return [*found, approved, release(approved)]


def review_decisions(f: Seeded) -> list[Any]:
    found: list[Any] = []
    for decision in ("rework", "later", "drop"):
        t = f.make_task(f"Decide {decision}", review_required=True)
        item = complete(task_claim(task_id=t.pk, connection=f.agent)).inbox_item
        found.append(inbox_decide(item=item, user=f.alice, decision=decision, note="because"))
    found.append(selectors.inbox_for_user(workspace=f.ws_a, user=f.alice))  # only the snoozed one
    found.append(selectors.inbox_for_user(workspace=f.ws_b, user=f.alice))  # empty
    return found


def attention_full(f: Seeded) -> list[Any]:
    for n in range(5):
        t = f.make_task(f"Fill {n}", review_required=True)
        complete(task_claim(task_id=t.pk, connection=f.agent2))
    return [
        f.work(),  # Wait: the people are saturated
        selectors.attention_status(workspace=f.ws_a),
        catch(task_claim, task_id=f.make_task("Blocked").pk, connection=f.agent),
    ]


def refusals(f: Seeded) -> list[Any]:
    todo = f.make_task("Write the changelog")
    found: list[Any] = [selectors.attention_status(workspace=f.ws_a)]
    found.append(catch(selectors.search_tasks, workspace=f.ws_b, query=" "))
    f.ws_b.plan.monthly_task_cap = 0
    found.append(catch(task_create, workspace=f.ws_b, title="Over the cap", by_user=f.alice))
    f.ws_a.is_suspended = True
    f.agent.workspace = f.ws_a
    found.append(catch(task_claim, task_id=todo.pk, connection=f.agent))
    return found


# scenario → what it must produce: result types, error codes, hint markers.
SCENARIOS: dict[str, tuple[Any, set[type], set[str], set[str]]] = {
    "board writes": (
        board_writes,
        {WorkResult, TaskResult, TaskDetailResult, SearchResult, BoardStateResult},
        set(),
        {"Next", "Done"},
    ),
    "claim and heartbeat": (
        claim_and_heartbeat,
        {ClaimResult, WorkResult, RunResult},
        {"already_claimed", "lease_lost", "not_found", "invalid_argument"},
        {"Next", "Wait", "Fix"},
    ),
    "question and answer": (
        question_and_answer,
        {QuestionResult, WorkResult, InboxResult, TaskDetailResult, CompleteResult},
        set(),
        {"Next", "Wait", "Done"},
    ),
    "review accepted": (
        review_accepted,
        {CompleteResult, TaskDetailResult, WorkResult, InboxListResult, InboxResult, ClaimResult, RunResult},
        {"already_decided"},
        {"Next", "Wait", "Done"},
    ),
    "review decisions": (review_decisions, {InboxResult, InboxListResult}, set(), {"Wait", "Done"}),
    "attention full": (attention_full, {WorkResult, AttentionStatus}, {"attention_queue_full"}, {"Wait"}),
    "refusals": (
        refusals,
        {AttentionStatus},
        {"invalid_argument", "plan_limit_reached", "workspace_suspended"},
        {"Done", "Wait", "Fix"},
    ),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_result_and_error_keeps_the_rules(name, agent, agent2, agent_b, alice, ws_a, ws_b, make_task):
    play, result_types, error_codes, markers = SCENARIOS[name]
    found = play(
        Seeded(
            agent=agent,
            agent2=agent2,
            agent_b=agent_b,
            alice=alice,
            ws_a=ws_a,
            ws_b=ws_b,
            make_task=make_task,
        )
    )
    results = [r for r in found if not isinstance(r, WeftError)]
    errors = [e for e in found if isinstance(e, WeftError)]

    assert {type(r) for r in results} == result_types
    assert {e.code for e in errors} == error_codes
    assert {r.hint.marker for r in results} | {e.fix.marker for e in errors} == markers
    for result in results:
        check_result(result)
    for error in errors:
        check_error(error)
    # Every task made on the way was metered once, and the refused one over the cap not at all.
    created = Task.objects.filter(workspace=ws_a).count()
    assert Usage.objects.get(workspace=ws_a, kind=Usage.TASKS).count == created
    assert not Usage.objects.filter(workspace=ws_b, kind=Usage.TASKS, count__gt=0).exists()


def test_the_scenarios_reach_every_result_error_and_marker():
    assert set().union(*(s[1] for s in SCENARIOS.values())) == RESULT_TYPES
    assert set().union(*(s[2] for s in SCENARIOS.values())) == ERROR_CODES
    assert set().union(*(s[3] for s in SCENARIOS.values())) == {"Next", "Wait", "Done", "Fix"}
