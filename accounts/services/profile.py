"""A person's own profile: the name other people see on cards, comments and the Inbox."""

from __future__ import annotations

from accounts.models import User
from weft.errors import invalid_argument

# The User.name column's width.
NAME = 150


def user_set_name(*, user: User, name: str) -> User:
    """Set the person's display name; empty falls back to the local part of their email."""
    if not isinstance(name, str) or "\x00" in name:
        raise invalid_argument("name", "text without NUL (\\u0000) characters")
    cleaned = name.strip()
    if len(cleaned) > NAME:
        raise invalid_argument("name", f"at most {NAME} characters (got {len(cleaned)})")
    if cleaned != user.name:
        user.name = cleaned
        user.save(update_fields=["name"])
    return user
