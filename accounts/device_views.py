"""`weft login`'s pages and endpoint (RFC 8628): DOT's device views, with a workspace to pick.

DOT does the protocol: the code pair at /o/device-authorization/, the polled token at /o/token/.
Weft adds a rate limit per client address on the open endpoint, its own pages, and the
workspace the person approves the device for (accounts.device).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, cast

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from oauth2_provider import views as dot
from oauth2_provider.models import DeviceCodeResponse, DeviceRequest, create_device_grant
from oauth2_provider.settings import oauth2_settings

from accounts import selectors
from accounts.device import (
    DeviceCodeSpent,
    device_allowed,
    device_approve,
    device_client_allowed,
    device_deny,
)
from accounts.models import User
from accounts.oauth_ratelimit import address_refused

DEVICE_WINDOW = timedelta(hours=1)
DEFAULT_SCOPES = oauth2_settings.DEFAULT_SCOPES


def _oauth_error(error: str, description: str, status: int) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status)


class DeviceAuthorizationView(dot.DeviceAuthorizationView):
    """The device's first call: a code pair, for a device client, at most so many an hour per address."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        limited = address_refused(
            request,
            kind="device",
            limit=settings.WEFT_DEVICE_RATE_PER_HOUR,
            window=DEVICE_WINDOW,
            error="slow_down",
            description="Too many sign-in requests from this address.",
        )
        if limited is not None:
            return limited
        client_id = request.POST.get("client_id", "")
        if not client_id:
            return _oauth_error("invalid_request", "client_id is required.", 400)
        if not device_client_allowed(client_id):
            return _oauth_error("unauthorized_client", "This client may not use the device grant.", 400)
        return self._code_pair(request, client_id)

    def _code_pair(self, request: HttpRequest, client_id: str) -> HttpResponse:
        """DOT's own answer, except the `scope` oauthlib now adds to it: that is the grant's
        scope to keep, not a member of RFC 8628's response (nor of DOT's DeviceCodeResponse)."""
        headers, body, status = self.create_device_authorization_response(request)
        response = dict(body) if isinstance(body, dict) else json.loads(body)
        if status != 200:
            return JsonResponse(response, status=status, headers=headers)
        scope = response.pop("scope", None) or " ".join(DEFAULT_SCOPES)
        create_device_grant(DeviceRequest(client_id=client_id, scope=scope), DeviceCodeResponse(**response))
        return JsonResponse(response, status=status, headers=headers)


class DeviceCodeView(dot.DeviceUserCodeView):
    """The person enters the code the terminal shows (signed in first)."""

    template_name = "accounts/device_code.html"


class DeviceApproveForm(forms.Form):
    action = forms.ChoiceField(choices=[("accept", "Allow"), ("deny", "Deny")])
    workspace = forms.CharField(required=False)


class DeviceApproveView(dot.DeviceConfirmView):
    """Allow or deny the device, for one of the person's workspaces."""

    template_name = "accounts/device_approve.html"
    form_class = DeviceApproveForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["seats"] = selectors.seats_by_workspace_name(cast(User, self.request.user))
        context["user_code"] = self.kwargs["user_code"]
        return context

    def form_valid(self, form: forms.Form) -> HttpResponse:  # type: ignore[override]
        user = cast(User, self.request.user)
        try:
            if form.cleaned_data["action"] == "deny":
                device_deny(user=user, grant=self.get_object())
            elif (
                device_approve(
                    user=user, grant=self.get_object(), workspace_slug=form.cleaned_data["workspace"]
                )
                is None
            ):
                form.add_error("workspace", "Pick one of your workspaces.")
                return self.render_to_response(self.get_context_data(form=form), status=400)
        except DeviceCodeSpent:
            form.add_error(None, "This code was already used or has expired. Run `weft login` again.")
            return self.render_to_response(self.get_context_data(form=form), status=409)
        return super(dot.DeviceConfirmView, self).form_valid(form)


class DeviceDoneView(dot.DeviceGrantStatusView):
    """Where the person lands: allowed (back to the terminal) or denied."""

    template_name = "accounts/device_done.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["allowed"] = device_allowed(self.object)
        return context
