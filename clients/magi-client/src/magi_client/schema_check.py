"""A value checked against the JSON Schemas of schema.py: (field path, message) for each
way it breaks one. Only the keywords those schemas use (type, properties, required,
additionalProperties, enum, items, min/maxItems, uniqueItems, min/maxLength,
exclusiveMinimum), so the client needs no validation library; the test suite holds it to
the reference implementation (jsonschema) on every file it checks.
"""

import json

from magi_client.schema import Schema

JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),  # before number: 3 is said to be an integer
    "number": (int, float),
}


def type_name(value: object) -> str:
    for name, kinds in JSON_TYPES.items():
        if isinstance(value, kinds) and not (isinstance(value, bool) and name != "boolean"):
            return name
    return type(value).__name__


def has_type(value: object, name: str) -> bool:
    if isinstance(value, bool):
        return name == "boolean"
    return isinstance(value, JSON_TYPES[name])


def problems(value: object, schema: Schema, path: str = "") -> list[tuple[str, str]]:
    """(field path, message) for every way `value` breaks `schema`; paths as the API names
    fields: `agents[0].model`, `budgets[1].unit`."""
    types = schema.get("type")
    if types is not None:
        wanted = [types] if isinstance(types, str) else types
        if not any(has_type(value, name) for name in wanted):
            return [(path, f"Must be {' or '.join(wanted)}, not {type_name(value)}.")]
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(json.dumps(choice) for choice in schema["enum"])
        return [(path, f"Must be one of {choices}, not {json.dumps(value)}.")]
    found: list[tuple[str, str]] = []
    if isinstance(value, dict):
        found += object_problems(value, schema, path)
    elif isinstance(value, list):
        found += array_problems(value, schema, path)
    elif isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            found.append((path, "Must not be empty."))
        if len(value) > schema.get("maxLength", len(value)):
            found.append((path, f"Must be at most {schema['maxLength']} characters."))
    elif isinstance(value, int | float) and not value > schema.get("exclusiveMinimum", value - 1):
        found.append((path, f"Must be more than {schema['exclusiveMinimum']}."))
    return found


def object_problems(value: dict[str, object], schema: Schema, path: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    known = schema.get("properties", {})
    prefix = f"{path}." if path else ""
    for field in schema.get("required", []):
        if field not in value:
            found.append((f"{prefix}{field}", "Required."))
    for field, item in value.items():
        if field in known:
            found += problems(item, known[field], f"{prefix}{field}")
        elif schema.get("additionalProperties") is False:
            found.append((f"{prefix}{field}", f"Unknown field; the fields are {', '.join(known)}."))
    return found


def array_problems(value: list[object], schema: Schema, path: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        size = f"exactly {low}" if low == high else f"at most {high}" if high else f"{low}+"
        found.append((path, f"Must hold {size} items, not {len(value)}."))
    if schema.get("uniqueItems") and len({json.dumps(item) for item in value}) < len(value):
        found.append((path, "Must not name one item twice."))
    if "items" in schema:
        for index, item in enumerate(value):
            found += problems(item, schema["items"], f"{path}[{index}]")
    return found
