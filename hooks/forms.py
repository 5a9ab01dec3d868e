"""Input parsing for the webhook pages (the service validates; the form only splits the fields)."""

from __future__ import annotations

from django import forms

from hooks import rules


class SubscriptionForm(forms.Form):
    url = forms.CharField(max_length=rules.URL, label="Endpoint URL")
    event_types = forms.CharField(
        required=False,
        max_length=rules.EVENT_TYPES * (rules.EVENT_TYPE + 1),
        label="Event types",
        help_text="Separated by spaces or commas, e.g. task.created run.completed",
    )
    entity_type = forms.CharField(required=False, max_length=rules.ENTITY_TYPE, label="Entity type")
    entity_id = forms.CharField(required=False, max_length=rules.ENTITY_ID, label="Entity id")

    def types(self) -> list[str]:
        return self.cleaned_data["event_types"].replace(",", " ").split()
