"""docs/events.md has a section, with an example envelope, for every event type the code emits.

The types are read from the source: every call of `emit(...)` (or of a module's `_emit(...)`
wrapper) in the apps, its `type=` argument (a wrapper's second argument) taken apart with `ast`.
A type the scan cannot read — a variable, an f-string not listed in BUILT — fails the test
rather than slipping past it.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("accounts", "boards", "hooks", "issues", "weft")
DOC = ROOT / "docs" / "events.md"
# Types built at run time, by the file and the expression that builds them.
BUILT = {
    # The sweep: lease.expired_state() is stale, or released when a question hold ran out.
    ("boards/services/common.py", "f'run.{after.state}'"): {"run.stale", "run.released"},
    # Handing an answer or an approval over once: one helper for both rows.
    ("boards/services/delivery.py", "f'{kind}.delivered'"): {"question.delivered", "approval.delivered"},
}
ENVELOPE = {"id", "type", "workspace", "entity", "occurredAt", "data"}


def _emit_calls(tree: ast.Module) -> list[tuple[ast.expr, set[str]]]:
    """Each emit call's type expression, with the parameters of the function it is in."""
    found: list[tuple[ast.expr, set[str]]] = []

    def visit(node: ast.AST, params: set[str]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            params = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]}
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name == "emit" or name.endswith("_emit") or name.startswith(("_emit_", "emit_")):
                typed = [k.value for k in node.keywords if k.arg == "type"]
                if not typed and name != "emit":
                    # A wrapper: its type is the one literal it is given, else its second argument.
                    literal: list[ast.expr] = [
                        a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                    ]
                    typed = literal[:1] or node.args[1:2]
                    if not typed:  # a wrapper that names its own type: its emit call is scanned
                        typed = [ast.Name(id="__own__")]
                        params = params | {"__own__"}
                assert typed, f"an emit call without a type: {ast.unparse(node)}"
                found.append((typed[0], params))
        for child in ast.iter_child_nodes(node):
            visit(child, params)

    visit(tree, set())
    return found


def _types_of(expr: ast.expr, params: set[str], where: str) -> set[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.IfExp):
        return _types_of(expr.body, params, where) | _types_of(expr.orelse, params, where)
    if isinstance(expr, ast.Name) and expr.id in params:
        return set()  # a wrapper passing its caller's type on: its callers are scanned
    built = BUILT.get((where, ast.unparse(expr)))
    assert built, f"{where}: cannot read the event type {ast.unparse(expr)}; list it in BUILT"
    return built


def emitted_types() -> set[str]:
    types: set[str] = set()
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            where = str(path.relative_to(ROOT))
            for expr, params in _emit_calls(ast.parse(path.read_text(), filename=where)):
                types |= _types_of(expr, params, where)
    return types


def documented_examples() -> dict[str, dict]:
    sections = re.findall(r"^### `([a-z_.]+)`\n\n```json\n(.*?)\n```", DOC.read_text(), re.S | re.M)
    return {name: json.loads(body) for name, body in sections}


def test_the_scan_finds_the_types_it_must():
    types = emitted_types()
    assert {"task.created", "run.started", "run.stale", "seat.added", "workspace.suspension_lifted"} <= types
    assert all(re.fullmatch(r"[a-z_]+\.[a-z_]+", t) for t in types), types


def test_every_emitted_type_has_a_section_with_an_example():
    missing = emitted_types() - set(documented_examples())
    assert not missing, f"docs/events.md has no section for {sorted(missing)}"


def test_every_example_is_an_envelope_of_its_type():
    for name, example in documented_examples().items():
        assert set(example) == ENVELOPE, name
        assert example["type"] == name
        assert set(example["entity"]) == {"type", "id"}, name
        assert isinstance(example["id"], str) and example["id"].isdigit(), name
        assert isinstance(example["entity"]["id"], str), name


def test_the_stream_protocol_is_documented():
    text = DOC.read_text()
    for needle in ("/api/v1/events/stream", "Last-Event-ID", "### `gap`", ": keepalive", "oldestCursor"):
        assert needle in text, needle


def test_the_types_a_filter_may_name_are_the_types_the_code_emits():
    from weft.event_types import TYPES

    assert set(TYPES) == emitted_types(), "weft/event_types.py must list every emitted type"


def test_the_entity_types_a_filter_may_name_are_the_documented_ones():
    from weft.event_types import ENTITY_TYPES

    documented = {example["entity"]["type"] for example in documented_examples().values()}
    assert set(ENTITY_TYPES) == documented
