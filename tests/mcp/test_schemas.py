"""The compact schemas of tools/list say what pydantic's schemas say, in fewer characters."""

from __future__ import annotations

from weft.mcp.schemas import compact, untitled


def test_it_writes_a_nullable_scalar_as_one_type_list_without_its_null_default():
    schema = {
        "anyOf": [{"maxLength": 10, "type": "string"}, {"type": "null"}],
        "default": None,
        "description": "d",
    }
    assert compact(schema) == {"maxLength": 10, "type": ["string", "null"], "description": "d"}


def test_it_keeps_a_nullable_enum_and_a_real_default():
    enum = {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}], "default": None}
    assert compact(enum) == {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]}
    assert compact({"type": "integer", "default": 20}) == {"type": "integer", "default": 20}


def test_it_compacts_nested_properties_and_array_items():
    schema = {
        "properties": {
            "ids": {
                "anyOf": [
                    {"items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}, "type": "array"},
                    {"type": "null"},
                ]
            }
        }
    }
    ids = compact(schema)["properties"]["ids"]
    assert ids == {"items": {"type": ["integer", "null"]}, "type": ["array", "null"]}


def test_a_property_named_default_or_title_is_kept():
    schema = {"properties": {"title": {"type": "string"}, "default": {"type": "string"}}, "title": "X"}
    assert compact(untitled(schema)) == {
        "properties": {"title": {"type": "string"}, "default": {"type": "string"}}
    }
