"""Reading into JSON a test holds as a JsonValue (a schema, a request body): each step
checks what it steps into, so a test fails naming the step where the shape differs."""

from judgements.core.json_values import JsonObject, JsonValue


def at(value: JsonValue, *path: str | int) -> JsonValue:
    """The value at `path`: keys of objects, positions in lists."""
    for step in path:
        if isinstance(step, str) and isinstance(value, dict):
            value = value[step]
            continue
        if isinstance(step, int) and isinstance(value, list):
            value = value[step]
            continue
        raise AssertionError(f"no {step!r} in {value!r}")
    return value


def object_at(value: JsonValue, *path: str | int) -> JsonObject:
    found = at(value, *path)
    assert isinstance(found, dict), f"not an object at {path!r}: {found!r}"
    return found


def list_at(value: JsonValue, *path: str | int) -> list[JsonValue]:
    found = at(value, *path)
    assert isinstance(found, list), f"not a list at {path!r}: {found!r}"
    return found
