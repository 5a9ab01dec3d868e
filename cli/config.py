"""Where the CLI keeps its sign-in and the run it holds: one JSON file, readable by its owner only.

`$XDG_CONFIG_HOME/weft/credentials.json` (or `~/.config/weft/`), mode 0600 from its first byte.
The base URL comes from `--url`, then `WEFT_URL`, then the one saved at login.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

DEFAULT_URL = "http://127.0.0.1:8000"


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "weft"


def credentials_path() -> Path:
    return config_dir() / "credentials.json"


def load() -> dict[str, Any]:
    try:
        data = json.loads(credentials_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(data: dict[str, Any]) -> None:
    """Write the file with mode 0600; it is created with that mode, never widened then narrowed."""
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
    os.replace(tmp, path)


def update(**changes: Any) -> None:
    data = load()
    data.update(changes)
    save({k: v for k, v in data.items() if v is not None})


def forget() -> bool:
    try:
        credentials_path().unlink()
    except FileNotFoundError:
        return False
    return True


def base_url(flag: str | None) -> str:
    return (flag or os.environ.get("WEFT_URL") or load().get("url") or DEFAULT_URL).rstrip("/")
