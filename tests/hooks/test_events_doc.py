"""docs/events.md shows one envelope per event type the code emits."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ["accounts", "boards", "hooks", "issues", "weft"]
EMITTED = [
    re.compile(r'\btype="([a-z_]+\.[a-z_]+)"'),
    re.compile(r'_emit\([^,()]+, "([a-z_]+\.[a-z_]+)"'),
]
# Types built at run time: the sweep's f"run.{target}" (stale, or released after a question hold).
BUILT = {"run.stale", "run.released"}


def _emitted() -> set[str]:
    found = set(BUILT)
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            text = path.read_text()
            for pattern in EMITTED:
                found.update(pattern.findall(text))
    return found


def _documented() -> dict[str, dict]:
    text = (ROOT / "docs" / "events.md").read_text()
    sections = re.findall(r"### `([a-z_.]+)`\n\n```json\n(.*?)\n```", text, re.S)
    return {name: json.loads(body) for name, body in sections}


def test_every_emitted_type_has_an_example():
    emitted = _emitted()
    assert {"task.created", "run.started", "seat.added", "subscription.created"} <= emitted, emitted
    missing = emitted - set(_documented())
    assert not missing, f"docs/events.md has no example of {sorted(missing)}"


def test_every_example_is_an_envelope_of_its_type():
    for name, example in _documented().items():
        assert set(example) == {"id", "type", "workspace", "entity", "occurredAt", "data"}, name
        assert example["type"] == name
        assert set(example["entity"]) == {"type", "id"} and isinstance(example["entity"]["id"], str)
