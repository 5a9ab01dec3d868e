"""weft.hints: the renderers, render(result), and problems() catching each rule violation."""

from dataclasses import dataclass
from typing import Any

import pytest

from weft.hints import DONE, Call, Hint, fix, has_placeholder, next_, problems, render, render_text, wait


@dataclass
class Result:
    hint: Hint

    def payload(self) -> dict[str, Any]:
        return {"taskId": 12}

    def summary(self) -> str:
        return "Started task 12."


def test_render_gives_text_and_json_that_agree():
    text, payload = render(Result(next_("report_progress", {"runId": "r1", "note": "started"})))
    assert text == 'Started task 12.\nNext: report_progress {"note": "started", "runId": "r1"}'
    line = 'Next: report_progress {"note": "started", "runId": "r1"}'
    assert payload == {"taskId": 12, "_next_action": line}
    assert problems(text, payload) == []


def test_render_cli_uses_kebab_case_flags():
    text, _ = render(Result(next_("start_task", {"id": 12, "leaseToken": "a b"})), cli=True)
    assert text.endswith("Next: weft start-task --id 12 --lease-token 'a b'")
    assert problems(text, cli=True) == []


def test_valid_forms_pass():
    assert problems("Body\nDone.", {"_next_action": "Done."}) == []
    assert problems("Done.", {"_next_action": None}) == []
    assert problems("Wait: a person answers; check again with get_my_work {}") == []
    with_or = Hint("Next", Call("start_task", {"id": 1}), fallback=Call("get_my_work"))
    assert problems(render_text("x", with_or), with_or.as_json()) == []
    assert problems(render_text("", fix("get_my_work"), error="lease_lost — gone")) == []


@pytest.mark.parametrize(
    ("text", "payload", "cli", "rule"),
    [
        ("Started task 12.", None, False, "presence"),
        ("Next: start_task {}", {}, False, "presence: JSON"),
        ('Next: start_task {"id": 1}\nNext: start_task {"id": 2}', None, False, "determinism"),
        ('Done.\nNext: start_task {"id": 1}', None, False, "conditionality: Done."),
        ('Or: start_task {"id": 1}', None, False, "conditionality: Or:"),
        ('Wait: x\nNext: start_task {"id": 1}', None, False, "determinism"),
        ("Fix: get_my_work {}", None, False, "conditionality: Fix:"),
        ('Next: start_task {"id": "<id>"}', None, False, "actionability: placeholder"),
        ('Next: start_task {"id": "TASK-NNN"}', None, False, "actionability: placeholder"),
        ("Wait: ...", None, False, "actionability: placeholder"),
        ("Next: start the task", None, False, "actionability: not a complete call"),
        ("Next: start_task {id: 1}", None, False, "actionability: arguments are not JSON"),
        ("Next: start-task 1", None, True, "actionability: not a complete CLI call"),
        ("Next: ", None, False, "actionability: empty"),
        ('Next: start_task {"id": 1}', {"_next_action": 'Next: start_task {"id": 2}'}, False, "consistency"),
        (
            'Next: start_task {"id": 1}',
            {"_next_action": 'Next: start_task {"id": 1}', "_or_action": "Or: x {}"},
            False,
            "consistency: _or_action without",
        ),
        (
            'Next: start_task {"id": 1}\nOr: get_my_work {}',
            {"_next_action": 'Next: start_task {"id": 1}'},
            False,
            "consistency: _or_action does not match",
        ),
    ],
)
def test_problems_catches_each_violation(text, payload, cli, rule):
    found = problems(text, payload, cli=cli)
    assert any(p.startswith(rule) for p in found), found


def test_hint_values():
    assert DONE.lines() == ["Done."]
    assert DONE.as_json() == {"_next_action": "Done."}
    assert wait("the sun rises").lines() == ["Wait: the sun rises"]
    assert wait("x", "get_my_work").lines(cli=True) == ["Wait: x; check again with weft get-my-work"]
    with pytest.raises(AssertionError):
        Hint("Next").lines()
    assert has_placeholder("<id>") and has_placeholder("TASK-NNN") and not has_placeholder("abc_DEF-123")
