"""OAuth 2.1 endpoints for agents, under the `oauth2_provider` namespace DOT's metadata reverses.

Mounted at the site root: the RFC 8414 and RFC 9728 documents live under /.well-known/,
the endpoints under /o/.
"""

from django.urls import path
from oauth2_provider import views as dot

from accounts.oauth_views import ConsentView, RateLimitedRegistrationView

app_name = "oauth2_provider"

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
    path("o/authorize/", ConsentView.as_view(), name="authorize"),
    path("o/token/", dot.TokenView.as_view(), name="token"),
    path("o/revoke_token/", dot.RevokeTokenView.as_view(), name="revoke-token"),
    path("o/register/", RateLimitedRegistrationView.as_view(), name="dcr-register"),
    path(
        "o/register/<str:client_id>/",
        dot.DynamicClientRegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
]
