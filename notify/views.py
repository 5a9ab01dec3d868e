"""People's notification pages and the browser's push endpoints.

/account/notifications/ (settings and devices), /push/key/ (the VAPID public key),
/push/subscriptions/ (POST the browser's PushSubscription JSON; POST …/delete/ to forget it),
/sw.js (the service worker, at the root so it may control every page) and the web app manifest.
"""

from __future__ import annotations

import json
from typing import cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.views.decorators.http import require_GET, require_POST

from accounts.models import User
from notify import services
from notify.forms import NotifySettingsForm
from notify.push import push_enabled
from weft.errors import WeftError


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)


@login_required
def notify_settings(request: HttpRequest) -> HttpResponse:
    current = services.settings_for(_user(request))
    if request.method == "POST":
        form = NotifySettingsForm(request.POST)
        if form.is_valid():
            services.settings_save(user=_user(request), **form.cleaned_data)
            messages.success(request, "Notification settings saved.")
            return redirect("notify_settings")
    else:
        form = NotifySettingsForm(
            initial={
                "push": current.push,
                "email": current.email,
                "quiet_start": current.quiet_start,
                "quiet_end": current.quiet_end,
                "time_zone": current.time_zone,
            }
        )
    context = {
        "form": form,
        "devices": services.devices_of(_user(request)),
        "push_enabled": push_enabled(),
        "public_key": settings.WEFT_VAPID_PUBLIC_KEY,
    }
    return render(request, "notify/settings.html", context, status=400 if form.errors else 200)


@require_GET
def push_key(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"enabled": push_enabled(), "publicKey": settings.WEFT_VAPID_PUBLIC_KEY or None})


def _json(request: HttpRequest) -> object:
    try:
        return json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        return None


@login_required
@require_POST
def push_subscribe(request: HttpRequest) -> JsonResponse:
    try:
        device = services.push_subscribe(
            user=_user(request), data=_json(request), user_agent=request.headers.get("User-Agent", "")
        )
    except WeftError as error:
        return JsonResponse({"error": {"code": error.code, "message": error.message}}, status=400)
    return JsonResponse({"id": device.pk}, status=201)


@login_required
@require_POST
def push_unsubscribe(request: HttpRequest) -> HttpResponse:
    as_json = request.content_type == "application/json"
    data = _json(request) if as_json else request.POST.dict()
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    removed = services.push_unsubscribe(user=_user(request), endpoint=str(endpoint or ""))
    if as_json:
        return JsonResponse({"removed": removed}, status=200 if removed else 404)
    messages.success(
        request, "The device no longer gets push notifications." if removed else "No such device."
    )
    return redirect("notify_settings")


@require_GET
def service_worker(request: HttpRequest) -> HttpResponse:
    response = render(request, "notify/sw.js", content_type="text/javascript")
    response["Service-Worker-Allowed"] = "/"
    response["Cache-Control"] = "no-cache"
    return response


@require_GET
def manifest(request: HttpRequest) -> JsonResponse:
    icon = static("notify/icon.svg")
    return JsonResponse(
        {
            "name": "Weft",
            "short_name": "Weft",
            "description": "One board for agents and the people they work for.",
            "start_url": "/",
            "scope": "/",
            "display": "standalone",
            "background_color": "#ffffff",
            "theme_color": "#1f2937",
            "icons": [{"src": icon, "sizes": "any", "type": "image/svg+xml", "purpose": "any maskable"}],
        },
        content_type="application/manifest+json",
    )
