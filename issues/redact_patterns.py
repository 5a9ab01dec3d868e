"""What issues/redact.py looks for: a rule per kind of finding, in order of precedence, and the
anchors and shapes that say where each may be.

Pure: patterns and the checks that confirm a candidate (Luhn, IBAN mod-97, SSN ranges, IPv6
parsing). The checks only run on candidates. docs/redaction.md says what is found, what is never
redacted, and why the anchors are written the way they are.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass

# Every pattern is ASCII: `\d` is 0-9 and `\w` is [A-Za-z0-9_], whatever the text's script.
_FLAGS = re.ASCII

# A placeholder that redact() wrote: never matched again, whatever rule is running.
PLACEHOLDER = re.compile(r"<[A-Z][A-Z_]*:[0-9a-f]{4}>")


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: cheap, and each rule is one
class Rule:
    kind: str
    # The whole finding, context included; matched only where an anchor (ANCHORS) or a shape
    # (SHAPES) says one may start, never searched over the whole text. Every repetition is
    # bounded, so one match costs at most a few thousand steps.
    pattern: re.Pattern[str]
    # The named groups that may hold the secret (the first that took part in the match); the
    # rest of the match is context and stays. None: the whole match is the secret.
    groups: tuple[str, ...] | None = None
    check: Callable[[re.Match[str]], bool] | None = None


def luhn_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


# Card brands by their leading digits (IIN) and lengths: a 13-19 digit number that passes Luhn but
# starts like no card (an epoch in milliseconds starts with 1) is left alone.
_CARD_BRANDS = re.compile(
    r"4\d{12}(?:\d{3}){0,2}"  # Visa: 13, 16, 19
    r"|5[1-5]\d{14}|2(?:2[2-9]|[3-6]\d|7[01])\d{13}|2720\d{12}"  # Mastercard
    r"|3[47]\d{13}"  # American Express
    r"|3(?:0[0-5]|[689]\d)\d{11,16}"  # Diners Club
    r"|35(?:2[89]|[3-8]\d)\d{12,15}"  # JCB
    r"|6(?:011|5\d\d|4[4-9]\d)\d{12,15}"  # Discover
    r"|62\d{14,17}",  # UnionPay
    _FLAGS,
)
# The grouped tail of an IBAN (`DE89 3704 0044 `): card and phone candidates right after one
# belong to the IBAN, whose own rule has decided already.
_IBAN_HEAD = re.compile(r"[A-Z]{2}\d{2}(?: [A-Z0-9]{4})* ?\Z", _FLAGS)


def _after_iban(match: re.Match[str]) -> bool:
    start = match.start()
    return _IBAN_HEAD.search(match.string, max(0, start - 40), start) is not None


def card_ok(match: re.Match[str]) -> bool:
    digits = re.sub(r"[ -]", "", match.group(0))
    return _CARD_BRANDS.fullmatch(digits) is not None and luhn_ok(digits) and not _after_iban(match)


# Lengths of the IBANs of the countries that use them most (ISO 13616 registry).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AT": 20, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "CH": 21,
    "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24,
    "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "HR": 21,
    "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27,
    "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
    "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24, "TR": 26,
    "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_ok(match: re.Match[str]) -> bool:
    iban = match.group(0).replace(" ", "")
    if IBAN_LENGTHS.get(iban[:2]) != len(iban):
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def ssn_ok(match: re.Match[str]) -> bool:
    area, group, serial = match.group(0).split("-")
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def phone_ok(match: re.Match[str]) -> bool:
    count = sum(char.isdigit() for char in match.group(0))
    low = 8 if match.group(0).startswith("+") else 10
    return low <= count <= 15 and not _after_iban(match)


def ipv6_ok(match: re.Match[str]) -> bool:
    text = match.group(0)
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        return False
    # `x[1::2]` and `a::b` parse as addresses too; a real one has a group of three or more digits.
    longest = max(len(part) for part in re.split(r"[:.]", text))
    return longest >= 3 and not (address.is_loopback or address.is_unspecified)


def auth_ok(match: re.Match[str]) -> bool:
    """After an Authorization header anything is a credential; after a bare `Bearer`, only what
    looks like a token (`Bearer authentication failed` is prose)."""
    if match.group(0)[0] in "aA":
        return True
    value = match.group("value")
    return len(value) >= 24 or any(char.isdigit() for char in value)


# Words that end a key whose value is a secret: `password=`, `"client_secret": "…"`, `API-Key:`.
# The keyword must end the key, so `max_tokens=4096` and `token_count: 12` stay.
_SECRET_KEY = (
    r"(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|secret[_-]?key|client[_-]?secret|credentials?)"
)
# Values that say "no secret here": left as they are.
_NOT_SECRETS = frozenset(
    ("null", "none", "nil", "true", "false", "undefined", "", "***", "********", "redacted", "<redacted>")
)
# Type annotations and schemas: `secret: str`, `password: string`.
_TYPES = frozenset(("str", "bytes", "string", "int", "integer", "bool", "boolean", "number", "object", "any"))
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.\w+)*", re.ASCII)


def secret_of(match: re.Match[str], groups: tuple[str, ...] | None) -> tuple[int, int]:
    """Where the secret of a match is: its first group that took part, else the whole match."""
    for name in groups or ():
        if match.start(name) != -1:
            return match.span(name)
    return match.span()


_SECRET_VALUES = ("dq", "sq", "value")


def secret_ok(match: re.Match[str]) -> bool:
    start, end = secret_of(match, _SECRET_VALUES)
    value = match.string[start:end]
    if value.lower() in _NOT_SECRETS | _TYPES or value.startswith(("${", "$(", "{{", "%(")):
        return False
    if match.start("value") == -1:
        return True  # a quoted value is a literal
    # Source code passes secrets around by name: `secret=secret`, `token=self.token`,
    # `secret = new_secret()`, `"token": body["access_token"]`. Those names are not secrets.
    called = match.string[end : end + 1] in ("(", "[")
    same_name = (
        _IDENTIFIER.fullmatch(value) is not None and value.rsplit(".")[-1].lower() == match["key"].lower()
    )
    return not (called or same_name)


_ALNUM = "A-Za-z0-9"
_TOKEN = r"A-Za-z0-9_\-"
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_H = "[0-9A-Fa-f]{1,4}"
_IPV6 = (
    rf"(?:{_H}:){{7}}{_H}"
    rf"|(?:{_H}:){{1,6}}:(?:{_H}:){{0,5}}(?:{_H}|{_OCTET}(?:\.{_OCTET}){{3}})"
    rf"|(?:{_H}:){{1,7}}:(?![0-9A-Za-z:])"
    rf"|::(?:{_H}:){{0,5}}(?:{_H}|{_OCTET}(?:\.{_OCTET}){{3}})"
)


def _rule(kind: str, pattern: str, *, flags: int = 0, **options: object) -> Rule:  # pragma: no mutate block
    return Rule(kind, re.compile(pattern, _FLAGS | flags), **options)  # type: ignore[arg-type]


PRIVATE_KEY = _rule(
    "PRIVATE_KEY",
    r"-----BEGIN[A-Z0-9 ]{0,20}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:(?:(?!-----(?:BEGIN|END))[\s\S]){0,20000}-----END[A-Z0-9 ]{0,20}PRIVATE KEY(?: BLOCK)?-----"
    r"|(?:[A-Za-z0-9+/=:,\- \t\r\n]|\\[nr]){0,20000})",  # cut off before its END line
)
JWT = _rule(
    "JWT", rf"eyJ(?<![{_TOKEN}]eyJ)[{_TOKEN}]{{5,2000}}\.eyJ[{_TOKEN}]{{5,8000}}\.[{_TOKEN}]{{0,2000}}"
)
API_KEY = _rule(
    "API_KEY",
    rf"(?<![{_TOKEN}])(?:sk-ant-[{_TOKEN}]{{20,400}}|sk-(?:proj-|svcacct-|admin-)?[{_TOKEN}]{{20,400}}"
    rf"|gh[pousr]_[{_ALNUM}]{{36,251}}|github_pat_[{_ALNUM}_]{{22,255}}"
    rf"|(?:AKIA|ASIA)[A-Z0-9]{{16}}|xox[bpars]-[{_ALNUM}\-]{{10,400}}|xapp-[{_ALNUM}\-]{{10,400}}"
    rf"|[sr]k_(?:live|test)_[{_ALNUM}]{{16,400}}|AIza[{_TOKEN}]{{35}}|glpat-[{_TOKEN}]{{20,400}}"
    rf"|npm_[{_ALNUM}]{{36}}|hf_[{_ALNUM}]{{30,400}})(?![{_TOKEN}])",
)
CREDENTIALS = _rule(
    "CREDENTIALS",
    r"://(?P<value>[^\s/:@<>\"']{0,256}:[^\s/@<>\"']{1,256})@(?=[A-Za-z0-9\[])",
    groups=("value",),
)
AUTH = _rule(
    "AUTH",
    r"(?:(?<![\w-])authorization[\"']?\s{0,4}[:=]\s{0,4}[\"']?(?:[a-z]{1,20}\s{1,4})?|(?<![\w-])bearer\s{1,4})"
    r"(?P<value>[A-Za-z0-9._~+/=:\-]{8,4000})",
    flags=re.IGNORECASE,
    groups=("value",),
    check=auth_ok,
)
SECRET = _rule(
    "SECRET",
    rf"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z0-9_.-]{{0,40}}?{_SECRET_KEY})[\"']?\]?\s{{0,4}}(?:[:=]|=>)\s{{0,4}}"
    r"(?:\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'|(?P<value>[^\s\"',;&<>(){}\[\]]{3,512}))",
    flags=re.IGNORECASE,
    groups=_SECRET_VALUES,
    check=secret_ok,
)
EMAIL = _rule(
    "EMAIL", r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}"
)
USERNAME = _rule(
    "USERNAME",
    r"(?:(?<![\w.])/home/|(?<![\w.])/Users/|(?<![A-Za-z])[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/))"
    r"(?!(?:Shared|Public|Default|All Users)\b)(?P<value>[^\\/\s\"'<>:;,|*?]{1,64})",
    groups=("value",),
)
IBAN = _rule(
    "IBAN",
    r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])",
    check=iban_ok,
)
CARD = _rule(
    "CARD",
    r"(?<![\w.-])(?:[2-6]\d{3}(?:([ -])\d{4}\1\d{4}\1\d{1,7}|\d{9,15})|3[47]\d{2}([ -])\d{6}\2\d{5})"
    r"(?![\w-]|\.\d)",
    check=card_ok,
)
SSN = _rule("SSN", r"(?<![\w.-])\d{3}-\d{2}-\d{4}(?![\w-]|\.\d)", check=ssn_ok)
PHONE = _rule(
    "PHONE",
    r"(?<![\w.+/-])(?:\+[1-9]\d{0,3}(?:[ .-]?(?:\(\d{1,4}\)|\d{1,6})){1,6}"
    r"|(?:\+?1[ .-]?)?(?:\([2-9]\d{2}\) ?\d{3}[ .-]\d{4}|[2-9]\d{2}([.-])\d{3}\1\d{4})"
    r"|(?<!:)0\d{1,4}([ ./-])\d{2,8}(?:\2\d{2,8}){0,3})(?![\w-]|[.:]\d)",
    check=phone_ok,
)
IPV6 = _rule("IP", rf"(?<![\w:.])(?:{_IPV6})(?![\w:]|\.\d)", check=ipv6_ok)
IPV4 = _rule(
    "IP",
    rf"(?<![\w.])(?<!==)(?<!version )(?<!Version )(?!127\.|0\.0\.0\.0)"
    rf"{_OCTET}(?:\.{_OCTET}){{3}}(?!\w|\.\d|-[A-Za-z]|\+[A-Za-z])",
)

# The order of precedence: where two findings overlap, the earlier rule's is kept, so a JWT behind
# `Bearer` is a JWT and a key in `token=` is an API_KEY.
RULES: tuple[Rule, ...] = (
    PRIVATE_KEY, JWT, API_KEY, CREDENTIALS, AUTH, SECRET, EMAIL, USERNAME, IBAN, CARD, SSN, PHONE, IPV6, IPV4,
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class Try:
    """A rule to try at an anchor, and where its finding may start: each head, read backwards
    from the anchor over the reversed text, gives one start to match the rule's pattern at."""

    rule: Rule
    heads: tuple[re.Pattern[str], ...]


