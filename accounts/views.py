"""People's pages for workspaces: onboarding, switching, members, invitations, plan and usage."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from accounts import roles, selectors, services
from accounts.access import (
    access_invitation,
    access_managing_seat,
    access_member_seat,
    access_seat,
    find_seat,
)
from accounts.context_processors import LAST_WORKSPACE_KEY
from accounts.forms import InviteForm, RoleForm, WorkspaceForm
from accounts.models import Seat, User
from weft.errors import WeftError

# How a refused invitation link answers on the web, by the refusal's reason (else 410 Gone).
INVITATION_STATUS = {"invalid": 404, "wrong_account": 403}


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)


def workspace_landing_url(slug: str) -> str:
    """Where a person lands in a workspace: its board."""
    return reverse("boards:board", kwargs={"slug": slug})


def _remember(request: HttpRequest, slug: str) -> None:
    request.session[LAST_WORKSPACE_KEY] = slug


def home(request: HttpRequest) -> HttpResponse:
    """Signed out: sign in. No seat yet: create a workspace. Otherwise the last workspace used."""
    if not request.user.is_authenticated:
        return redirect("account_login")
    last = request.session.get(LAST_WORKSPACE_KEY)
    seat = find_seat(_user(request), last) if last else None
    seat = seat or selectors.latest_seat(_user(request))
    if seat is None:
        return redirect("workspace_create")
    return redirect(workspace_landing_url(seat.workspace.slug))


@login_required
def workspace_new(request: HttpRequest) -> HttpResponse:
    first = not selectors.has_seat(_user(request))
    form = WorkspaceForm(request.POST or None)
    # An agent's consent page sends a person without a workspace here and wants them back.
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(next_url, {request.get_host()}, request.is_secure()):
        next_url = ""
    if request.method == "POST" and form.is_valid():
        workspace = services.workspace_create(owner=_user(request), name=form.cleaned_data["name"])
        _remember(request, workspace.slug)
        messages.success(request, f"{workspace.name} is ready. Invite the people you work with.")
        return redirect(next_url or workspace_landing_url(workspace.slug))
    return render(
        request, "accounts/workspace_new.html", {"form": form, "first": first, "next_url": next_url}
    )


@login_required
def workspace_switch(request: HttpRequest, slug: str) -> HttpResponse:
    seat = access_seat(_user(request), slug)
    _remember(request, seat.workspace.slug)
    return redirect(workspace_landing_url(seat.workspace.slug))


@login_required
def workspace_dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    seat = access_seat(_user(request), slug)
    _remember(request, seat.workspace.slug)
    context = {
        "seat": seat,
        "workspace": seat.workspace,
        "board_url": workspace_landing_url(slug),
        "people": seat.workspace.seats.count(),
        "usage": selectors.usage_rows(seat),
    }
    return render(request, "accounts/dashboard.html", context)


@login_required
def workspace_leave(request: HttpRequest, slug: str) -> HttpResponse:
    seat = access_seat(_user(request), slug)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    try:
        services.seat_remove(seat=seat, by=seat)
    except WeftError as error:
        messages.error(request, error.message)
        return redirect("workspace_members", slug=slug)
    request.session.pop(LAST_WORKSPACE_KEY, None)
    messages.success(request, f"You left {seat.workspace.name}.")
    return redirect("home")


def _members_page(
    request: HttpRequest, seat: Seat, invite_form: InviteForm | None = None, status: int = 200
) -> HttpResponse:
    context = {
        "seat": seat,
        "workspace": seat.workspace,
        "rows": selectors.member_rows(seat),
        "pending": selectors.pending_invitations(seat.workspace_id),
        "invite_form": invite_form or InviteForm(inviter=seat),
        "roles": roles.assignable_roles(seat.role),
    }
    return render(request, "accounts/members.html", context, status=status)


@login_required
def members(request: HttpRequest, slug: str) -> HttpResponse:
    return _members_page(request, access_seat(_user(request), slug))


@login_required
def member_invite(request: HttpRequest, slug: str) -> HttpResponse:
    seat = access_managing_seat(_user(request), slug)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = InviteForm(request.POST, inviter=seat)
    if not form.is_valid():
        return _members_page(request, seat, form, status=400)
    try:
        invitation = services.invitation_create(
            workspace=seat.workspace,
            invited_by=_user(request),
            email=form.cleaned_data["email"],
            role=form.cleaned_data["role"],
            by=seat,
        )
    except WeftError as error:
        form.add_error("email", error.message)
        return _members_page(request, seat, form, status=400)
    accept_url = request.build_absolute_uri(reverse("invite_accept", kwargs={"token": invitation.token}))
    services.invitation_send(invitation=invitation, accept_url=accept_url)
    messages.success(request, f"Invitation sent to {invitation.email}. The link works for 7 days.")
    return redirect("workspace_members", slug=slug)


@login_required
def member_role(request: HttpRequest, slug: str, seat_id: int) -> HttpResponse:
    seat = access_managing_seat(_user(request), slug)
    target = access_member_seat(seat, seat_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Pick one of the roles.")
        return redirect("workspace_members", slug=slug)
    try:
        services.seat_set_role(seat=target, role=form.cleaned_data["role"], by=seat)
    except WeftError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"{target.user.email} is now {target.get_role_display().lower()}.")
    return redirect("workspace_members", slug=slug)


@login_required
def member_remove(request: HttpRequest, slug: str, seat_id: int) -> HttpResponse:
    seat = access_managing_seat(_user(request), slug)
    target = access_member_seat(seat, seat_id)
    if request.method == "GET":
        confirm = {
            "title": f"Remove {target.user.email}?",
            "text": f"{target.user.email} loses access to {seat.workspace.name} and its board now. "
            "You can invite them again later.",
            "action": request.path,
            "button": "Remove member",
            "cancel": reverse("workspace_members", kwargs={"slug": slug}),
        }
        return render(request, "accounts/confirm.html", {"confirm": confirm})
    if request.method != "POST":
        return HttpResponseNotAllowed(["GET", "POST"])
    try:
        services.seat_remove(seat=target, by=seat)
    except WeftError as error:
        messages.error(request, error.message)
        return redirect("workspace_members", slug=slug)
    if target.pk == seat.pk:
        messages.success(request, f"You left {seat.workspace.name}.")
        return redirect("home")
    messages.success(request, f"{target.user.email} was removed from {seat.workspace.name}.")
    return redirect("workspace_members", slug=slug)


@login_required
def invitation_revoke(request: HttpRequest, slug: str, invitation_id: int) -> HttpResponse:
    seat = access_managing_seat(_user(request), slug)
    invitation = access_invitation(seat, invitation_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    services.invitation_revoke(invitation=invitation)
    messages.success(request, f"The invitation for {invitation.email} was withdrawn.")
    return redirect("workspace_members", slug=slug)


def _invitation_problem(request: HttpRequest, error: WeftError) -> HttpResponse:
    reason = error.details["reason"]
    context = {"reason": reason, "message": error.message}
    return render(
        request, "accounts/invitation_problem.html", context, status=INVITATION_STATUS.get(reason, 410)
    )


def invite_accept(request: HttpRequest, token: str) -> HttpResponse:
    """The link in an invitation email: explain, then accept with one button.

    The token is the capability: anyone holding it may read which workspace invites which address;
    only the signed-in owner of that address can accept.
    """
    user = _user(request) if request.user.is_authenticated else None
    if request.method == "POST":
        if user is None:
            return redirect(f"{reverse('account_login')}?next={request.path}")
        try:
            seat = services.invitation_accept(token=token, user=user)
        except WeftError as error:
            return _invitation_problem(request, error)
        _remember(request, seat.workspace.slug)
        messages.success(request, f"Welcome to {seat.workspace.name}.")
        return redirect(workspace_landing_url(seat.workspace.slug))
    try:
        invitation = services.invitation_check(token=token, user=user)
    except WeftError as error:
        return _invitation_problem(request, error)
    has_account = user is not None or selectors.email_has_account(invitation.email)
    return render(
        request,
        "accounts/invitation.html",
        {"invitation": invitation, "has_account": has_account, "next": request.path},
    )
