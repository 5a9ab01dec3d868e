"""Where a submitted issue goes, and whether that workspace takes it from this reporter today.

- `workspace` omitted: the operators' feedback workspace (settings.WEFT_FEEDBACK_WORKSPACE),
  or the reporter's own workspace when no feedback workspace is set (or it does not exist).
- `workspace` named: the reporter's own workspace and the feedback workspace always take
  issues; any other only when it opened intake (IntakeSettings.open_intake). A workspace that
  does not exist and one that did not open intake answer alike (`not_found`), so a refusal
  never tells a stranger that a workspace exists.
- A workspace other than the reporter's own takes at most `daily_cap_per_workspace` issues per
  UTC day from any one reporting workspace (`intake_limit_reached`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from accounts.models import Seat, Workspace
from boards import clock
from issues.models import IntakeSettings, Issue, RedactionMode
from issues.services.common import intake_settings
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import Hint, wait

DAILY_CAP_MAX = 10_000


def feedback_workspace() -> Workspace | None:
    slug = settings.WEFT_FEEDBACK_WORKSPACE
    return Workspace.objects.filter(slug=slug).first() if slug else None


def receiving_workspace(reporter: Workspace, slug: str | None, *, fix_hint: Hint) -> Workspace:
    """The workspace that receives the issue; `fix_hint` is the refusal's Fix (the call without it)."""
    feedback = feedback_workspace()
    if not slug:
        return feedback or reporter
    if slug == reporter.slug:
        return reporter
    if feedback is not None and slug == feedback.slug:
        return feedback
    named = Workspace.objects.filter(slug=slug).first()
    if named is not None and intake_settings(named).open_intake:
        return named
    raise WeftError(
        "not_found",
        f"no workspace {slug!r} receives issues from this workspace",
        details={"kind": "workspace", "id": slug},
        fix=fix_hint,
    )


def day_start(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def check_daily_cap(receiving: Workspace, reporter: Workspace, now: datetime) -> None:
    """Refuse past the receiving workspace's cap for this reporting workspace today.

    Count, then insert: two submissions racing at cap − 1 may both pass. The cap is a flood
    guard, not a quota, so one issue over it is accepted rather than serialising intake.
    """
    if receiving.pk == reporter.pk:
        return
    cap = intake_settings(receiving).daily_cap_per_workspace
    since = day_start(now)
    filed = Issue.objects.filter(
        workspace=receiving, reporter_workspace=reporter, created_at__gte=since
    ).count()
    if filed < cap:
        return
    reopens = since + timedelta(days=1)
    raise WeftError(
        "intake_limit_reached",
        f"workspace {receiving.slug} takes at most {cap} issues a day from this workspace",
        details={"limit": cap, "used": filed, "resetsAt": reopens.isoformat()},
        fix=wait(f"the intake reopens at {reopens.isoformat()}; submit again then", "get_my_work"),
    )


def intake_update(
    *,
    workspace: Workspace,
    by_seat: Seat,
    open_intake: bool,
    daily_cap_per_workspace: int,
    redaction_mode: str,
) -> IntakeSettings:
    """An owner or admin sets how the workspace receives issues (the web triage's settings form)."""
    if by_seat.workspace_id != workspace.pk or not by_seat.can_manage:
        raise WeftError(
            "permission_denied",
            f"only owners and admins of workspace {workspace.slug} change how it receives issues",
            details={"workspace": workspace.slug},
            fix=wait(f"an owner or admin of workspace {workspace.slug} changes its intake", "get_my_work"),
        )
    if isinstance(daily_cap_per_workspace, bool) or not 1 <= daily_cap_per_workspace <= DAILY_CAP_MAX:
        raise invalid_argument("daily_cap_per_workspace", f"a whole number from 1 to {DAILY_CAP_MAX}")
    if redaction_mode not in RedactionMode.values:
        raise invalid_argument("redaction_mode", f"one of {', '.join(RedactionMode.values)}")
    with transaction.atomic():
        found, _ = IntakeSettings.objects.select_for_update().get_or_create(workspace=workspace)
        found.open_intake = bool(open_intake)
        found.daily_cap_per_workspace = daily_cap_per_workspace
        found.redaction_mode = redaction_mode
        found.updated_at = clock.db_now()
        found.save()
        emit(
            workspace_id=workspace.pk,
            type="issue_intake.updated",
            entity_type="workspace",
            entity_id=workspace.pk,
            payload={
                "openIntake": found.open_intake,
                "dailyCapPerWorkspace": found.daily_cap_per_workspace,
                "redactionMode": found.redaction_mode,
            },
        )
    return found