def _try(rule: Rule, *heads: str) -> Try:  # pragma: no mutate block - runs at import only
    return Try(rule, tuple(re.compile(head, _FLAGS) for head in heads or ("",)))


# How the keys of _SECRET_KEY end (four characters, as a lookbehind must be fixed).
_TAIL = r"(?i:word|sswd|\Wpwd|_pwd|cret|oken|_key|\Wkey|ikey|skey|tkey|ekey|tial|ials)"
_LAST = "dDtTnNyYlLsS"  # the last letters of those keys, checked first because it is cheaper
_WORD_BEFORE = rf"[{_TOKEN}]{{0,16}}"  # an API key's prefix, read backwards from its `-` or `_`
_NANP_BEFORE = r"\d{3}(?:[ .-]?1\+?)?"  # `415` or `1-800` or `+1 800`, read backwards
_SECRET_KEY_BEFORE = r" ?\]?[\"']?[A-Za-z0-9_.-]{0,48}"
# Where a finding may be: each anchor starts with one literal character that is rare in logs,
# or that the regex engine rejects before any Python runs, and names the rules to try around
# it. All of them are one pattern, and its alternatives must each start with a literal for the
# engine to skip ahead (a leading group or class would make it try every position).
# Cards and IBANs are found through the text's shape instead (redact.py).
ANCHORS: tuple[tuple[str, tuple[Try, ...]], ...] = (
    ("-----BEGIN", (_try(PRIVATE_KEY),)),
    (r"\.(?=eyJ)", (_try(JWT, rf"[{_TOKEN}]{{0,2000}}"),)),
    (r"-(?<=[kptbars]-)(?:(?<=sk-)|(?<=xapp-)|(?<=glpat-)|(?<=xox[bpars]-))", (_try(API_KEY, _WORD_BEFORE),)),
    (
        r"_(?:(?<=gh[pousr]_)|(?<=github_pat_)|(?<=k_live_)|(?<=k_test_)|(?<=npm_)|(?<=hf_))",
        (_try(API_KEY, _WORD_BEFORE),),
    ),
    (r"A(?=KIA|SIA|Iza)", (_try(API_KEY),)),
    ("@", (_try(CREDENTIALS, r"[^\s/@<>\"']{1,514}//:"), _try(EMAIL, r"[A-Za-z0-9._%+-]{0,64}"))),
    *(
        (
            rf"{sep}(?:(?<=[nN]{sep})(?<=(?i:authorization){sep})|(?<=[\"']{sep})(?<=(?i:authorization)[\"']{sep}))",
            (_try(AUTH, r"[\"']?[A-Za-z]{13}"),),
        )
        for sep in ":="
    ),
    (r"B(?=earer\s|EARER\s)", (_try(AUTH),)),  # lowercase `bearer` only after `authorization:`
    *(
        (
            rf"{sep}(?:(?<=[{_LAST}]{sep})(?<={_TAIL}{sep})"
            rf"|(?<=[\"' ]{sep})"
            rf"(?:(?<={_TAIL}[\"' ]{sep})|(?<={_TAIL}[\"'] {sep})|(?<={_TAIL}[\"']\] {sep})))",
            (_try(SECRET, _SECRET_KEY_BEFORE),),
        )
        for sep in ":="
    ),
    (r"/(?=home/|Users/)", (_try(USERNAME),)),
    (r":(?=(?:\\\\|\\|/)Users(?:\\|/))", (_try(USERNAME, "[A-Za-z]"),)),
    (r"-(?=\d\d-\d{4}(?!\d))", (_try(SSN, r"\d{3}"),)),
    (r"-(?=\d{3}-\d{4}(?!\d))", (_try(PHONE, _NANP_BEFORE, r"\d{3}"),)),
    (r"\.(?=\d{3}\.\d{4}(?!\d))", (_try(PHONE, _NANP_BEFORE, r"\d{3}"),)),
    (r"\((?=\d{3}\))", (_try(PHONE, r"(?:[ .-]?1\+?)?", ""),)),
    (r"\+(?=\d)", (_try(PHONE),)),
    (r"0(?<![\w.+/:-]0)(?=\d{1,4}[ ./-]\d{2})", (_try(PHONE),)),
    (r":(?=:|(?:[0-9A-Fa-f]{1,4}:){6}[0-9A-Fa-f])", (_try(IPV6, r"[0-9A-Fa-f:]{0,39}"),)),
    (r"\.(?=\d{1,3}\.\d{1,3}\.\d{1,3}(?!\d))", (_try(IPV4, r"\d{1,3}"),)),
)
# Cards and IBANs in the text's shape: where these occur.
SHAPES: tuple[tuple[bytes, Rule], ...] = (
    (b"AA99", IBAN),
    (b"9" * 13, CARD),
    (b"9999 9999 9999", CARD),
    (b"9999 999999 99999", CARD),
)
# Digits become 9, capitals A, and a dash a space, so one form finds `4111 1111` and `4111-1111`.
SHAPE_TABLE = bytes.maketrans(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-", b"9" * 10 + b"A" * 26 + b" ")
