"""The workspace's issue triage, under /w/<slug>/issues/ (owners and admins only)."""

from django.urls import path

from issues import views

app_name = "issues"

urlpatterns = [
    path("", views.issue_list, name="list"),
    path("close/", views.issues_close, name="close"),
    path("<int:issue_id>/", views.issue, name="issue"),
    path("<int:issue_id>/reply/", views.issue_reply, name="reply"),
    path("<int:issue_id>/status/", views.issue_status, name="status"),
    path("<int:issue_id>/duplicate/", views.issue_duplicate, name="duplicate"),
    path("<int:issue_id>/upstream/", views.issue_upstream, name="upstream"),
    path("<int:issue_id>/task/", views.issue_task, name="task"),
]
