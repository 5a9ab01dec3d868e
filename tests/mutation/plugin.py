"""A pytest plugin loaded only inside the mutation copies: the test database is migrated once.

mutmut runs a fresh pytest session for every mutant, and migrating a new in-memory SQLite database
each time would cost more than the tests. The first session (mutmut's stats run, with --reuse-db)
migrates a file database and keeps it; every later session works on its own copy of that file, so
two mutants running at once never share a database.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

_copies: list[Path] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    from django.conf import settings

    template = Path(os.environ["WEFT_MUTATION_DB"])
    name = template
    if template.exists():
        name = template.with_name(f"{template.stem}-{os.getpid()}{template.suffix}")
        shutil.copyfile(template, name)
        _copies.append(name)
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = str(name)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    while _copies:
        name = _copies.pop()
        for path in (name, name.with_name(name.name + "-wal"), name.with_name(name.name + "-shm")):
            path.unlink(missing_ok=True)
