"""JSON as it is parsed, named once: a value is null, a boolean, a number, a string, a list
of values or an object of values by name (magi_client/json_values.py, which the server
carries: the client and the server name the same). What a case file, a request body or a
tool's arguments hold before a pydantic model (or a TypedDict) says what they must hold;
reading into one asks which it is (isinstance), so nothing unchecked passes as something
else."""

from magi_client.json_values import JsonObject, JsonValue

__all__ = ["JsonObject", "JsonValue"]
