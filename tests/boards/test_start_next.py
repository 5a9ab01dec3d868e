"""complete_task with startNext: the report recorded, then the claim get_my_work would lead to, or
the refusal start_task would have given, in one call."""

from __future__ import annotations

import pytest

from accounts.models import Usage
from accounts.services import usage_consume
from boards.models import Column, Question, Report, Run
from boards.services import question_answer, task_claim, work_for_connection
from tests.boards.helpers import ask, codes, complete, race
from tests.boards.test_attention_limits import fill

pytestmark = pytest.mark.usefixtures("moved_clock")


def finish(agent, make_task, **report):
    """A claim of a fresh task by `agent`, completed with startNext."""
    mine = make_task("Mine")
    claim = task_claim(task_id=mine.pk, connection=agent)
    return complete(claim, start_next_for=agent, **report)


def test_it_records_the_report_and_starts_the_best_next_task(agent, make_task):
    make_task("Low", priority=0)
    urgent = make_task("Urgent", priority=3)
    mine = make_task("Mine", priority=3)
    claim = task_claim(task_id=mine.pk, connection=agent)
    done = complete(claim, outcome="Shipped.")
    assert done.next is None and "startNext" in done.summary()
    other = task_claim(task_id=make_task("Second", priority=3).pk, connection=agent)
    result = complete(other, outcome="Shipped too.", start_next_for=agent)
    assert Report.objects.filter(run=other.run).exists() and result.task.column == Column.DONE
    started = result.next.claim
    assert started is not None and started.task.pk == urgent.pk and not started.resumed
    assert Run.objects.get(pk=started.run.pk).connection_id == agent.pk
    payload = result.payload()["next"]
    assert payload["started"] is True and payload["task"]["id"] == urgent.pk
    assert payload["leaseToken"] == started.lease_token
    assert result.hint == started.hint and result.hint.call.tool == "report_progress"
    assert f"Started task {urgent.pk}" in result.summary()


def test_with_no_work_left_it_says_so_and_is_done(agent, make_task):
    result = finish(agent, make_task)
    assert result.next.claim is None and result.next.refusal is None
    assert result.payload()["next"] == {"started": False, "error": None}
    assert result.hint.marker == "Done" and result.summary().splitlines()[-1] == "No task to start next."


def test_with_no_work_it_waits_as_get_my_work_would(agent, make_task):
    task = make_task("Reviewed", review_required=True)
    result = complete(task_claim(task_id=task.pk, connection=agent), start_next_for=agent)
    assert result.inbox_item is not None and result.next.claim is None
    assert result.hint == work_for_connection(connection=agent).hint
    assert result.hint.marker == "Wait"


def test_a_full_attention_queue_refuses_the_claim_not_the_report(agent, make_task):
    fill(make_task, agent, 4)
    make_task("Waiting")
    reviewed = make_task("Fifth review", review_required=True)
    result = complete(task_claim(task_id=reviewed.pk, connection=agent), start_next_for=agent)
    assert result.inbox_item is not None
    refusal = result.next.refusal
    assert refusal is not None and refusal.code == "attention_queue_full"
    assert result.payload()["next"]["error"]["code"] == "attention_queue_full"
    assert result.hint == refusal.fix and result.hint.marker == "Wait"
    assert "Next task not started: attention_queue_full" in result.summary()


def test_it_is_metered_as_the_start_task_it_replaces(agent, make_task, ws_a):
    make_task("Next")
    mine = make_task("Mine")
    claim = task_claim(task_id=mine.pk, connection=agent)
    cap = ws_a.plan.cap_for(Usage.AGENT_CALLS)
    for _ in range(cap):
        usage_consume(workspace=ws_a, kind=Usage.AGENT_CALLS)
    result = complete(claim, start_next_for=agent)
    assert result.task.column == Column.DONE
    assert result.next.refusal is not None and result.next.refusal.code == "plan_limit_reached"
    assert result.hint.marker == "Wait"


def test_it_metered_one_call_for_the_claim(agent, make_task, ws_a):
    make_task("Next")
    finish(agent, make_task)
    assert Usage.objects.get(workspace=ws_a, kind=Usage.AGENT_CALLS).count == 1


def test_it_resumes_the_callers_own_active_run_first(agent, make_task):
    make_task("Urgent", priority=3)
    held = task_claim(task_id=make_task("Held").pk, connection=agent)
    result = finish(agent, make_task)
    assert result.next.claim.resumed and result.next.claim.run.pk == held.run.pk
    assert result.next.claim.lease_token == held.lease_token


def test_it_starts_the_task_an_answer_waits_on_and_delivers_it(agent, alice, make_task):
    make_task("Urgent", priority=3)
    asked = task_claim(task_id=make_task("Asks").pk, connection=agent)
    ask(asked)
    from tests.boards.helpers import release

    release(asked)
    question_answer(question=Question.objects.get(), user=alice, answer="Postgres")
    result = finish(agent, make_task)
    claim = result.next.claim
    assert claim.task.pk == asked.task.pk
    assert [a["answer"] for a in claim.context["answers"]] == ["Postgres"]
    assert Question.objects.get().delivered_at is not None


def test_a_refusal_fix_is_offered_as_the_next_call(agent, make_task, monkeypatch):
    from boards.services import next_task
    from weft.errors import invalid_argument
    from weft.hints import fix

    make_task("Next")

    def moved(**kwargs):
        raise invalid_argument("id", "moved meanwhile", fix_hint=fix("get_task", {"id": 7}))

    monkeypatch.setattr(next_task, "task_claim", moved)
    result = finish(agent, make_task)
    assert result.next.refusal.code == "invalid_argument"
    assert result.hint.marker == "Next" and result.hint.call == result.next.refusal.fix.call
    assert result.hint.call.args == {"id": 7}


def test_only_a_start_task_next_is_claimed():
    from boards.services.next_task import _hinted_start
    from weft.hints import DONE, next_, wait

    assert _hinted_start(next_("start_task", {"id": 3})) == 3
    assert _hinted_start(next_("get_task", {"id": 3})) is None
    assert _hinted_start(wait("a person answers", "start_task", {"id": 3})) is None
    assert _hinted_start(DONE) is None


def test_a_full_queue_still_resumes_the_callers_own_run(agent, make_task):
    held = task_claim(task_id=make_task("Held").pk, connection=agent)
    mine = task_claim(task_id=make_task("Mine").pk, connection=agent)
    fill(make_task, agent, 5)
    result = complete(mine, start_next_for=agent)
    assert result.next.refusal is None, result.next.refusal
    assert result.next.claim.resumed and result.next.claim.run.pk == held.run.pk


@pytest.mark.django_db(transaction=True)
def test_agents_finishing_at_once_start_different_tasks(on_postgres, pro, alice, agent, agent2):
    from boards.services import task_create

    def make(title):
        return task_create(workspace=pro, title=title, by_user=alice).task

    claims = {a.pk: task_claim(task_id=make(f"Mine {a.pk}").pk, connection=a) for a in (agent, agent2)}
    for n in range(4):
        make(f"Queued {n}")
    outcomes = race([agent, agent2], lambda a: complete(claims[a.pk], start_next_for=a))
    assert codes(outcomes) == {"CompleteResult": 2}, outcomes
    started = [o.next.claim for o in outcomes]
    assert all(c is not None for c in started), [o.next.refusal for o in outcomes]
    assert len({c.task.pk for c in started}) == 2
