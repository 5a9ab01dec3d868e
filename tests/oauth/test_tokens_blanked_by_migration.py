"""Tokens stored in clear before hashed storage keep working by checksum once the migration blanks them."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken

from accounts.oauth_tokens import stored_checksum

pytestmark = pytest.mark.django_db

migration = importlib.import_module("accounts.migrations.0005_oauth_tokens_blank_at_rest")


def test_it_blanks_clear_tokens_and_keeps_their_checksums(alice):
    app = Application.objects.create(
        name="Old client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    access = AccessToken.objects.create(
        user=alice, application=app, token="old-access", expires=timezone.now() + timedelta(hours=1)
    )
    refresh = RefreshToken.objects.create(
        user=alice, application=app, token="old-refresh", access_token=access
    )
    # As a row written before hashed storage: the raw value in the token column.
    AccessToken.objects.filter(pk=access.pk).update(
        token="old-access", token_checksum=stored_checksum("old-access")
    )
    RefreshToken.objects.filter(pk=refresh.pk).update(
        token="old-refresh", token_checksum=stored_checksum("old-refresh")
    )

    migration.blank_clear_tokens(apps, None)

    access.refresh_from_db()
    refresh.refresh_from_db()
    assert (access.token, refresh.token) == ("", "")
    assert AccessToken.objects.get(token_checksum=stored_checksum("old-access")).pk == access.pk
    assert RefreshToken.objects.get(token_checksum=stored_checksum("old-refresh")).pk == refresh.pk
