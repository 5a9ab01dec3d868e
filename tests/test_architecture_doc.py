"""docs/architecture.md is the design of record: its layout names every production module, and
every name its glossary points at exists in the code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("accounts", "api", "boards", "cli", "hooks", "issues", "weft", "tools")


def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def production_modules() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/" in rel or (path.name == "__init__.py" and not path.read_text().strip()):
                continue
            found.append(rel)
    return found


def _named_in_layout() -> set[str]:
    """The module paths the layout names: `pkg/dir/` headings followed by indented `name.py` entries,
    or a path written in full."""
    named: set[str] = set()
    folder = ""
    for line in _section("Layout").splitlines():
        heading = re.match(r"^([a-z_]+(?:/[a-z_]+)*/)\s", line + " ")
        if heading:
            folder = heading.group(1)
        for name in re.findall(r"(?<![\w/.])([a-z_]+(?:/[a-z_]+)*\.py)\b", line):
            named.add(name if "/" in name and name.split("/")[0] in PACKAGES else folder + name)
    return named


def test_the_layout_names_every_production_module() -> None:
    missing = [module for module in production_modules() if module not in _named_in_layout()]
    assert missing == [], f"docs/architecture.md's layout does not name: {missing}"


def test_the_layout_names_no_module_that_is_gone() -> None:
    gone = sorted(name for name in _named_in_layout() if not (ROOT / name).exists())
    assert gone == [], f"docs/architecture.md's layout names modules that do not exist: {gone}"


def _source() -> str:
    return "\n".join(path.read_text() for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_every_name_in_the_glossary_is_in_the_code() -> None:
    source = _source()
    rows = [line for line in _section("Glossary").splitlines() if line.startswith("| ") and "---" not in line]
    missing = []
    for row in rows[1:]:
        in_code = row.rstrip("|").split("|")[-1]
        for name in re.findall(r"`([^`]+)`", in_code):
            if name.endswith(".py") or "/" in name:
                if not (ROOT / name).exists():
                    missing.append(name)
            elif re.fullmatch(r"[A-Za-z_][\w.]*", name) and name.split(".")[-1] not in source:
                missing.append(name)
    assert missing == [], f"glossary names not found in the code: {missing}"
