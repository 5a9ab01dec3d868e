from django.urls import path

from accounts import plan_views, profile_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("workspaces/new/", views.workspace_new, name="workspace_create"),
    path("account/profile/", profile_views.account_profile, name="account_profile"),
    path("invite/<str:token>/", views.invite_accept, name="invite_accept"),
    path("w/<slug:slug>/", views.workspace_dashboard, name="workspace_dashboard"),
    path("w/<slug:slug>/switch/", views.workspace_switch, name="workspace_switch"),
    path("w/<slug:slug>/leave/", views.workspace_leave, name="workspace_leave"),
    path("w/<slug:slug>/plan/", plan_views.workspace_plan, name="workspace_plan"),
    path("w/<slug:slug>/plan/change/", plan_views.plan_change, name="plan_change"),
    path(
        "w/<slug:slug>/plan/changes/<int:change_id>/return/",
        plan_views.plan_change_return,
        name="plan_change_return",
    ),
    path(
        "w/<slug:slug>/plan/changes/<int:change_id>/cancel/",
        plan_views.plan_change_cancel,
        name="plan_change_cancel",
    ),
    path("w/<slug:slug>/members/", views.members, name="workspace_members"),
    path("w/<slug:slug>/members/invite/", views.member_invite, name="member_invite"),
    path("w/<slug:slug>/members/<int:seat_id>/role/", views.member_role, name="member_role"),
    path("w/<slug:slug>/members/<int:seat_id>/remove/", views.member_remove, name="member_remove"),
    path(
        "w/<slug:slug>/invitations/<int:invitation_id>/revoke/",
        views.invitation_revoke,
        name="invitation_revoke",
    ),
]
