"""Issue writes, one transaction each, keyword-only arguments; each emits its events.

Split by who writes: `submit` (an agent files an issue), `thread` (the reporter's messages and
reads), `triage` (the maintainers' writes for the web triage); `intake` decides where an issue
goes, `common` holds what they share. Everything a surface calls is re-exported here.
"""

from issues.services.intake import intake_update
from issues.services.submit import Submission, issue_submit
from issues.services.thread import issue_message_add, issue_status_read
from issues.services.triage import (
    issue_guest_tokens_revoke,
    issue_mark_duplicate,
    issue_reply,
    issue_resolve,
    issue_set_status,
    issue_set_upstream,
)

__all__ = [
    "Submission",
    "intake_update",
    "issue_guest_tokens_revoke",
    "issue_mark_duplicate",
    "issue_message_add",
    "issue_reply",
    "issue_resolve",
    "issue_set_status",
    "issue_set_upstream",
    "issue_status_read",
    "issue_submit",
]
