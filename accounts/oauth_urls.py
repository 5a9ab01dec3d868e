"""OAuth 2.1 endpoints for agents, under the `oauth2_provider` namespace DOT's metadata reverses.

Mounted at the site root: the RFC 8414 and RFC 9728 documents live under /.well-known/,
the endpoints under /o/. The same views also answer at /authorize, /token and /register: the
MCP 2025-03-26 default endpoints, which some clients on the Python SDK use to refresh a saved
token without rediscovering.
"""

from django.urls import path
from oauth2_provider import views as dot

from accounts.device_views import DeviceApproveView, DeviceAuthorizationView, DeviceCodeView, DeviceDoneView
from accounts.oauth_views import (
    ConsentView,
    RateLimitedRegistrationView,
    RegistrationManagementView,
    TokenView,
)

app_name = "oauth2_provider"

authorize = ConsentView.as_view()
token = TokenView.as_view()
register = RateLimitedRegistrationView.as_view()

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        dot.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource",
        dot.OAuthProtectedResourceMetadataView.as_view(),
        name="oauth-resource-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource/<path:resource_path>",
        dot.OAuthProtectedResourceMetadataView.as_view(),
        name="oauth-resource-metadata-path",
    ),
    path("o/authorize/", authorize, name="authorize"),
    path("o/token/", token, name="token"),
    path("o/revoke_token/", dot.RevokeTokenView.as_view(), name="revoke-token"),
    path("o/register/", register, name="dcr-register"),
    path(
        "o/register/<str:client_id>/",
        RegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
    # RFC 8628 for `weft login` (accounts/device_views.py).
    path("o/device-authorization/", DeviceAuthorizationView.as_view(), name="device-authorization"),
    path("o/device/", DeviceCodeView.as_view(), name="device"),
    path("o/device/<slug:client_id>/<slug:user_code>/", DeviceApproveView.as_view(), name="device-confirm"),
    path(
        "o/device/<slug:client_id>/<slug:user_code>/done/",
        DeviceDoneView.as_view(),
        name="device-grant-status",
    ),
    path("authorize", authorize, name="legacy-authorize"),
    path("token", token, name="legacy-token"),
    path("register", register, name="legacy-register"),
]
