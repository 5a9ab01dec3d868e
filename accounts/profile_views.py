"""A person's own profile page: the display name others see instead of their email address."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from accounts import services
from accounts.forms import ProfileForm
from accounts.models import User
from weft.errors import WeftError


@login_required
def account_profile(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    form = ProfileForm(request.POST or None, initial={"name": user.name})
    if request.method == "POST" and form.is_valid():
        try:
            services.user_set_name(user=user, name=form.cleaned_data["name"])
        except WeftError as error:
            form.add_error("name", error.message)
        else:
            messages.success(request, f"Saved. People see you as {user.display_name}.")
            return redirect("account_profile")
    context = {"form": form, "shown_as": user.display_name}
    return render(request, "accounts/profile.html", context, status=400 if form.errors else 200)
