"""run_complete never loses work; the Inbox's four answers; approvals."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from boards.models import Approval, Column, InboxItem, Report, Run
from boards.selectors import inbox_for_user
from boards.services import inbox_decide, task_claim, task_update, work_for_connection
from tests.boards.helpers import complete, refused
from weft.errors import WeftError

pytestmark = pytest.mark.usefixtures("moved_clock")


def reviewed(make_task, agent, **report):
    task = make_task("Ship the importer", review_required=True)
    claim = task_claim(task_id=task.pk, connection=agent)
    result = complete(claim, **report)
    assert result.inbox_item is not None
    return task, claim, result.inbox_item


def test_missing_evidence_never_fails(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    result = complete(claim, outcome="Imported.", artifacts=None, claims=None, not_done="tests", unknowns=[])
    report = Report.objects.get()
    assert report.artifacts == [] and report.not_accepted == []
    assert report.claims == [] and report.not_done == ["tests"] and report.unknowns == []
    assert result.task.column == Column.DONE
    assert result.hint.marker == "Next"


def test_odd_evidence_is_kept_marked_and_sent_to_a_person(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    good = {"kind": "url", "uri": "https://example.com/pr/1", "httpStatus": 200}
    odd = [good, {"kind": "screenshot", "uri": "s3://bucket/a.png"}, "a loose string", {"no": "kind"}]
    result = complete(claim, outcome="Imported.", artifacts=odd, claims=["ok", 7])
    report = Report.objects.get()
    assert report.artifacts[0] == good
    assert [a["given"] for a in report.artifacts[1:]] == odd[1:]
    assert all(a["unverifiable"] for a in report.artifacts[1:])
    assert report.claims == ["ok", {"given": 7, "unverifiable": "a statement is a string"}]
    assert [n["field"] for n in report.not_accepted] == [
        "artifacts[1]",
        "artifacts[2]",
        "artifacts[3]",
        "claims[1]",
    ]
    assert result.inbox_item is not None and result.task.column == Column.DOING
    assert result.payload()["notAccepted"] == report.not_accepted
    assert result.hint.marker == "Wait"


def test_numbers_json_cannot_hold_are_kept_as_their_text(agent, task):
    """A JSON parser reads 1e400 as an infinity (and Python's reads NaN): such evidence is kept
    unverified as the text it prints as, and the report is stored, on every database."""
    claim = task_claim(task_id=task.pk, connection=agent)
    nan = float("nan")
    result = complete(
        claim, outcome="Imported.", artifacts=[{"kind": "url", "size": float("inf")}], claims=[[nan, 1]]
    )
    report = Report.objects.get()
    assert report.artifacts[0]["given"] == '{"kind": "url", "size": Infinity}'
    assert report.claims == [{"given": "[NaN, 1]", "unverifiable": "a statement is a string"}]
    assert result.payload()["report"]["claims"] == report.claims
    assert result.task.column == Column.DOING and result.hint.marker == "Wait"


def test_review_required_sends_the_task_to_the_inbox(agent, make_task):
    task, _claim, item = reviewed(make_task, agent, outcome="imported", next_step="deploy to staging")
    assert item.kind == "review" and item.state == "open"
    assert item.estimated_minutes == 5
    task.refresh_from_db()
    assert task.column == Column.DOING and task.assignee_connection_id is None
    assert Run.objects.get().state == "completed"


def test_a_failing_verification_check_sends_the_task_to_the_inbox(agent, alice, task):
    task_update(task=task, by_user=alice, checks=[{"kind": "artifact_kind", "value": "pr"}])
    claim = task_claim(task_id=task.pk, connection=agent)
    result = complete(claim, artifacts=[{"kind": "commit", "uri": "abc123"}])
    assert result.inbox_item is not None
    assert Report.objects.get().verification_passed is False


def test_accept_approves_the_next_step_for_72_hours_delivered_once(agent, alice, make_task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        task, _, item = reviewed(make_task, agent, next_step="deploy to staging")
        result = inbox_decide(item=item, user=alice, decision="accept")
        task.refresh_from_db()
        assert task.column == Column.DONE
        approval = result.approval
        assert approval is not None and approval.step == "deploy to staging"
        assert approval.expires_at - approval.created_at == timedelta(hours=72)
        traveller.shift(timedelta(hours=71))
        work = work_for_connection(connection=agent)
        assert [a.pk for a in work.approvals] == [approval.pk]
        assert work.hint.call is not None and work.hint.call.args == {"id": task.pk}
        assert work_for_connection(connection=agent).approvals == []
        claim = task_claim(task_id=task.pk, connection=agent)
        assert claim.context["approvedStep"]["step"] == "deploy to staging"
        complete(claim)
        assert Approval.objects.get().used_at is not None


def test_an_approved_step_is_exempt_from_the_attention_limit(agent, alice, make_task):
    task, _, item = reviewed(make_task, agent, next_step="tag the release")
    inbox_decide(item=item, user=alice, decision="accept")
    for _n in range(5):
        reviewed(make_task, agent)
    other = make_task("Another")
    refused("attention_queue_full", task_claim, task_id=other.pk, connection=agent)
    assert task_claim(task_id=task.pk, connection=agent).context["approvedStep"] is not None


def test_an_expired_approval_is_not_delivered(agent, alice, make_task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        task, _, item = reviewed(make_task, agent, next_step="deploy")
        inbox_decide(item=item, user=alice, decision="accept")
        traveller.shift(timedelta(hours=72))
        assert work_for_connection(connection=agent).approvals == []
        refused("invalid_argument", task_claim, task_id=task.pk, connection=agent)


def test_accept_without_a_next_step_approves_nothing(agent, alice, make_task):
    _, _, item = reviewed(make_task, agent)
    assert inbox_decide(item=item, user=alice, decision="accept").approval is None
    assert not Approval.objects.exists()


def test_rework_sends_the_note_to_the_next_claim(agent, agent2, alice, make_task):
    task, _, item = reviewed(make_task, agent, outcome="first try")
    inbox_decide(item=item, user=alice, decision="rework", note="Handle empty files too.")
    task.refresh_from_db()
    assert task.column == Column.TODO
    claim = task_claim(task_id=task.pk, connection=agent2)
    assert claim.context["reworkNotes"] == ["Handle empty files too."]
    assert "outcome: first try" in claim.context["lastRunNotes"]


def test_later_snoozes_24_hours_out_of_the_count_then_back(agent, alice, make_task, ws_a):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        _, _, item = reviewed(make_task, agent)
        result = inbox_decide(item=item, user=alice, decision="later")
        assert result.item.snoozed_until == timezone.now() + timedelta(hours=24)
        inbox = inbox_for_user(workspace=ws_a, user=alice)
        assert inbox.open == [] and [i.pk for i in inbox.snoozed] == [item.pk]
        assert inbox.attention.waiting == 0
        traveller.shift(timedelta(hours=24))
        inbox = inbox_for_user(workspace=ws_a, user=alice)
        assert [i.pk for i in inbox.open] == [item.pk] and inbox.attention.waiting == 1
        # A snoozed item can still be decided.
        inbox_decide(item=item, user=alice, decision="drop")


def test_drop_stops_the_work(agent, alice, make_task):
    task, _, item = reviewed(make_task, agent)
    inbox_decide(item=item, user=alice, decision="drop")
    task.refresh_from_db()
    assert task.column == Column.DROPPED


@pytest.mark.parametrize("second", ["accept", "rework", "later", "drop"])
def test_a_decided_item_cannot_be_decided_again(agent, alice, make_task, second):
    _, _, item = reviewed(make_task, agent)
    inbox_decide(item=item, user=alice, decision="accept")
    error = refused("already_decided", inbox_decide, item=item, user=alice, decision=second)
    assert error.fix.marker == "Wait"
    assert InboxItem.objects.get().decision == "accept"


def test_bad_decisions_are_invalid(agent, alice, make_task):
    _, _, item = reviewed(make_task, agent)
    with pytest.raises(WeftError) as exc:
        inbox_decide(item=item, user=alice, decision="maybe")
    assert exc.value.details["field"] == "decision"


def test_dropping_the_last_question_puts_the_run_back_to_work(agent, alice, task):
    from tests.boards.helpers import ask, beat

    claim = task_claim(task_id=task.pk, connection=agent)
    ask(claim)
    assert Run.objects.get().state == "waiting_input"
    item = InboxItem.objects.get(kind="question")
    inbox_decide(item=item, user=alice, decision="drop")
    run = Run.objects.get()
    assert run.state == "active"
    assert beat(claim).run.state == "active"
    work = work_for_connection(connection=agent)
    assert work.payload()["waitingOnPeople"] == []
