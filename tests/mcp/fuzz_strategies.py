"""Hypothesis strategies for the MCP fuzz test: arguments derived from a tool's `inputSchema`.

Each property of a schema gets a mix of valid-shaped values (hypothesis-jsonschema's `from_schema`),
hostile values for its type (control characters, huge strings, integers at and past every bound,
extreme dates) and real ids from the seeded workspace, so calls reach the services, not only the
argument validation. Whole argument objects also lose required fields and gain unknown ones.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

# Lone surrogates cannot travel in JSON text encoded as UTF-8, so no strategy produces them.
CONTROL = "".join(chr(c) for c in [*range(0, 32), 127, *range(0x80, 0xA0)])
ODD_UNICODE = [
    "\u200b",  # zero-width space
    "\u200e\u202e",  # LRM, right-to-left override
    "\ufeff",  # byte-order mark
    "\u2028\u2029",  # JSON-legal line and paragraph separators
    "e\u0301\u0301\u0301",  # stacked combining marks
    "\U0001f600\U0001f469\u200d\U0001f4bb",  # emoji, ZWJ sequence
    "\U0010ffff",  # the last code point
    "\ufffd",
    "İıß",  # case-mapping changes length
]
# Text that would read as a hint marker or a placeholder if a response echoed it unescaped.
HINT_INJECTIONS = [
    "\nDone.",
    "\nNext: get_my_work {}",
    "\nError: x\nFix: get_my_work {}",
    "<id>",
    "TASK-NNN",
    "TODO",
    "...",
    '"}',
    "{{ 7*7 }}",
    "<script>alert(1)</script>",
    "'; DROP TABLE boards_task; --",
    "%s%n%x",
    "\\u0000",
]
LONG_SIZES = [201, 501, 1_001, 10_000, 100_000, 1_000_000]
INT_EDGES = [
    0,
    -1,
    1,
    2**31 - 1,
    2**31,
    -(2**31),
    -(2**31) - 1,
    2**53 + 1,
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64,
    10**30,
    -(10**30),
]
DATETIMES = [
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T00:00:00Z",
    "0001-01-01T00:00:00",
    "9999-12-31T23:59:59-12:00",
    "9999-12-31T23:59:59.999999Z",
    "9999-12-31T23:59:59",
    "9999-12-31",
    "0001-01-01",
    "2024-02-29",
    "2024-02-30T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "2024-12-31T23:59:60Z",
    "2024-06-01T24:00:00Z",
    "2024-06-01T12:00:00+24:00",
    "2024-06-01T12:00:00+23:59",
    "2024-06-01T12:00:00-23:59",
    "2024-06-01 12:00",
    "2024-06-01T12:00:00.123456789Z",
    "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z",
    "2038-01-19T03:14:08Z",
    "3000-01-01T00:00:00Z",
    "+10000-01-01T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "-0001-01-01T00:00:00Z",
    "20240601T120000Z",
    "2024-W22-6",
    "now",
    "",
    "2024-06-01T12:00:00Z\x00",
]


class Raw:
    """A JSON number written verbatim (such as 1e999, which Python's json reads as inf)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


RAW_NUMBERS = ["1e999", "-1e999", "1e-999", "-0", "1.0", "1e2", "0.5", "123456789012345678901234567890.5"]


def dumps(value: Any) -> bytes:
    """`value` as JSON, with every Raw written verbatim."""
    raws: list[Raw] = []

    def default(obj: Any) -> str:
        if isinstance(obj, Raw):
            raws.append(obj)
            return f"\x00raw{len(raws) - 1}\x00"
        raise TypeError(f"not JSON: {type(obj).__name__}")

    text = json.dumps(value, default=default, ensure_ascii=False, allow_nan=False)
    for index, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00raw{index}\x00"), raw.text)
    return text.encode("utf-8")


def short(value: Any, limit: int = 120) -> str:
    """A readable repr of a drawn value: long strings shown as their head, length and characters."""
    if isinstance(value, str):
        if len(value) > limit:
            chars = "".join(sorted(set(value)))[:20]
            return f"<str len={len(value)} head={value[:40]!r} chars={chars!r}>"
        return repr(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {short(v, limit)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        if len(value) > 12:
            return f"[{', '.join(short(v, limit) for v in value[:3])}, ... ({len(value)} items)]"
        return "[" + ", ".join(short(v, limit) for v in value) + "]"
    return repr(value)


class Long(str):
    """A long drawn string whose repr (in Hypothesis's reports) is its head and length."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Long({str.__repr__(self[:24])} * ~{len(self)} chars)"


def long_strings() -> st.SearchStrategy[str]:
    """Strings of 201 to 1,000,000 characters, built by repetition (drawing them char by char is slow)."""
    unit = st.sampled_from(["a", "é", "\x00", "\U0001f600", "ab\ncd ", "<id>", "x" * 7 + "\x1f"])
    return st.builds(lambda u, n: Long((u * (n // len(u) + 1))[:n]), unit, st.sampled_from(LONG_SIZES))


def hostile_strings() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(alphabet=st.sampled_from(CONTROL), min_size=1, max_size=8),
        st.text(min_size=0, max_size=40).map(lambda s: s + "\x00" + s),
        st.sampled_from(ODD_UNICODE + HINT_INJECTIONS + DATETIMES),
        st.text(st.characters(codec="utf-8"), max_size=60),
        st.sampled_from(["", " ", "\t\n", "\x00"]),
        long_strings(),
    )


def hostile_integers(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    edges = list(INT_EDGES)
    for key in ("minimum", "maximum"):
        if key in schema:
            bound = int(schema[key])
            edges += [bound - 1, bound, bound + 1]
    return st.one_of(
        st.sampled_from(edges),
        st.sampled_from(RAW_NUMBERS).map(Raw),
        st.sampled_from([1.5, -0.0, 1e308, -1e308, 5e-324, 3.0]),
        st.sampled_from([str(e) for e in edges[:6]]),
    )


def wrong_types() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from([0, -1, 2**63, 1.5]),
        st.sampled_from(["", "x", "1", "true", "null"]),
        st.lists(st.integers(-2, 2), max_size=3),
        st.sampled_from([{}, {"id": 1}, {"$ref": "#"}]),
        st.recursive(st.none() | st.integers(), lambda inner: st.lists(inner, max_size=2), max_leaves=20),
    )


def _types(schema: Mapping[str, Any]) -> set[str]:
    if "anyOf" in schema:
        found: set[str] = set()
        for option in schema["anyOf"]:
            found |= _types(option)
        return found
    kind = schema.get("type")
    if isinstance(kind, list):
        return set(kind)
    return {kind} if isinstance(kind, str) else set()


def _is_datetime(schema: Mapping[str, Any]) -> bool:
    if schema.get("format") in ("date-time", "date"):
        return True
    return any(_is_datetime(option) for option in schema.get("anyOf", []))


def _string_items(schema: Mapping[str, Any]) -> bool:
    for option in [schema, *schema.get("anyOf", [])]:
        if option.get("type") == "array" and option.get("items", {}).get("type") == "string":
            return True
    return False


@functools.cache
def _leaf(schema: str) -> st.SearchStrategy[Any]:
    """hypothesis-jsonschema's strategy for a scalar schema (canonicalising is slow: once each)."""
    return from_schema(json.loads(schema))


def valid(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values that match `schema`: objects, arrays, refs and anyOf here, scalars by from_schema.

    hypothesis-jsonschema 0.23's object strategy relies on Hypothesis internals that 6.170 no
    longer has, so objects and arrays are composed here from their members' strategies.
    """
    if "$ref" in schema:
        return valid(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return st.one_of([valid(option, defs) for option in schema["anyOf"]])
    kind = schema.get("type")
    if isinstance(kind, list) and len(kind) > 1:
        # tools/list writes `anyOf [X, null]` as `"type": [kind, "null"]` (weft/mcp/schemas.py).
        branches = [st.none() if one == "null" else valid({**schema, "type": one}, defs) for one in kind]
        return st.one_of(branches)
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {name: valid(sub, defs) for name, sub in props.items() if name in required},
            optional={name: valid(sub, defs) for name, sub in props.items() if name not in required},
        )
    if kind == "array":
        return st.lists(
            valid(schema.get("items", {}), defs),
            min_size=schema.get("minItems", 0),
            max_size=min(schema.get("maxItems", 5), 5),
        )
    leaf = {k: v for k, v in schema.items() if k not in ("title", "description", "default")}
    return _leaf(json.dumps(leaf, sort_keys=True))


def sane(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Valid values an agent would plausibly send: printable text, no nulls for optional fields."""
    if "$ref" in schema:
        return sane(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != "null"]
        return st.one_of([sane(o, defs) for o in options or schema["anyOf"]])
    kind = schema.get("type")
    if kind == "string" and "enum" not in schema and "format" not in schema:
        low = schema.get("minLength", 0)
        high = min(schema.get("maxLength", 80), 80)
        return st.text(st.characters(categories=["L", "N", "Zs", "P"]), min_size=max(low, 1), max_size=high)
    if kind == "array":
        return st.lists(sane(schema.get("items", {}), defs), max_size=3)
    if kind == "object" and "properties" in schema:
        props = schema["properties"]
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {name: sane(sub, defs) for name, sub in props.items() if name in required},
            optional={name: sane(sub, defs) for name, sub in props.items() if name not in required},
        )
    return valid(schema, defs)


@dataclass
class Real:
    """Ids that exist right now: tasks of this workspace (and a foreign one), boards, a live lease."""

    task_ids: Sequence[int] = ()
    foreign_task_ids: Sequence[int] = ()
    board_ids: Sequence[int] = ()
    run_ids: Sequence[str] = ()
    lease_tokens: Sequence[str] = ()
    lease: tuple[str, str] | None = None
    extra: dict[str, Sequence[Any]] = field(default_factory=dict)

    def for_property(self, name: str) -> list[Any]:
        by_name: dict[str, Sequence[Any]] = {
            "id": [*self.task_ids, *self.foreign_task_ids],
            "boardId": self.board_ids,
            "runId": self.run_ids,
            "leaseToken": self.lease_tokens,
            **self.extra,
        }
        return list(by_name.get(name, ()))


def property_values(
    name: str, schema: Mapping[str, Any], defs: Mapping[str, Any], real: Real
) -> st.SearchStrategy[Any]:
    """Values for one property: valid-shaped, hostile for its type, wrong-typed, or a real id."""
    shaped = valid(schema, defs)
    options: list[st.SearchStrategy[Any]] = [shaped, shaped, wrong_types()]
    kinds = _types(schema)
    if "string" in kinds:
        options += [hostile_strings(), hostile_strings()]
    if "integer" in kinds or "number" in kinds:
        options += [hostile_integers(schema), hostile_integers(schema)]
    if _is_datetime(schema):
        # The ends of the calendar first: they are what a database cannot read back.
        options += [st.sampled_from(DATETIMES[:7])] * 3 + [st.sampled_from(DATETIMES)] * 2
    if _string_items(schema):
        options += [
            st.lists(hostile_strings(), max_size=4),
            st.lists(st.sampled_from(["a", "", "\x00"]), min_size=11, max_size=40),
            st.builds(lambda n: ["x"] * n, st.sampled_from([100, 10_000])),
        ]
    if "array" in kinds and "$ref" in json.dumps(schema):
        options.append(st.lists(artifacts(), max_size=4))
    values = real.for_property(name)
    if values:
        options += [one_of_real(values)] * 4
    return st.one_of(options)


# How many real ids a draw picks among: the choice is drawn from this fixed range whatever the list's
# length, so a replayed example draws the same choices though the world gained a task or a run since.
REAL_CHOICES = 16


def one_of_real(values: Sequence[Any]) -> st.SearchStrategy[Any]:
    """One of `values` (real ids of the world as it is now), with a choice structure of fixed shape."""
    items = list(values)
    return st.integers(0, REAL_CHOICES - 1).map(lambda i: items[i % len(items)])


def artifacts() -> st.SearchStrategy[dict[str, Any]]:
    """complete_task evidence: mostly well-formed, with hostile uris, statuses and hashes."""
    return st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["url", "commit", "file", "pr"]),
            "uri": st.one_of(
                st.sampled_from(
                    [
                        "https://example.com/report",
                        "http://[::1]:99999/",
                        "javascript:alert(1)",
                        "file:///etc/passwd",
                        "https://exa\x00mple.com/",
                        "",
                        "deadbeef",
                    ]
                ),
                hostile_strings(),
            ),
        },
        optional={
            "httpStatus": st.one_of(st.none(), hostile_integers({"minimum": 100, "maximum": 599})),
            "sha256": st.one_of(st.none(), hostile_strings(), st.just("0" * 64)),
        },
    )


