"""Input parsing for the people's board and Inbox pages."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django import forms

from boards import limits
from boards.models import Column, LabelColour, Priority
from boards.selectors import BoardFilter, ListSort

PEOPLE_COLUMNS = [
    (Column.BACKLOG.value, "Backlog"),
    (Column.TODO.value, "Todo"),
    (Column.DONE.value, "Done"),
    (Column.DROPPED.value, "Dropped"),
]

VIEWS = [("board", "Board"), ("list", "List")]
SNOOZE_CHOICES = [("1h", "1 hour"), ("4h", "4 hours"), ("tomorrow", "Tomorrow")]
SNOOZE_SPANS = {"1h": timedelta(hours=1), "4h": timedelta(hours=4), "tomorrow": timedelta(hours=24)}


class TaskForm(forms.Form):
    title = forms.CharField(max_length=limits.TITLE)
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}), required=False, max_length=limits.DESCRIPTION, strip=False
    )
    priority = forms.TypedChoiceField(choices=Priority.choices, coerce=int, initial=Priority.NORMAL)
    due_at = forms.DateTimeField(
        required=False, label="Due", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    review_required = forms.BooleanField(required=False, label="A person reviews the result")
    estimated_review_minutes = forms.IntegerField(
        min_value=limits.REVIEW_MINUTES_MIN,
        max_value=limits.REVIEW_MINUTES_MAX,
        initial=5,
        label="Review minutes",
    )


class TaskCreateForm(TaskForm):
    column = forms.ChoiceField(
        choices=[(Column.BACKLOG.value, "Backlog"), (Column.TODO.value, "Todo")], initial=Column.TODO
    )


class MoveForm(forms.Form):
    column = forms.ChoiceField(choices=PEOPLE_COLUMNS)
    position = forms.FloatField(required=False)


class BoardFilterForm(forms.Form):
    q = forms.CharField(required=False, label="Search", max_length=limits.SEARCH_QUERY)
    priority = forms.TypedChoiceField(
        choices=[("", "Any priority"), *Priority.choices], coerce=int, required=False, empty_value=None
    )
    review = forms.BooleanField(required=False, label="Needs review")
    held = forms.BooleanField(required=False, label="Held by an agent")
    label = forms.CharField(required=False, max_length=limits.LABEL_NAME)
    mine = forms.BooleanField(required=False, label="Assigned to me")
    view = forms.ChoiceField(choices=VIEWS, required=False)
    sort = forms.CharField(required=False, max_length=20)

    def filters(self, user_id: int | None = None) -> BoardFilter:
        """The valid filters; an invalid form filters nothing (the page says why)."""
        if not self.is_valid():
            return BoardFilter()
        data = self.cleaned_data
        return BoardFilter(
            query=data["q"].strip(),
            priority=data["priority"],
            review_only=data["review"],
            held_only=data["held"],
            label=data["label"].strip(),
            assigned_to=user_id if data["mine"] else None,
        )

    def listing(self) -> bool:
        return self.is_valid() and self.cleaned_data["view"] == "list"

    def list_sort(self) -> ListSort:
        return ListSort.parse(self.cleaned_data["sort"] if self.is_valid() else "")


class IdListField(forms.Field):
    """Every value of a repeated field (the ticked boxes), as strings; access decides what they name."""

    widget = forms.CheckboxSelectMultiple

    def to_python(self, value: Any) -> list[str]:
        return [str(v) for v in value or []]


class BulkForm(forms.Form):
    task = IdListField(label="Tasks", required=False)
    action = forms.ChoiceField(choices=[("move", "Move"), ("trash", "Trash"), ("priority", "Set priority")])
    column = forms.ChoiceField(choices=PEOPLE_COLUMNS, required=False)
    priority = forms.TypedChoiceField(choices=Priority.choices, coerce=int, required=False, empty_value=None)

    def done_text(self, count: int) -> str:
        tasks = "1 task" if count == 1 else f"{count} tasks"
        action = self.cleaned_data["action"]
        if action == "move":
            return f"Moved {tasks} to {Column(self.cleaned_data['column']).label}."
        if action == "trash":
            return f"Moved {tasks} to the trash; restore them within 30 days."
        return f"Set {tasks} to {Priority(self.cleaned_data['priority']).label} priority."


class LabelForm(forms.Form):
    """A new label of the workspace (the service checks the name's limit and uniqueness)."""

    name = forms.CharField(label="New label", max_length=limits.LABEL_NAME, strip=False)
    colour = forms.ChoiceField(choices=LabelColour.choices, initial=LabelColour.GRAY)


class TaskLabelsForm(forms.Form):
    """The labels ticked on the task page, by name: they replace the task's labels."""

    label = IdListField(label="Labels", required=False)


class AssignForm(forms.Form):
    """The assignee picked on the task page: "user:<id>", "agent:<id>" or "" (nobody)."""

    assignee = forms.CharField(required=False, max_length=40)


class DecideForm(forms.Form):
    decision = forms.ChoiceField(
        choices=[("accept", "Accept"), ("rework", "Rework"), ("later", "Later"), ("drop", "Drop")]
    )
    note = forms.CharField(required=False, max_length=limits.PERSON_NOTE)
    snooze = forms.ChoiceField(choices=SNOOZE_CHOICES, required=False)

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if data.get("decision") == "rework" and not str(data.get("note") or "").strip():
            self.add_error("note", "Say what to change: the agent sees this note when it starts again.")
        return data

    def snooze_until(self, now: datetime) -> datetime | None:
        if self.cleaned_data.get("decision") != "later":
            return None
        return now + SNOOZE_SPANS.get(self.cleaned_data.get("snooze") or "tomorrow", SNOOZE_SPANS["tomorrow"])


class AnswerForm(forms.Form):
    answer = forms.CharField(required=False, max_length=limits.PERSON_NOTE)
    answer_text = forms.CharField(required=False, max_length=limits.PERSON_NOTE, label="Your answer")

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        text = str(data.get("answer") or data.get("answer_text") or "").strip()
        if not text:
            raise forms.ValidationError("Pick an option or write an answer.")
        data["text"] = text
        return data
