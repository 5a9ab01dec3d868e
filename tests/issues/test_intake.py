"""Where an issue goes: the feedback workspace, the reporter's own, or one that opened intake, with its
daily cap per reporting workspace; and the redaction mode the receiving workspace chose."""

from __future__ import annotations

import pytest
from django.test import override_settings

from accounts.models import User
from accounts.services import workspace_create
from issues.models import IntakeSettings, Issue, RedactionMode
from tests.issues.helpers import submit
from weft.errors import WeftError

pytestmark = pytest.mark.django_db


@pytest.fixture
def feedback(db):
    ops = User.objects.create_user(email="ops@example.com", password="x")
    return workspace_create(owner=ops, name="Weft feedback")


def test_without_a_feedback_workspace_an_issue_goes_to_the_reporters_own(agent, ws_a):
    with override_settings(WEFT_FEEDBACK_WORKSPACE=""):
        assert submit(agent).issue.workspace_id == ws_a.pk


def test_with_a_feedback_workspace_an_issue_without_workspace_goes_there(agent, ws_a, feedback):
    with override_settings(WEFT_FEEDBACK_WORKSPACE=feedback.slug):
        issue = submit(agent).issue
    assert (issue.workspace_id, issue.reporter_workspace_id) == (feedback.pk, ws_a.pk)


def test_a_feedback_slug_that_names_no_workspace_falls_back_to_the_reporters_own(agent, ws_a):
    with override_settings(WEFT_FEEDBACK_WORKSPACE="gone"):
        assert submit(agent).issue.workspace_id == ws_a.pk


def test_the_reporter_may_name_its_own_workspace_or_the_feedback_one(agent, ws_a, feedback):
    with override_settings(WEFT_FEEDBACK_WORKSPACE=feedback.slug):
        assert submit(agent, workspace=ws_a.slug).issue.workspace_id == ws_a.pk
        assert submit(agent, workspace=feedback.slug).issue.workspace_id == feedback.pk


def test_a_workspace_that_opened_intake_receives_issues_from_others(agent, ws_b):
    IntakeSettings.objects.create(workspace=ws_b, open_intake=True)
    assert submit(agent, workspace=ws_b.slug).issue.workspace_id == ws_b.pk


def test_intake_is_closed_by_default(agent, ws_b):
    with pytest.raises(WeftError) as refused:
        submit(agent, workspace=ws_b.slug)
    assert refused.value.code == "not_found"
    assert refused.value.details == {"kind": "workspace", "id": ws_b.slug}
    assert not Issue.objects.exists()


def test_the_daily_cap_counts_per_reporting_workspace_at_its_edge(agent, agent_b, ws_b, alice):
    IntakeSettings.objects.create(workspace=ws_b, open_intake=True, daily_cap_per_workspace=2)
    submit(agent, workspace=ws_b.slug)
    submit(agent, workspace=ws_b.slug)  # the second is the cap itself: accepted
    with pytest.raises(WeftError) as refused:
        submit(agent, workspace=ws_b.slug)
    assert refused.value.code == "intake_limit_reached"
    assert refused.value.details["limit"] == 2 and refused.value.details["used"] == 2
    assert refused.value.fix.marker == "Wait"
    # The receiving workspace's own agents are not capped.
    for _ in range(3):
        submit(agent_b)
    assert Issue.objects.filter(workspace=ws_b).count() == 5


def test_strip_mode_replaces_findings_and_reject_mode_refuses_with_the_kinds(agent, ws_a):
    stored = submit(agent, body="write to dana@example.com").issue
    assert "dana@example.com" not in stored.body and stored.redacted_kinds == ["EMAIL"]
    IntakeSettings.objects.create(workspace=ws_a, redaction_mode=RedactionMode.REJECT)
    with pytest.raises(WeftError) as refused:
        submit(agent, body="write to dana@example.com")
    assert refused.value.code == "pii_detected"
    assert refused.value.details == {"kinds": ["EMAIL"], "fields": ["body"]}
    fixed = refused.value.fix.call
    assert fixed is not None and fixed.tool == "submit_issue"
    assert "dana@example.com" not in fixed.args["body"] and "<EMAIL:" in fixed.args["body"]
    assert Issue.objects.count() == 1
    # The Fix (the redacted text) is accepted as written.
    assert submit(agent, **{k: v for k, v in fixed.args.items()}).issue.body == fixed.args["body"]


def test_an_owner_opens_intake_and_a_member_may_not(ws_a, alice, bob):
    from accounts.models import Seat
    from issues.services import intake_update
    from weft.models import Event

    owner = Seat.objects.get(workspace=ws_a, user=alice)
    opened = intake_update(
        workspace=ws_a, by_seat=owner, open_intake=True, daily_cap_per_workspace=5, redaction_mode="reject"
    )
    assert (opened.open_intake, opened.daily_cap_per_workspace, opened.redaction_mode) == (True, 5, "reject")
    assert Event.objects.filter(type="issue_intake.updated", workspace_id=ws_a.pk).count() == 1
    member = Seat.objects.get(workspace=ws_a, user=bob)
    with pytest.raises(WeftError) as refused:
        intake_update(
            workspace=ws_a,
            by_seat=member,
            open_intake=False,
            daily_cap_per_workspace=5,
            redaction_mode="strip",
        )
    assert refused.value.code == "permission_denied"
    for cap, mode in [(0, "strip"), (10_001, "strip"), (5, "mask")]:
        with pytest.raises(WeftError) as invalid:
            intake_update(
                workspace=ws_a,
                by_seat=owner,
                open_intake=True,
                daily_cap_per_workspace=cap,
                redaction_mode=mode,
            )
        assert invalid.value.code == "invalid_argument"
    assert IntakeSettings.objects.get(workspace=ws_a).daily_cap_per_workspace == 5
