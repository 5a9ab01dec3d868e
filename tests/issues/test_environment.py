"""The environment classification, as a table: every row of issues/environment.py's docstring."""

from __future__ import annotations

import pytest

from issues.environment import classify, client_version

TABLE = [
    # (reporter_git_sha, reporter_app_version, class)
    ("", "1.4.2", "public_release"),
    ("", "v1.4.2", "public_release"),
    ("", "1.4.2-rc.1", "public_release"),
    ("", "2.0", "public_release"),
    ("", "claude-code/2.0.14", "public_release"),
    ("", "Cursor/1.7.0", "public_release"),  # a client name may start with a capital
    ("", "acme/agent/1.4.2", "public_release"),  # the version is after the last slash
    ("", "./1.4.2", "unknown"),  # not name/version: judged whole
    ("1a2b3c4d", "1.4.2", "public_release"),
    ("", "1.4.3.dev4+g1a2b3c4", "local_commit"),
    ("", "1.4.2+g1a2b3c4", "local_commit"),
    ("", "v1.4.2-3-g1a2b3c4", "local_commit"),
    ("", "v1.4.2-3-g1a2b3c4-dirty", "local_commit"),
    ("", "1.4.2-dev", "local_commit"),
    ("", "1.4.2.dev0", "local_commit"),
    ("", "1.4.2-dirty", "local_commit"),
    ("", "1.4.2+local", "local_commit"),
    ("", "weft-cli/1.4.2+g1a2b3c4", "local_commit"),
    ("1a2b3c4", "", "local_commit"),
    ("1A2B3C4D5E6F", "", "local_commit"),
    ("0123456789abcdef0123456789abcdef01234567", "", "local_commit"),
    ("1a2b3c4-dirty", "", "local_commit"),
    ("1a2b3c4", "unknown", "local_commit"),
    ("feature/x@1a2b3c4", "", "local_branch"),
    ("1a2b3c4@main", "", "local_branch"),
    ("1a2b3c4 (fix-login)", "", "local_branch"),
    ("branch:fix-login", "", "local_branch"),
    ("heads/fix-login", "", "local_branch"),
    ("refs/heads/fix/login", "", "local_branch"),
    ("", "1.4.2+branch.fix-login", "local_branch"),
    ("feature/x@1a2b3c4", "1.4.2", "local_branch"),
    ("", "", "unknown"),
    ("unknown", "", "unknown"),
    ("", "latest", "unknown"),
    ("123", "", "unknown"),
    ("not a sha", "nightly", "unknown"),
    ("  ", "  ", "unknown"),
]


@pytest.mark.parametrize(("sha", "version", "expected"), TABLE)
def test_it_classifies_each_row_of_the_table(sha: str, version: str, expected: str) -> None:
    assert classify(sha, version) == expected


@pytest.mark.parametrize(
    ("name", "version", "expected"),
    [
        ("claude-code", "2.0.14", "claude-code/2.0.14"),
        (" cursor ", " 1.7 ", "cursor/1.7"),
        ("claude-code", "", None),
        ("", "2.0.14", None),
        (None, None, None),
    ],
)
def test_it_names_a_clients_version(name: str | None, version: str | None, expected: str | None) -> None:
    assert client_version(name, version) == expected
