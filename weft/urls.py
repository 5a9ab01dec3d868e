from django.contrib import admin
from django.urls import include, path

handler500 = "weft.views.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("accounts/", include("allauth.urls")),
    path("", include("accounts.oauth_urls")),
    path("", include("accounts.agent_urls")),
    path("", include("accounts.urls")),
    path("", include("notify.urls")),
    path("w/<slug:slug>/", include("boards.urls")),
    path("w/<slug:slug>/tokens/", include("accounts.token_urls")),
    path("w/<slug:slug>/webhooks/", include("hooks.urls")),
    path("w/<slug:slug>/issues/", include("issues.urls")),
]
