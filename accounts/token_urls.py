"""URLs of the personal access tokens page, under /w/<slug>/tokens/."""

from django.urls import path

from accounts import token_views

urlpatterns = [
    path("", token_views.tokens, name="workspace_tokens"),
    path("new/", token_views.token_create, name="token_create"),
    path("<int:token_id>/revoke/", token_views.token_revoke, name="token_revoke"),
]
