from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render


def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        seat = request.user.seats.select_related("workspace").order_by("created_at").first()
        if seat is not None:
            return render(request, "accounts/home.html", {"seat": seat})
    return redirect("account_login")
