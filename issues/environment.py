"""PURE: where a reported behaviour can be reproduced, from the build the reporter named.

`classify(git_sha, app_version)` reads the two provenance fields (either may be empty):

1. local_branch: a branch marker in either field: `feature/x@1a2b3c4`, `1a2b3c4@main`,
   `1a2b3c4 (feature/x)`, `branch:fix-login`, `heads/fix-login`, `1.4.2+branch.fix-login`.
2. local_commit: a version with local build metadata: `1.4.3.dev4+g1a2b3c4`, `1.4.2+g1a2b3c4`,
   `v1.4.2-3-g1a2b3c4`, `1.4.2-dev`, `1.4.2.dev0`, `1.4.2-dirty`, `1.4.2+local`.
3. public_release: a plain release version, optionally with `v`, a pre-release such as `-rc.1`,
   or a client prefix (`claude-code/2.0.14`).
4. local_commit: otherwise a commit sha alone (7 to 64 hex digits, `-dirty` allowed).
5. unknown: nothing either field can be read as (`unknown`, `latest`, empty).

The rules are tried in this order: a branch marker wins because a branch build cannot be
fetched from a release or a commit alone; a readable version decides before the sha, since a
release version with its commit is still the public release.
"""

from __future__ import annotations

import re

PUBLIC_RELEASE = "public_release"
LOCAL_COMMIT = "local_commit"
LOCAL_BRANCH = "local_branch"
UNKNOWN = "unknown"

_SHA = re.compile(r"[0-9a-f]{7,64}(-dirty)?", re.IGNORECASE)
_BRANCH_NAME = r"[A-Za-z0-9._/-]*[A-Za-z][A-Za-z0-9._/-]*"
_BRANCH = [
    re.compile(rf"^{_BRANCH_NAME}@[0-9a-f]{{7,64}}$", re.IGNORECASE),  # feature/x@1a2b3c4
    re.compile(rf"^[0-9a-f]{{7,64}}@{_BRANCH_NAME}$", re.IGNORECASE),  # 1a2b3c4@main
    re.compile(rf"^[0-9a-f]{{7,64}} \({_BRANCH_NAME}\)$", re.IGNORECASE),  # 1a2b3c4 (main)
    re.compile(rf"^(branch:|heads/|refs/heads/){_BRANCH_NAME}$"),  # branch:fix, heads/fix
    re.compile(rf"\+(branch|br)\.{_BRANCH_NAME}$"),  # 1.4.2+branch.fix-login
]
_RELEASE = re.compile(r"v?\d+(\.\d+){1,3}(-(rc|alpha|beta|a|b|pre)\.?\d*)?", re.IGNORECASE)
_LOCAL_VERSION = re.compile(
    r"v?\d+(\.\d+){1,3}"
    r"(\.dev\d*|-dev\d*|-dirty|-\d+-g[0-9a-f]{7,64}(-dirty)?|\+[A-Za-z0-9.]+|-[0-9a-f]{7,64})"
    r"(\+[A-Za-z0-9.]+)?",
    re.IGNORECASE,
)


def _version_part(value: str) -> str:
    """A client's `name/version` read as its version; a plain version as itself."""
    return value.rsplit("/", 1)[-1] if re.fullmatch(r"[A-Za-z][\w.-]*/\S+", value) else value


def has_branch_marker(value: str) -> bool:
    return any(pattern.search(value) for pattern in _BRANCH)


def classify(git_sha: str, app_version: str) -> str:
    """The environment class of one report (see the table above)."""
    sha, version = git_sha.strip(), app_version.strip()
    if has_branch_marker(sha) or has_branch_marker(version):
        return LOCAL_BRANCH
    release = _version_part(version)
    if _LOCAL_VERSION.fullmatch(release) and not _RELEASE.fullmatch(release):
        return LOCAL_COMMIT
    if _RELEASE.fullmatch(release):
        return PUBLIC_RELEASE
    if _SHA.fullmatch(sha):
        return LOCAL_COMMIT
    return UNKNOWN


def client_version(name: str | None, version: str | None) -> str | None:
    """The app version a connected client stands for: `claude-code/2.0.14`, or None when unknown."""
    name, version = (name or "").strip(), (version or "").strip()
    if not name or not version:
        return None
    return f"{name}/{version}"
