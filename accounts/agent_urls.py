from django.urls import path

from accounts import agent_views

urlpatterns = [
    path("agents/", agent_views.connections, name="connections"),
    path("agents/<int:connection_id>/revoke/", agent_views.connection_revoke_view, name="connection_revoke"),
    path("connect/", agent_views.agent_connect, name="agent_connect"),
]
