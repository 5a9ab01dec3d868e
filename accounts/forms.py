"""Forms of the accounts pages: workspace, invitation, role, a person's name."""

from __future__ import annotations

from django import forms

from accounts.models import Seat


class WorkspaceForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        label="Workspace name",
        help_text="Usually your team's or your project's name. You can have several.",
        widget=forms.TextInput(attrs={"autofocus": True, "placeholder": "Acme"}),
    )

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Give the workspace a name.")
        return name


class InviteForm(forms.Form):
    email = forms.EmailField(
        label="Email address", widget=forms.EmailInput(attrs={"placeholder": "name@example.com"})
    )
    role = forms.ChoiceField(choices=Seat.ROLES, initial=Seat.MEMBER)

    def __init__(self, *args: object, inviter: Seat, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        if inviter.role != Seat.OWNER:
            self.fields["role"].choices = [c for c in Seat.ROLES if c[0] != Seat.OWNER]  # type: ignore[attr-defined]


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Seat.ROLES)


class TokenForm(forms.Form):
    """A new personal access token: its name and how long it lives."""

    name = forms.CharField(
        max_length=100,
        label="Token name",
        help_text="What it is for, e.g. “CI on main” or “my laptop”.",
        widget=forms.TextInput(attrs={"placeholder": "CI on main"}),
    )
    expires_in = forms.ChoiceField(
        label="Expires",
        choices=[("7", "in 7 days"), ("30", "in 30 days"), ("90", "in 90 days"), ("never", "never")],
        initial="30",
    )
    can_decide = forms.BooleanField(
        required=False,
        label="May decide my Inbox",
        help_text="Accept, rework, snooze and drop reviews and answer questions as you, over the REST API. "
        "Leave it off for a token an agent uses: it could accept its own work.",
    )

    def expires_in_days(self) -> int | None:
        value = self.cleaned_data["expires_in"]
        return None if value == "never" else int(value)


class ProfileForm(forms.Form):
    """A person's display name, shown to others instead of their email address."""

    name = forms.CharField(
        max_length=150,
        required=False,
        label="Your name",
        help_text="Shown on cards, comments and the Inbox. Empty: the part of your email before the @.",
    )
