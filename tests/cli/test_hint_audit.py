"""The hint audit over the CLI: every command's text ends with marker lines that keep the five
rules, and every `weft …` command they name runs without invalid_argument, not_found or
lease_lost (exit 2, 4, 5)."""

from __future__ import annotations

import shlex
import time

import pytest

from accounts.models import User, Workspace
from boards.models import Question
from boards.services import question_answer, task_create
from issues.models import Issue
from tests.cli.conftest import Cli, Result
from weft.hints import problems

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
BROKEN = {2: "invalid_argument", 4: "not_found", 5: "lease_lost"}


def hinted_commands(result: Result) -> list[list[str]]:
    found = []
    for line in result.markers():
        marker, _, rest = line.partition(": ")
        if marker == "Wait":
            rest = rest.rpartition("; check again with ")[2] if "; check again with " in rest else ""
        if rest.startswith("weft "):
            found.append(shlex.split(rest)[1:])
    return found


def audited(cli: Cli, *args: str) -> Result:
    """Run a command, check its markers, then run what they name."""
    result = cli(*args)
    assert not problems(result.out, cli=True), (args, result.out, problems(result.out, cli=True))
    for command in hinted_commands(result):
        followed = cli(*command)
        assert followed.code not in BROKEN, (args, command, followed)
    return result


def test_every_command_names_calls_that_run(signed_in: Cli, ws_a: Workspace, alice: User) -> None:
    task = task_create(workspace=ws_a, title="Audit the hints").task
    other = task_create(workspace=ws_a, title="Another one").task
    for args in (["work"], ["board"], ["task", str(other.pk)], ["search", "Audit"], ["task", "99999"]):
        audited(signed_in, *args)
    audited(signed_in, "start", str(task.pk))
    audited(signed_in, "progress", "--note", "looking")
    audited(signed_in, "ask", "Which format?", "--option", "md", "--option", "rst")
    question_answer(question=Question.objects.get(task=task), user=alice, answer="md")
    audited(signed_in, "work")
    audited(signed_in, "complete", "--outcome", "Audited.", "--claim", "every hint ran")
    audited(signed_in, "start", str(other.pk))
    audited(signed_in, "release", "--reason", "not today")
    audited(signed_in, "progress", "--note", "after the release")  # lease_lost's own Fix runs
    audited(signed_in, "issue", "submit", "--title", "A bug", "--body", "It broke.", "--kind", "bug")
    audited(signed_in, "issue", "status", str(Issue.objects.get().pk))


def test_ask_wait_returns_once_a_person_answers(signed_in: Cli, ws_a: Workspace, alice: User) -> None:
    task = task_create(workspace=ws_a, title="Ask and wait").task
    assert signed_in("start", str(task.pk)).code == 0
    proc = signed_in.popen("ask", "Go ahead?", "--wait")
    deadline = time.monotonic() + 30
    while not Question.objects.filter(task=task).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    question_answer(question=Question.objects.get(task=task), user=alice, answer="yes")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert "yes" in out


def test_a_persons_inbox_commands_name_calls_that_run(
    signed_in: Cli, cli_person: Cli, ws_a: Workspace, alice: User
) -> None:
    """`weft list-inbox`, `decide-inbox-item` and `answer-question` with a token that may decide."""
    review = task_create(workspace=ws_a, title="Review me", review_required=True).task
    audited(signed_in, "start", str(review.pk))
    audited(signed_in, "complete", "--outcome", "Reviewed.")
    asked = task_create(workspace=ws_a, title="Ask me").task
    audited(signed_in, "start", str(asked.pk))
    audited(signed_in, "ask", "Which region?", "--option", "eu", "--option", "us")
    listed = audited(cli_person, "list-inbox")
    assert listed.markers()[0].startswith("Next: weft decide-inbox-item --decision accept --id ")
    question = Question.objects.get(task=asked)
    audited(cli_person, "answer-question", "--id", str(question.pk), "--answer", "eu")
    assert audited(cli_person, "list-inbox").markers() == ["Done."]
    refused = audited(signed_in, "list-inbox")  # an agent's token decides nothing
    assert refused.code == 3 and "forbidden" in refused.out
