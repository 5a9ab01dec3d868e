"""The event log in the admin: read-only, for operators tracing what happened."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from weft.models import Event


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ["workspace", "position", "type", "entity_type", "entity_id", "epoch", "created_at"]
    list_filter = ["type", "entity_type"]
    search_fields = ["workspace__slug", "entity_id", "type"]
    list_select_related = ["workspace"]
    ordering = ["-created_at", "-id"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in Event._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
