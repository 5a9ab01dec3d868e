"""`weft`: the console script (pyproject `[project.scripts]`) and `python -m cli`."""

from __future__ import annotations

import sys

from cli.app import run


def main() -> None:
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
