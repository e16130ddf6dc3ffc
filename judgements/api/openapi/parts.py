"""The pieces the OpenAPI document is built from: references, answers, error answers and
parameters shared by every path."""

from judgements.models import Status

STATUSES = list(Status.values)


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def json_content(schema: dict) -> dict:
    return {"application/json": {"schema": schema}}


def answer(description: str, schema_name: str, headers: dict | None = None) -> dict:
    response = {"description": description, "content": json_content(ref(schema_name))}
    if headers:
        response["headers"] = headers
    return response


ERRORS = {
    "400": answer("Invalid input; `errors` names each field (`agents[1].model`).", "Invalid"),
    "401": answer(
        "No valid API token.",
        "Error",
        {"WWW-Authenticate": {"required": True, "schema": {"type": "string"}}},
    ),
    "404": answer("No such judgement, or another user's.", "Error"),
    "405": answer("Method not allowed on this path.", "Error"),
    "413": answer("The body is larger than MAGI_MAX_BODY_BYTES.", "Error"),
    "500": answer("An unexpected failure (logged; no details are sent).", "Error"),
}


def wait_parameter(wait_max: float) -> dict:
    return {
        "name": "wait",
        "in": "query",
        "required": False,
        "description": "Seconds to wait for the judgement to finish before answering.",
        "schema": {"type": "number", "minimum": 0, "maximum": wait_max, "default": 0},
    }


JUDGEMENT_ID = {
    "name": "judgement_id",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 1},
}

# Panels and suites alike.
EXAMPLE = {"type": "boolean", "description": "Shipped with MAGI (no owner), usable by everyone."}


LOCATION = {"Location": {"required": True, "schema": {"type": "string"}}}
REPLAYED = {
    "Idempotency-Replayed": {
        "description": "With an Idempotency-Key: `true` when this answer replays an earlier "
        "request (nothing new was started), `false` when it started the judgement.",
        "schema": {"enum": ["true", "false"]},
    }
}


RATIO = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
COUNT = {"type": "integer", "minimum": 0}


def counts_of(*keys: str) -> dict:
    return {
        "type": "object",
        "required": list(keys),
        "properties": dict.fromkeys(keys, COUNT),
        "additionalProperties": False,
    }


JSONL = {"application/jsonl": {"schema": {"type": "string"}}}


def id_parameter(name: str) -> dict:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
    }
