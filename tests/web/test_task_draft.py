"""A new-task form refused — at the plan's cap, or invalid — comes back with what was typed."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Usage, User, Workspace, month_start
from boards.models import Task

pytestmark = pytest.mark.django_db

TYPED = {
    "title": "Migrate the billing tables",
    "description": "Move <invoices> to the new schema & keep the old view.",
    "column": "backlog",
    "priority": "3",
    "due_at": "2026-12-24T17:30",
    "estimated_review_minutes": "25",
    "review_required": "on",
}


def _board(client: Client, ws: Workspace) -> str:
    return client.get(reverse("boards:board", kwargs={"slug": ws.slug})).content.decode()


def test_a_form_refused_at_the_plan_cap_keeps_what_was_typed(alice: User, ws_a: Workspace) -> None:
    Usage.objects.create(
        workspace=ws_a, period=month_start(timezone.now().date()), kind=Usage.TASKS, count=50
    )
    client = Client()
    client.force_login(alice)
    answer = client.post(reverse("boards:task_create", kwargs={"slug": ws_a.slug}), TYPED, follow=True)
    page = answer.content.decode()
    assert not Task.objects.filter(title=TYPED["title"]).exists()
    assert "allows 50 tasks created a month" in page
    assert '<details class="new-task" open>' in page
    assert 'value="Migrate the billing tables" autofocus' in page
    assert "Move &lt;invoices&gt; to the new schema &amp; keep the old view.</textarea>" in page
    assert '<option value="backlog" selected>' in page
    assert '<option value="3" selected>' in page
    assert 'value="2026-12-24T17:30"' in page and 'value="25"' in page
    assert 'name="review_required" checked' in page
    # Shown once: the next visit starts from a blank form.
    again = _board(client, ws_a)
    assert '<details class="new-task">' in again and "Migrate the billing tables" not in again


def test_an_invalid_form_keeps_what_was_typed(alice: User, ws_a: Workspace) -> None:
    client = Client()
    client.force_login(alice)
    typed = {**TYPED, "estimated_review_minutes": "900"}
    page = client.post(
        reverse("boards:task_create", kwargs={"slug": ws_a.slug}), typed, follow=True
    ).content.decode()
    assert "The task was not created" in page
    assert 'value="Migrate the billing tables"' in page and 'value="900"' in page


def test_a_blank_board_has_the_defaults(alice: User, ws_a: Workspace) -> None:
    client = Client()
    client.force_login(alice)
    page = _board(client, ws_a)
    assert '<option value="todo" selected>' in page and '<option value="1" selected>' in page
    assert 'name="estimated_review_minutes" value="5"' in page
