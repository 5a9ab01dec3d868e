"""The structure checker (tools/check_structure.py) refuses each planted violation."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
ORM_LINE = "from boards.models import Task\n\nTASKS = Task.objects.all()\n"


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_structure", ROOT / "tools" / "check_structure.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


checker = _checker()


def _write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _checks(findings: list[object]) -> list[tuple[str, str]]:
    return [(f.check, f.path) for f in findings]  # type: ignore[attr-defined]


@pytest.mark.parametrize("surface", ["views.py", "mcp_tools.py", "consumers.py", "context_processors.py"])
def test_it_refuses_the_orm_in_a_surface(tmp_path: Path, surface: str) -> None:
    _write(tmp_path, f"boards/{surface}", ORM_LINE)
    findings = checker.check_orm(tmp_path)
    assert _checks(findings) == [("orm", f"boards/{surface}")]
    assert findings[0].line == 3
    assert "Task.objects" in findings[0].message


def test_it_allows_the_orm_below_the_surfaces(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "boards/selectors/tasks.py",
        ORM_LINE,
    )
    _write(tmp_path, "boards/views.py", "from boards import selectors\n\nTASKS = selectors.tasks()\n")
    assert checker.check_orm(tmp_path) == []


@pytest.mark.parametrize(
    "condition",
    [
        "card.lease_left.total_seconds < 300",
        "300 >= seconds",
        "owners <= 2",
        'run.state == "active" or run.state == "waiting_input"',
        "seat.role == 'owner' and m.role != 'owner'",
    ],
    ids=["threshold", "threshold-left", "small-threshold", "state-set", "role-rule"],
)
def test_it_refuses_a_rule_in_a_template(tmp_path: Path, condition: str) -> None:
    _write(
        tmp_path,
        "boards/templates/boards/x.html",
        f"<p>\n{{% if ready %}}ok{{% elif {condition} %}}no{{% endif %}}\n",
    )
    findings = checker.check_templates(tmp_path)
    assert _checks(findings) == [("template", "boards/templates/boards/x.html")]
    assert findings[0].line == 2


@pytest.mark.parametrize(
    "condition",
    [
        "items|length == 1",
        "boards|length > 1",
        "value == task.column",
        'item.kind == "question"',
        "not items",
    ],
    ids=["plural", "more-than-one", "two-values", "one-literal", "empty"],
)
def test_it_allows_presentation_in_a_template(tmp_path: Path, condition: str) -> None:
    _write(tmp_path, "templates/x.html", f"{{% if {condition} %}}ok{{% endif %}}\n")
    assert checker.check_templates(tmp_path) == []


def test_it_refuses_a_long_module_and_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(50))
    _write(tmp_path, "weft/long.py", f"def long():\n{body}\n")
    _write(tmp_path, "weft/big.py", "\n".join(f"X{i} = {i}" for i in range(451)) + "\n")
    _write(
        tmp_path, "weft/fine.py", "def short():\n" + "\n".join(f"    x{i} = {i}" for i in range(49)) + "\n"
    )
    findings = checker.check_sizes(tmp_path)
    assert sorted((f.path, f.line, f.message) for f in findings) == [
        ("weft/big.py", 1, "module of 451 lines (at most 450)"),
        ("weft/long.py", 1, "function long of 51 lines (at most 50)"),
    ]


def test_it_leaves_migrations_and_tests_out(tmp_path: Path) -> None:
    long = "def long():\n" + "\n".join(f"    x{i} = Seat.objects.get(pk={i})" for i in range(60)) + "\n"
    _write(tmp_path, "accounts/migrations/0001_initial.py", long)
    _write(tmp_path, "tests/accounts/views.py", long)
    assert checker.run(tmp_path) == []


def test_it_refuses_a_near_copy(tmp_path: Path) -> None:
    copied = textwrap.dedent(
        """\
        def {name}(x):
            y = x + 1
            z = y * 2
            w = z - 3
            v = w / 4
            u = v ** 5
            t = u % 6
            return t
        """
    )
    _write(tmp_path, "accounts/__init__.py", "")
    _write(tmp_path, "accounts/one.py", copied.format(name="one"))
    _write(tmp_path, "accounts/two.py", '"""Two."""\n\nimport os\n\n' + copied.format(name="two"))
    findings = checker.check_copies(tmp_path)
    assert _checks(findings) == [("copies", "accounts/one.py")]
    assert "accounts.two" in findings[0].message


def test_it_allows_five_similar_lines(tmp_path: Path) -> None:
    shared = "    y = x + 1\n    z = y * 2\n    w = z - 3\n    v = w / 4\n    return v\n"
    _write(tmp_path, "weft/__init__.py", "")
    _write(tmp_path, "weft/one.py", "def one(x):\n" + shared)
    _write(tmp_path, "weft/two.py", "def two(x):\n    x = -x\n" + shared)
    assert checker.check_copies(tmp_path) == []


def test_it_exits_non_zero_on_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "accounts/views.py", "from accounts.models import Seat\n\nSEATS = Seat.objects.all()\n")
    assert checker.main(["--root", str(tmp_path), "--skip-copies"]) == 1
    assert "accounts/views.py:3: [orm]" in capsys.readouterr().out
    (tmp_path / "accounts" / "views.py").write_text("SEATS: list[object] = []\n")
    assert checker.main(["--root", str(tmp_path), "--skip-copies"]) == 0
