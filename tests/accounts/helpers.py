"""Shared assertions of the accounts tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from weft.errors import WeftError

Refusal = tuple[str, str, dict[str, Any], list[str]]


def refusal(call: Callable[[], object]) -> Refusal:
    """The whole refusal `call` raises: code, message, details and hint lines."""
    with pytest.raises(WeftError) as refused:
        call()
    error = refused.value
    return error.code, error.message, error.details, error.fix.lines()
