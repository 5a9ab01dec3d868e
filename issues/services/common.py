"""What the issue writes share: checked text, redaction with the receiving workspace's mode,
the issue's events, the build a reporter named and the refusal when it named none."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from accounts.models import AgentConnection, Workspace
from boards import limits as board_limits
from boards.services.common import limit_error
from issues import limits
from issues.environment import client_version
from issues.models import IntakeSettings, Issue, RedactionMode
from issues.redact import new_salt, redact
from weft.errors import WeftError
from weft.events import emit
from weft.hints import Hint, fix, has_placeholder

PROVENANCE_CODE = "ERR_REPORTER_ENVIRONMENT_REQUIRED"
PROVENANCE_GROUPS = [["reporter_git_sha"], ["reporter_app_version"]]
# The Fix of a missing build: the same call stating that the build is not known. It files the
# issue at once (classified `unknown`); the message says how to name the real build instead.
UNKNOWN_BUILD = "unknown"


@contextmanager
def within_limits() -> Iterator[None]:
    """boards.limits checks inside the block; a value past its limit is invalid_argument."""
    try:
        yield
    except board_limits.LimitError as error:
        raise limit_error(error) from None


def checked_text(field: str, value: Any, limit: int, *, required: bool = True) -> str:
    with within_limits():
        return board_limits.text(field, value, limit, required=required)


def call_hint(tool: str, args: Mapping[str, Any], *, otherwise: Hint) -> Hint:
    """`Fix: <tool> <args>` without empty arguments, unless caller text reads as a placeholder."""
    hint = fix(tool, {k: v for k, v in args.items() if v not in (None, "", [])})
    return otherwise if has_placeholder(hint.lines()[0]) else hint


def intake_settings(workspace: Workspace | int) -> IntakeSettings:
    """The workspace's intake settings; the defaults (closed, strip) when it never saved any."""
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    found = IntakeSettings.objects.filter(workspace_id=workspace_id).first()
    return found if found is not None else IntakeSettings(workspace_id=workspace_id)


def redacted(
    workspace: Workspace | int, texts: Mapping[str, str], *, corrected: Callable[[dict[str, str]], Hint]
) -> tuple[dict[str, str], list[str]]:
    """Every text redacted with one salt, and the kinds found; refused in `reject` mode.

    `corrected(texts)` is the Fix of a refusal: the same call with the redacted texts.
    """
    salt = new_salt()
    out: dict[str, str] = {}
    kinds: set[str] = set()
    for name, text in texts.items():
        result = redact(text, salt=salt)
        out[name] = result.text
        kinds.update(result.kinds)
    found = sorted(kinds)
    if found and intake_settings(workspace).redaction_mode == RedactionMode.REJECT:
        raise WeftError(
            "pii_detected",
            f"the text holds personal data or secrets ({', '.join(found)}); this workspace takes none",
            details={"kinds": found, "fields": sorted(n for n in texts if out[n] != texts[n])},
            fix=corrected(out),
        )
    return out, found


def provenance(
    connection: AgentConnection | None, git_sha: str | None, app_version: str | None
) -> tuple[str, str, bool]:
    """(git_sha, app_version, filled): the build as named, else the connection's client; None refuses."""
    sha = checked_text("reporter_git_sha", git_sha, limits.GIT_SHA, required=False)
    version = checked_text("reporter_app_version", app_version, limits.APP_VERSION, required=False)
    if sha or version or connection is None:
        return sha, version, False
    filled = client_version(connection.client_name, connection.client_version)
    if filled is None:
        return "", "", False
    return "", filled[: limits.APP_VERSION], True


def provenance_required(tool: str, args: Mapping[str, Any], *, otherwise: Hint) -> WeftError:
    """The refusal of a call that names no build: the same call with reporter_git_sha added."""
    return WeftError(
        PROVENANCE_CODE,
        f"{tool} needs the build this was seen on: send reporter_git_sha (the output of"
        " `git rev-parse HEAD` in the checkout) or reporter_app_version (e.g. 1.4.2);"
        f" {UNKNOWN_BUILD!r} files it as a build nobody can name",
        details={"acceptable_field_groups": PROVENANCE_GROUPS},
        fix=call_hint(tool, {**args, "reporter_git_sha": UNKNOWN_BUILD}, otherwise=otherwise),
    )


def emit_issue(issue: Issue, type: str, **payload: Any) -> None:
    """One event of the issue in its receiving workspace's log (inside the writer's transaction)."""
    emit(
        workspace_id=issue.workspace_id,
        type=type,
        entity_type="issue",
        entity_id=issue.pk,
        payload={"issueId": issue.pk, **payload},
    )
