"""OAuth for agents: our consent page (pick the workspace) and rate-limited client registration.

Everything else — token, revocation, metadata, client-id metadata documents — is
django-oauth-toolkit's own views, configured in settings.OAUTH2_PROVIDER. Redirect URIs follow
accounts.oauth_redirects wherever a client names them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast
from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from oauth2_provider import views as dot_views
from oauth2_provider.exceptions import FatalClientError, OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.models import Application
from oauth2_provider.views import (
    AuthorizationView,
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)
from oauthlib.oauth2.rfc6749.errors import (
    CustomOAuth2Error,
    InvalidClientIdError,
    InvalidRedirectURIError,
    InvalidRequestError,
)

from accounts import selectors
from accounts.access import find_seat
from accounts.connections import connection_authorize
from accounts.models import User
from accounts.oauth_ratelimit import address_refused
from accounts.oauth_redirects import redirect_uri_problem, refuse_registration


class TokenView(dot_views.TokenView):
    """The token endpoint: every grant through oauthlib, the device code's too.

    DOT answers a device code's poll from its own status check, which never expires a code,
    lets an authorized code be exchanged again, and fails on a missing or unknown code; oauthlib
    asks WeftOAuth2Validator.validate_device_code instead.
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return self.authorization_flow_token_response(request)


class ConsentForm(AllowForm):
    workspace = forms.CharField(required=False)


def _same_resource(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


class ConsentView(AuthorizationView):
    """The authorization endpoint: DOT validates the request, the person picks a workspace.

    The grant is bound to that workspace as an AgentConnection (accounts.connections).
    """

    template_name = "accounts/oauth_consent.html"
    form_class = ConsentForm

    def validate_authorization_request(self, request: HttpRequest) -> tuple[Any, dict[str, Any]]:
        scopes, credentials = super().validate_authorization_request(request)
        redirect_uri = credentials.get("redirect_uri")
        state = credentials.get("state")
        # A client registered before the redirect rule may still hold a URI it now forbids.
        if redirect_uri and redirect_uri_problem(redirect_uri) is not None:
            raise FatalClientError(error=InvalidRedirectURIError(state=state))
        # S256 only: oauthlib treats a missing method as "plain".
        if credentials.get("code_challenge_method", "plain") != "S256":
            raise OAuthToolkitError(
                error=InvalidRequestError(
                    description='PKCE code_challenge_method must be "S256".', state=state
                ),
                redirect_uri=redirect_uri,
            )
        # RFC 8707: Weft issues tokens for its MCP endpoint only.
        for resource in request.GET.getlist("resource"):
            if not _same_resource(resource, settings.WEFT_MCP_URL):
                raise OAuthToolkitError(
                    error=CustomOAuth2Error(
                        error="invalid_target",
                        description=f"Unknown resource; tokens here are for {settings.WEFT_MCP_URL}",
                        state=state,
                    ),
                    redirect_uri=redirect_uri,
                )
        return scopes, credentials

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        seats = selectors.seats_by_workspace_name(cast(User, self.request.user))
        redirect_uri = self.oauth2_data.get("redirect_uri") or self.request.POST.get("redirect_uri", "")
        parts = urlsplit(redirect_uri or "")
        context.update(
            seats=seats,
            redirect_host=parts.hostname or parts.scheme or redirect_uri,
            # A native app's own scheme is named; the web's http(s) goes without saying.
            app_scheme="" if parts.scheme in ("http", "https") else parts.scheme,
            mcp_url=settings.WEFT_MCP_URL,
        )
        return context

    def form_valid(self, form: ConsentForm) -> HttpResponse:  # type: ignore[override]
        # The posted form is the client's request again, possibly tampered with: an unknown
        # client or a redirect it may not use gets a page, never a redirect (RFC 6749 §4.1.2.1).
        application = Application.objects.filter(client_id=form.cleaned_data.get("client_id") or "").first()
        redirect_uri = form.cleaned_data.get("redirect_uri") or ""
        if application is None:
            return self.error_response(FatalClientError(error=InvalidClientIdError()), None)
        if redirect_uri and (
            redirect_uri_problem(redirect_uri) is not None
            or not application.redirect_uri_allowed(redirect_uri)
        ):
            return self.error_response(FatalClientError(error=InvalidRedirectURIError()), application)
        if form.cleaned_data.get("allow"):
            slug = form.cleaned_data.get("workspace") or ""
            seat = find_seat(self.request.user, slug)  # type: ignore[arg-type]
            if seat is None:
                form.add_error("workspace", "Pick one of your workspaces.")
                return self.form_invalid(form)
            connection_authorize(user=self.request.user, application=application, workspace=seat.workspace)  # type: ignore[arg-type]
        return super().form_valid(form)

    def form_invalid(self, form: ConsentForm) -> HttpResponse:  # type: ignore[override]
        data = form.data
        application = Application.objects.filter(client_id=data.get("client_id", "")).first()
        self.oauth2_data = {
            "application": application,
            "redirect_uri": data.get("redirect_uri", ""),
            "scopes": (data.get("scope") or "").split(),
        }
        return self.render_to_response(
            self.get_context_data(form=form, application=application, scopes=self.oauth2_data["scopes"]),
            status=400,
        )


REGISTRATION_WINDOW = timedelta(hours=1)


class RateLimitedRegistrationView(DynamicClientRegistrationView):
    """RFC 7591 open registration, at most WEFT_DCR_RATE_PER_HOUR new clients per IP an hour."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        limited = address_refused(
            request,
            kind="dcr",
            limit=settings.WEFT_DCR_RATE_PER_HOUR,
            window=REGISTRATION_WINDOW,
            error="invalid_client_metadata",
            description="Too many client registrations from this address; try again later.",
        )
        if limited is not None:
            return limited
        refused = refuse_registration(request.body)
        if refused is not None:
            return refused
        return super().post(request, *args, **kwargs)


class RegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592 client configuration: an update names its redirect URIs under the same rule."""

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        auth = self._authenticate_registration_request(request, client_id)
        if isinstance(auth, HttpResponse):
            return auth
        refused = refuse_registration(request.body)
        if refused is not None:
            return refused
        return super().put(request, client_id, *args, **kwargs)
