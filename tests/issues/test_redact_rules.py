"""issues/redact.py and issues/redact_patterns.py at the edges of each rule's checks."""

from __future__ import annotations

import pytest

from issues.redact import _kept, redact

SALT = "0123456789abcdef"


def _text(text: str) -> str:
    return redact(text, salt=SALT).text


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("900-12-3456", False),  # area 9xx
        ("191-12-3456", True),  # a 9 elsewhere in the area is fine
        ("123-45-0000", False),  # serial 0000
        ("123-45-0001", True),
    ],
)
def test_ssn_ranges(text: str, redacted: bool) -> None:
    assert ("<SSN:" in _text(text)) is redacted


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("call +49 301 234", True),  # eight digits are enough after a `+`
        ("call +49 123456 123456 1", True),  # fifteen digits at most
        ("call +49 123456 123456 12", False),
    ],
)
def test_phone_digit_counts(text: str, redacted: bool) -> None:
    assert ("<PHONE:" in _text(text)) is redacted


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("host 1111:2222::3333:4444:5555:6666:7777:8888 up", False),  # does not parse
        ("host 123::45 up", True),  # a group of three digits is enough
        ("0000:0000:0000:0000:0000:0000:0000:0001", False),  # loopback, written out
        ("0000:0000:0000:0000:0000:0000:0000:0000", False),  # unspecified, written out
    ],
)
def test_ipv6_checks(text: str, redacted: bool) -> None:
    assert ("<IP:" in _text(text)) is redacted


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("Bearer abcdefghij ok", False),  # short, no digit: prose
        ("Bearer abcdefghijklmnopqrstuvw", False),  # 23 letters
        ("Bearer abcdefghijklmnopqrstuvwx", True),  # 24 letters: a token
        ("Authorization: Basic abcdefghij", True),  # after the header anything is a credential
        ("authorization: abcdefghij", True),
    ],
)
def test_auth_checks(text: str, redacted: bool) -> None:
    assert ("<AUTH:" in _text(text)) is redacted


@pytest.mark.parametrize(
    "text",
    ['password="${DB_PASS}"', 'password="$(cat pw)"', 'password="{{ vault_pw }}"', 'password="%(pw)s"'],
)
def test_templated_secrets_stay(text: str) -> None:
    assert _text(text) == text


def test_a_quoted_value_is_a_literal_even_when_it_repeats_the_key() -> None:
    assert _text('api_key = "api_key"').startswith('api_key = "<SECRET:')


def test_a_finding_right_next_to_a_placeholder_is_still_found() -> None:
    assert _text("<EMAIL:abcd>bob@example.com").startswith("<EMAIL:abcd><EMAIL:")
    assert _text("bob@example.com<EMAIL:abcd>").endswith("><EMAIL:abcd>")
    assert "bob" not in _text("bob@example.com<EMAIL:abcd>")


def test_findings_of_several_kinds_are_replaced_in_text_order() -> None:
    result = _text("10.1.2.3 bob@example.com")
    assert result.startswith("<IP:") and " <EMAIL:" in result and len(result) == len("<IP:0000> <EMAIL:0000>")


def test_an_empty_finding_is_dropped() -> None:
    assert _kept("abc", [(6, 1, 1)]) == []
    assert _kept("abc", [(6, 1, 2)]) == [(6, 1, 2)]
