"""The notification settings form."""

from __future__ import annotations

import zoneinfo

from django import forms


class NotifySettingsForm(forms.Form):
    push = forms.BooleanField(required=False, label="Push notifications on my devices")
    email = forms.BooleanField(required=False, label="An email after an item waits 20 minutes")
    quiet_start = forms.TimeField(
        required=False, label="Quiet from", widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M")
    )
    quiet_end = forms.TimeField(
        required=False, label="Quiet until", widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M")
    )
    time_zone = forms.CharField(
        max_length=64, initial="UTC", label="Time zone", help_text="e.g. Europe/Berlin"
    )

    def clean_time_zone(self) -> str:
        value = self.cleaned_data["time_zone"].strip()
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise forms.ValidationError(
                "Not a time zone name (e.g. Europe/Berlin, America/New_York)."
            ) from None
        return value

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if bool(data.get("quiet_start")) != bool(data.get("quiet_end")):
            raise forms.ValidationError("Give both ends of the quiet hours, or neither.")
        return data
