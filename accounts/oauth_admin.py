"""The Application admin with Weft's redirect-URI rule (settings APPLICATION_ADMIN_CLASS)."""

from __future__ import annotations

from django import forms
from oauth2_provider.admin import ApplicationAdmin
from oauth2_provider.forms import ApplicationForm

from accounts.oauth_redirects import first_refusal


class RedirectCheckedApplicationForm(ApplicationForm):
    def clean_redirect_uris(self) -> str:
        value: str = self.cleaned_data.get("redirect_uris") or ""
        description = first_refusal(value.split())
        if description is not None:
            raise forms.ValidationError(description)
        return value


class WeftApplicationAdmin(ApplicationAdmin):
    form = RedirectCheckedApplicationForm
