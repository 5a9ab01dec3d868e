"""Operators see subscriptions and their deliveries; the sealed secret is never shown."""

from django.contrib import admin

from hooks.models import Delivery, Subscription


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["pk", "workspace", "url", "state", "created_at"]
    list_filter = ["state"]
    exclude = ["secret_sealed"]
    readonly_fields = ["workspace", "url", "created_by_user", "created_by_connection", "created_at"]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["message_id", "subscription", "event_type", "state", "attempts", "last_status_code"]
    list_filter = ["state"]
    readonly_fields = [f.name for f in Delivery._meta.fields]
