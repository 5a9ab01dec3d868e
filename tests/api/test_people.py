"""A person's Inbox over REST: list, decide (accept / rework / later / drop) and answer, with a
personal access token made with "May decide my Inbox" — and refused to every other credential."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import PersonalAccessToken, Seat, User, Workspace
from boards.models import Column, InboxItem, Question, Task
from tests.api.conftest import Api, person_token, signed_in
from weft.models import Event

pytestmark = pytest.mark.django_db


def _review(api: Api, title: str = "Review me") -> dict:
    """A task the agent completed into the Inbox: its Inbox row as the person reads it."""
    task = api.post("tasks", {"title": title, "reviewRequired": True}).body["task"]
    run = api.post(f"tasks/{task['id']}/start").body
    done = api.post(f"runs/{run['runId']}/complete", {"leaseToken": run["leaseToken"], "outcome": "Done."})
    assert done.status == 200, done.body
    return {"task": task, "item": InboxItem.objects.get(task_id=task["id"])}


def _question(api: Api, options: list[str] | None = None) -> tuple[dict, Question]:
    task = api.post("tasks", {"title": "Ask me"}).body["task"]
    run = api.post(f"tasks/{task['id']}/start").body
    body = {"leaseToken": run["leaseToken"], "question": "Which region?"}
    if options:
        body["options"] = options
    assert api.post(f"runs/{run['runId']}/ask", body).status == 200
    return run, Question.objects.get(task_id=task["id"])


def test_a_person_accepts_a_review(api: Api, person: Api, alice: User) -> None:
    review = _review(api)
    listed = person.get("inbox").body
    assert [row["id"] for row in listed["open"]] == [review["item"].pk]
    item_id = review["item"].pk
    assert listed["_next_action"] == f'Next: POST /api/v1/inbox/{item_id}/decide {{"decision": "accept"}}'
    assert listed["_or_action"] == f'Or: POST /api/v1/inbox/{item_id}/decide {{"decision": "later"}}'
    decided = person.post(f"inbox/{item_id}/decide", {"decision": "accept"})
    assert decided.status == 200, decided.body
    assert decided.body["_next_action"] == "Done."
    assert Task.objects.get(pk=review["task"]["id"]).column == Column.DONE
    item = InboxItem.objects.get(pk=item_id)
    assert item.decided_by == alice and item.decision == "accept"
    assert Event.objects.filter(type="inbox.item_decided", entity_id=item_id).count() == 1
    again = person.post(f"inbox/{item_id}/decide", {"decision": "drop"})
    assert (again.status, again.body["error"]["code"]) == (409, "already_decided")


def test_an_empty_inbox_is_done(person: Api) -> None:
    assert person.get("inbox").body["_next_action"] == "Done."


def test_rework_later_and_drop(api: Api, person: Api) -> None:
    rework, later, drop = _review(api, "A"), _review(api, "B"), _review(api, "C")
    assert (
        person.post(f"inbox/{rework['item'].pk}/decide", {"decision": "rework", "note": "Add tests."}).status
        == 200
    )
    assert Task.objects.get(pk=rework["task"]["id"]).column == Column.TODO
    until = (timezone.now() + timedelta(hours=3)).isoformat()
    snoozed = person.post(f"inbox/{later['item'].pk}/decide", {"decision": "later", "snoozeUntil": until})
    assert snoozed.status == 200 and snoozed.body["_next_action"].startswith("Wait: ")
    assert person.post(f"inbox/{drop['item'].pk}/decide", {"decision": "drop"}).status == 200
    assert Task.objects.get(pk=drop["task"]["id"]).column == Column.DROPPED


def test_a_snooze_in_the_past_and_an_unknown_decision_are_refused(api: Api, person: Api) -> None:
    item = _review(api)["item"]
    past = (timezone.now() - timedelta(minutes=1)).isoformat()
    refused = person.post(f"inbox/{item.pk}/decide", {"decision": "later", "snoozeUntil": past})
    assert (refused.status, refused.body["error"]["code"]) == (422, "invalid_argument")
    assert person.post(f"inbox/{item.pk}/decide", {"decision": "approve"}).status == 422
    assert InboxItem.objects.get(pk=item.pk).decision == ""


def test_a_question_is_answered_with_the_option_the_hint_offers(api: Api, person: Api, alice: User) -> None:
    _, question = _question(api, ["eu-west-1", "us-east-1"])
    listed = person.get("inbox").body
    assert listed["_next_action"] == (
        f'Next: POST /api/v1/questions/{question.pk}/answer {{"answer": "eu-west-1"}}'
    )
    answered = person.post(f"questions/{question.pk}/answer", {"answer": "eu-west-1"})
    assert answered.status == 200, answered.body
    question.refresh_from_db()
    assert (question.state, question.answer, question.answered_by) == ("answered", "eu-west-1", alice)
    again = person.post(f"questions/{question.pk}/answer", {"answer": "us-east-1"})
    assert (again.status, again.body["error"]["code"]) == (409, "already_decided")
    # The agent gets the answer on its next call.
    assert "eu-west-1" in str(api.get("work").body)


def test_a_question_without_options_is_read_first(api: Api, person: Api) -> None:
    _, question = _question(api)
    listed = person.get("inbox").body
    assert listed["_next_action"] == f"Next: GET /api/v1/tasks/{question.task_id}"


@pytest.mark.parametrize("length, status", [(5000, 200), (5001, 422)])
def test_an_answer_is_limited_at_its_exact_edge(api: Api, person: Api, length: int, status: int) -> None:
    _, question = _question(api)
    assert person.post(f"questions/{question.pk}/answer", {"answer": "x" * length}).status == status


def test_an_empty_answer_is_refused(api: Api, person: Api) -> None:
    _, question = _question(api)
    refused = person.post(f"questions/{question.pk}/answer", {"answer": "   "})
    assert (refused.status, refused.body["error"]["code"]) == (422, "invalid_argument")


def test_an_agents_token_decides_nothing(api: Api) -> None:
    item = _review(api)["item"]
    _, question = _question(api)
    for method, path, body in [
        ("GET", "inbox", None),
        ("POST", f"inbox/{item.pk}/decide", {"decision": "accept"}),
        ("POST", f"questions/{question.pk}/answer", {"answer": "Yes"}),
    ]:
        refused = api.call(method, path, body)
        assert (refused.status, refused.body["error"]["code"]) == (403, "forbidden"), path
        assert refused.body["_next_action"].startswith("Wait: a person creates a personal access token")
    assert InboxItem.objects.get(pk=item.pk).decision == ""


def test_a_token_made_without_the_choice_decides_nothing(api: Api, alice: User, ws_a: Workspace) -> None:
    item = _review(api)["item"]
    plain = Api(api.client, person_token(alice, ws_a, can_decide=False))
    refused = plain.post(f"inbox/{item.pk}/decide", {"decision": "accept"})
    assert (refused.status, refused.body["error"]["code"]) == (403, "forbidden")
    assert InboxItem.objects.get(pk=item.pk).decision == ""


def test_a_foreign_workspaces_ids_are_not_found(person: Api, carol: User, ws_b: Workspace) -> None:
    theirs = signed_in(carol, ws_b)
    item = _review(theirs)["item"]
    _, question = _question(theirs)
    decided = person.post(f"inbox/{item.pk}/decide", {"decision": "accept"})
    assert (decided.status, decided.body["error"]["code"]) == (404, "not_found")
    answered = person.post(f"questions/{question.pk}/answer", {"answer": "Yes"})
    assert (answered.status, answered.body["error"]["code"]) == (404, "not_found")
    assert person.get("inbox").body["open"] == []
    assert InboxItem.objects.get(pk=item.pk).decision == ""


def test_a_retried_decision_returns_the_first_answer(api: Api, person: Api) -> None:
    item = _review(api)["item"]
    key = {"Idempotency-Key": "decide-once-1"}
    first = person.post(f"inbox/{item.pk}/decide", {"decision": "accept"}, headers=key)
    second = person.post(f"inbox/{item.pk}/decide", {"decision": "accept"}, headers=key)
    assert second.status == first.status == 200
    assert second.body == first.body and second.headers.get("Idempotent-Replayed") == "true"
    assert Event.objects.filter(type="inbox.item_decided", entity_id=item.pk).count() == 1
    changed = person.post(f"inbox/{item.pk}/decide", {"decision": "drop"}, headers=key)
    assert (changed.status, changed.body["error"]["code"]) == (422, "idempotency_key_reused")


def test_a_person_who_left_or_revoked_the_token_is_signed_out(
    api: Api, person: Api, alice: User, ws_a: Workspace
) -> None:
    item = _review(api)["item"]
    PersonalAccessToken.objects.filter(user=alice, can_decide=True).update(revoked_at=timezone.now())
    assert person.post(f"inbox/{item.pk}/decide", {"decision": "accept"}).status == 401
    other = Api(api.client, person_token(alice, ws_a))
    Seat.objects.filter(user=alice, workspace=ws_a).delete()
    assert other.get("inbox").status == 401
    assert InboxItem.objects.get(pk=item.pk).decision == ""
