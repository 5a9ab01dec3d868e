"""PURE: who may change whom in a workspace, by role. Services enforce it, pages ask it."""

from __future__ import annotations

OWNER = "owner"
ADMIN = "admin"
MEMBER = "member"
ROLES = [(OWNER, "Owner"), (ADMIN, "Admin"), (MEMBER, "Member")]
MANAGERS = frozenset({OWNER, ADMIN})


def can_manage(role: str) -> bool:
    """Owners and admins change members; members do not."""
    return role in MANAGERS


def may_change(by_role: str, target_role: str, new_role: str | None = None) -> bool:
    """Owners manage everyone; admins manage admins and members, and cannot make owners."""
    if not can_manage(by_role):
        return False
    return by_role == OWNER or (target_role != OWNER and new_role != OWNER)


def assignable_roles(by_role: str) -> list[tuple[str, str]]:
    """The roles `by_role` may give someone, as (value, label) choices."""
    return [(value, label) for value, label in ROLES if may_change(by_role, MEMBER, value)]


def is_last_owner(role: str, owners: int) -> bool:
    """The last owner can neither leave, be removed nor step down."""
    return role == OWNER and owners <= 1
