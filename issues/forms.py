"""Input parsing for the triage pages (the services validate; the forms only split the fields)."""

from __future__ import annotations

from typing import Any

from django import forms

from issues import limits
from issues.models import EnvironmentClass, IssueKind, IssueStatus
from issues.selectors_triage import TriageFilter
from issues.services.triage import SETTABLE

ANY = [("", "Any")]
BUILD_CHOICES = [("", "Any"), ("yes", "Names its build"), ("no", "No build named")]
STATUS_CHOICES = [(value, IssueStatus(value).label) for value in (*SETTABLE, IssueStatus.RESOLVED)]


class FilterForm(forms.Form):
    kind = forms.ChoiceField(required=False, choices=ANY + IssueKind.choices)
    status = forms.ChoiceField(required=False, choices=ANY + IssueStatus.choices)
    environment = forms.ChoiceField(
        required=False, choices=ANY + EnvironmentClass.choices, label="Environment"
    )
    has_build = forms.ChoiceField(required=False, choices=BUILD_CHOICES, label="Build")

    def filters(self) -> TriageFilter:
        """The valid filters; an unknown value filters nothing rather than failing the page."""
        data = self.cleaned_data if self.is_valid() else {}
        return TriageFilter(**{name: data.get(name, "") for name in self.fields})


class IdListField(forms.Field):
    """Every value of a repeated field (the checked boxes), as strings; access decides what they name."""

    widget = forms.CheckboxSelectMultiple

    def to_python(self, value: Any) -> list[str]:
        return [str(v) for v in value or []]


class BulkCloseForm(forms.Form):
    issue = IdListField(label="Issues")


class ReplyForm(forms.Form):
    body = forms.CharField(max_length=limits.MESSAGE, widget=forms.Textarea(attrs={"rows": 4}), label="Reply")
    ask = forms.BooleanField(required=False, label="Ask for detail (waits for the reporter)")


class StatusForm(forms.Form):
    status = forms.ChoiceField(choices=STATUS_CHOICES)
    resolution = forms.CharField(
        required=False, max_length=limits.RESOLUTION, widget=forms.Textarea(attrs={"rows": 2})
    )


class DuplicateForm(forms.Form):
    of = forms.CharField(max_length=limits.LINK_ID, label="Duplicate of issue")


class UpstreamForm(forms.Form):
    url = forms.CharField(max_length=limits.UPSTREAM_URL, label="Upstream URL")


class TaskForm(forms.Form):
    board = forms.CharField(max_length=limits.LINK_ID, label="Board")
    title = forms.CharField(required=False, max_length=limits.TITLE, label="Task title")
