"""The operators' admin: workspaces (seats, plan, usage, the kill switch), people, plans, invitations,
agent connections and personal access tokens (hashes never shown)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.db.models import Count, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from accounts import services
from accounts.models import (
    AgentConnection,
    Invitation,
    PersonalAccessToken,
    Plan,
    PlanChange,
    Seat,
    Usage,
    User,
    Workspace,
)


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    autocomplete_fields = ["user"]
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]


class UsageInline(ReadOnlyInline):
    model = Usage
    fields = readonly_fields = ("period", "kind", "count")
    ordering = ["-period", "kind"]


class InvitationInline(ReadOnlyInline):
    model = Invitation
    fields = readonly_fields = ("email", "role", "created_at", "expires_at", "accepted_at", "revoked_at")
    ordering = ["-created_at"]


class PlanChangeInline(ReadOnlyInline):
    model = PlanChange
    fk_name = "workspace"
    fields = readonly_fields = (
        "created_at",
        "from_plan",
        "from_period",
        "to_plan",
        "to_period",
        "seats",
        "credit_cents",
        "charge_cents",
        "state",
        "by_user",
    )
    ordering = ["-created_at"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "plan", "billing_period", "seat_count", "is_suspended", "created_at"]
    list_filter = ["plan", "billing_period", "is_suspended"]
    list_editable = ["is_suspended"]
    search_fields = ["name", "slug", "seats__user__email"]
    readonly_fields = ["created_at"]
    fields = ["name", "slug", "plan", "billing_period", "is_suspended", "created_at"]
    inlines = [SeatInline, UsageInline, InvitationInline, PlanChangeInline]
    actions = ["suspend", "unsuspend"]
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Workspace]:
        return super().get_queryset(request).select_related("plan").annotate(n_seats=Count("seats"))

    @admin.display(description="Seats", ordering="n_seats")
    def seat_count(self, obj: Workspace) -> int:
        return getattr(obj, "n_seats", obj.people_count)

    def save_model(
        self, request: HttpRequest, obj: Workspace, form: ModelForm[Workspace], change: bool
    ) -> None:
        if change:
            # Plan and kill switch change through the services, which log each change as an event.
            services.workspace_set_plan(workspace=obj, plan=obj.plan, billing_period=obj.billing_period)
            services.workspace_set_suspended(workspace=obj, suspended=obj.is_suspended)
        super().save_model(request, obj, form, change)

    def _set_suspended(self, queryset: QuerySet[Workspace], suspended: bool) -> int:
        return sum(services.workspace_set_suspended(workspace=w, suspended=suspended) for w in queryset)

    @admin.action(description="Suspend: refuse every agent call")
    def suspend(self, request: HttpRequest, queryset: QuerySet[Workspace]) -> None:
        self.message_user(request, f"{self._set_suspended(queryset, True)} workspace(s) suspended.")

    @admin.action(description="Lift the suspension")
    def unsuspend(self, request: HttpRequest, queryset: QuerySet[Workspace]) -> None:
        self.message_user(request, f"{self._set_suspended(queryset, False)} workspace(s) active again.")


class UserSeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    autocomplete_fields = ["workspace"]
    fields = ["workspace", "role", "created_at"]
    readonly_fields = ["created_at"]
    verbose_name = "seat"


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "name", "is_active", "is_staff", "date_joined", "last_login"]
    list_filter = ["is_active", "is_staff", "is_superuser"]
    search_fields = ["email", "name"]
    readonly_fields = ["date_joined", "last_login"]
    fieldsets = (
        (None, {"fields": ("email", "password", "name")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)
    inlines = [UserSeatInline]


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = [
        "code",
        "name",
        "monthly_task_cap",
        "monthly_agent_call_cap",
        "seat_price_month_cents",
        "seat_price_year_cents",
    ]
    search_fields = ["code", "name"]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ["email", "workspace", "role", "created_at", "expires_at", "accepted_at", "revoked_at"]
    list_filter = [
        "role",
        ("accepted_at", admin.EmptyFieldListFilter),
        ("revoked_at", admin.EmptyFieldListFilter),
    ]
    search_fields = ["email", "workspace__name", "workspace__slug"]
    list_select_related = ["workspace"]
    readonly_fields = ["token", "created_at", "accepted_at", "accepted_by", "invited_by"]
    autocomplete_fields = ["workspace"]


@admin.register(AgentConnection)
class AgentConnectionAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace", "user", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "workspace__name", "workspace__slug", "user__email"]
    list_select_related = ["workspace", "user"]
    readonly_fields = ["workspace", "user", "application", "name", "created_at", "last_used_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(PersonalAccessToken)
class PersonalAccessTokenAdmin(admin.ModelAdmin):
    """Hashes only; setting revoked_at ends the token at its next call."""

    list_display = ["name", "workspace", "user", "created_at", "expires_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter), ("expires_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "workspace__slug", "user__email"]
    list_select_related = ["workspace", "user"]
    exclude = ["token_hash"]
    readonly_fields = ["connection", "workspace", "user", "name", "created_at", "expires_at", "last_used_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Usage)
class UsageAdmin(admin.ModelAdmin):
    list_display = ["workspace", "period", "kind", "count"]
    list_filter = ["kind", "period"]
    search_fields = ["workspace__name", "workspace__slug"]
    list_select_related = ["workspace"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(PlanChange)
class PlanChangeAdmin(admin.ModelAdmin):
    """Owners' plan changes: what to invoke or check against the payment provider."""

    list_display = [
        "workspace",
        "from_plan",
        "from_period",
        "to_plan",
        "to_period",
        "seats",
        "net_dollars",
        "provider",
        "state",
        "by_user",
        "created_at",
        "applied_at",
    ]
    list_filter = ["state", "provider", "to_plan"]
    search_fields = ["workspace__name", "workspace__slug", "by_user__email", "reference"]
    list_select_related = ["workspace", "by_user"]
    readonly_fields = [f.name for f in PlanChange._meta.fields]
    date_hierarchy = "created_at"

    @admin.display(description="net ($)")
    def net_dollars(self, change: PlanChange) -> str:
        return f"{change.net_cents / 100:.2f}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
