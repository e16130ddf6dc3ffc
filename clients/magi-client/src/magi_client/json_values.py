"""JSON as it is parsed, named once for the client and the server
(judgements/core/json_values.py names the same): a value is null, a boolean, a number, a
string, a list of values or an object of values by name. Reading one asks which it is
(isinstance), so nothing unchecked passes as something else."""

from typing import TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = dict[str, JsonValue]
