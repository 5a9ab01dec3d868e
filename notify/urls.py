from django.urls import path

from notify import views

urlpatterns = [
    path("account/notifications/", views.notify_settings, name="notify_settings"),
    path("push/key/", views.push_key, name="push_key"),
    path("push/subscriptions/", views.push_subscribe, name="push_subscribe"),
    path("push/subscriptions/delete/", views.push_unsubscribe, name="push_unsubscribe"),
    path("sw.js", views.service_worker, name="service_worker"),
    path("manifest.webmanifest", views.manifest, name="manifest"),
]
