"""Signing in a device (`weft login`, RFC 8628): the person approves it for one workspace.

The device asks /o/device-authorization/ for a code pair and polls /o/token/; the person enters
the user code at /o/device/ and approves it here. Approving binds the grant to a workspace as
the same kind of connection the consent page makes (accounts.connections): the client and the
person name one live connection, so every token the poll receives resolves to it.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import Application, DeviceGrant

from accounts.access import find_seat
from accounts.connections import connection_authorize
from accounts.models import AgentConnection, User

CLI_CLIENT_ID = "weft-cli"


class DeviceCodeSpent(Exception):
    """The code was already approved or denied, or has expired."""


def device_client_allowed(client_id: str) -> bool:
    """Only a public client registered for the device grant may start one: the Weft CLI, which
    is registered on its first sign-in."""
    if client_id == CLI_CLIENT_ID:
        application, _ = Application.objects.get_or_create(
            client_id=CLI_CLIENT_ID,
            defaults={
                "name": "Weft CLI",
                "client_type": Application.CLIENT_PUBLIC,
                "authorization_grant_type": Application.GRANT_DEVICE_CODE,
                "client_secret": "",
                "redirect_uris": "",
            },
        )
    else:
        application = Application.objects.filter(client_id=client_id).first()
    return application is not None and application.allows_grant_type(Application.GRANT_DEVICE_CODE)


def device_approve(*, user: User, grant: DeviceGrant, workspace_slug: str) -> AgentConnection | None:
    """Authorize the pending grant for `workspace_slug`; None when it is not one of the person's
    workspaces (the grant stays pending). Raises DeviceCodeSpent for a decided or expired code."""
    seat = find_seat(user, workspace_slug)
    if seat is None:
        return None
    with transaction.atomic():
        locked = _pending(grant, user)
        application = Application.objects.get(client_id=locked.client_id)
        connection = connection_authorize(user=user, application=application, workspace=seat.workspace)
        locked.status = DeviceGrant.AUTHORIZED
        locked.save(update_fields=["status"])
    return connection


# What a poll of the token endpoint finds (oauthlib's DeviceCodeGrant.DEVICE_CODE_* values).
AUTHORIZED, PENDING, SLOW_DOWN, EXPIRED, DENIED = (
    "authorized",
    "authorization_pending",
    "slow_down",
    "expired_token",
    "access_denied",
)


def device_poll(*, client_id: str, device_code: str) -> tuple[str | None, DeviceGrant | None]:
    """The state of the device's code at one poll, and the grant when it is authorized.

    None for a code this client was never given. An authorized code is spent by the poll that
    finds it: one exchange per code (RFC 8628 §3.5), however many polls race for it. A pending
    code polled sooner than its interval answers slow_down; past its expiry, expired_token.
    """
    with transaction.atomic():
        grant = (
            DeviceGrant.objects.select_for_update(of=("self",))
            .select_related("user")
            .filter(device_code=device_code, client_id=client_id)
            .first()
        )
        if grant is None:
            return None, None
        now = timezone.now()
        if grant.status == DeviceGrant.AUTHORIZATION_PENDING and now >= grant.expires:
            grant.status = DeviceGrant.EXPIRED
            grant.save(update_fields=["status"])
        if grant.status == DeviceGrant.AUTHORIZATION_PENDING:
            too_soon = now - grant.last_checked < timedelta(seconds=grant.interval)
            grant.save(update_fields=["last_checked"])
            return (SLOW_DOWN if too_soon else PENDING), None
        if grant.status == DeviceGrant.AUTHORIZED:
            if now >= grant.expires:
                return EXPIRED, None
            # Spent: it stays authorized (the person's page says so) but expires now. The row
            # is locked; the compare-and-set on the expiry read keeps one exchange without it too.
            spent = DeviceGrant.objects.filter(pk=grant.pk, expires=grant.expires).update(expires=now)
            return (AUTHORIZED, grant) if spent else (EXPIRED, None)
        return (DENIED if grant.status == DeviceGrant.DENIED else EXPIRED), None


def device_allowed(grant: DeviceGrant) -> bool:
    return grant.status == DeviceGrant.AUTHORIZED


def device_deny(*, user: User, grant: DeviceGrant) -> None:
    with transaction.atomic():
        locked = _pending(grant, user)
        locked.status = DeviceGrant.DENIED
        locked.save(update_fields=["status"])


def _pending(grant: DeviceGrant, user: User) -> DeviceGrant:
    """The grant, locked, while it still waits for this person; decided or expired is a conflict."""
    locked = DeviceGrant.objects.select_for_update().filter(pk=grant.pk, user=user).first()
    if locked is None or locked.status != DeviceGrant.AUTHORIZATION_PENDING or locked.is_expired():
        raise DeviceCodeSpent
    return locked