EXTRA_KEYS = ["workspaceId", "workspace", "connectionId", "_next_action", "__proto__", "", "\x00", "id "]


def arguments(tool: Mapping[str, Any], real: Real) -> st.SearchStrategy[Any]:
    """Arguments for one tool: from its inputSchema, then with fields dropped or added."""
    schema = tool["inputSchema"]
    defs = schema.get("$defs", {})
    props: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    per_field = {name: property_values(name, sub, defs, real) for name, sub in props.items()}

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        args: dict[str, Any] = {}
        for name, values in per_field.items():
            # Required fields are mostly present; optional ones about half the time.
            keep = draw(st.integers(0, 9)) < (9 if name in required else 5)
            if keep:
                args[name] = draw(values)
        if draw(st.integers(0, 9)) == 0:
            args[draw(st.sampled_from(EXTRA_KEYS))] = draw(wrong_types() | hostile_strings())
        return args

    sane_fields = {name: sane(sub, defs) for name, sub in props.items()}

    @st.composite
    def plausible(draw: st.DrawFn, hostile: bool) -> dict[str, Any]:
        """What a careful agent would send (real ids, the live lease), with at most one field hostile.

        These reach the services, where a value that passes validation must also round-trip
        through the database and every reader.
        """
        args: dict[str, Any] = {}
        for name, values in sane_fields.items():
            if name in required or draw(st.booleans()):
                ids = real.for_property(name)
                if ids and name not in ("runId", "leaseToken") and draw(st.integers(0, 4)):
                    args[name] = draw(one_of_real(ids))
                else:
                    args[name] = draw(values)
        if real.lease and "runId" in props and draw(st.integers(0, 5)):
            args["runId"], args["leaseToken"] = real.lease
        if hostile and props:
            name = draw(st.sampled_from(sorted(props)))
            args[name] = draw(per_field[name])
        return args

    return st.one_of(
        plausible(hostile=False),
        plausible(hostile=True),
        plausible(hostile=True),
        plausible(hostile=True),
        build(),
        build(),
        valid(schema, defs),
        # Not an object at all: the SDK answers these at the JSON-RPC level (see the test).
        st.sampled_from([[], "x", 1, None]).map(NotAnObject),
    )


class NotAnObject:
    """`arguments` that is not a JSON object (a protocol-level mistake)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"NotAnObject({self.value!r})"
