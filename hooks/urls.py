"""The workspace's webhook pages, under /w/<slug>/webhooks/ (owners and admins only)."""

from django.urls import path

from hooks import views

app_name = "hooks"

urlpatterns = [
    path("", views.subscriptions, name="subscriptions"),
    path("new/", views.subscription_create, name="subscription_create"),
    path("<int:subscription_id>/", views.subscription, name="subscription"),
    path("<int:subscription_id>/delete/", views.subscription_delete, name="subscription_delete"),
    path("deliveries/<int:delivery_id>/redeliver/", views.delivery_redeliver, name="delivery_redeliver"),
]
