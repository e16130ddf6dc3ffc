"""The OpenAPI 3.1 description of the HTTP API (judgements/api.py), served at
/api/schema.json. tests/judgements/test_openapi.py validates real answers against it, so
it cannot drift from what the API sends."""

from judgements import idempotency, rules, webhooks
from judgements.models import Decision, Status

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

SCHEMAS = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {"type": "string"},
            "retry_after": {"type": "integer", "minimum": 1},
            "errors": {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": "string"}},
            },
        },
    },
    "Invalid": {
        "type": "object",
        "required": ["error", "errors"],
        "properties": {
            "error": {"const": "invalid input"},
            "errors": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {
                    "type": "array",
                    "minItems": 1,
                    "items": {"type": "string"},
                },
            },
        },
        "additionalProperties": False,
    },
    "Agent": {
        "type": "object",
        "required": ["name", "model", "criteria"],
        "properties": {
            "name": {"type": "string", "maxLength": 100},
            "model": {"type": "string"},
            "criteria": {"type": "string"},
        },
        "additionalProperties": False,
    },
    "Case": {
        "type": "object",
        "required": ["title", "content", "agents"],
        "properties": {
            "title": {"type": "string", "maxLength": 200},
            "content": {"type": "string"},
            "agents": {
                "type": "array",
                "minItems": rules.PANEL_SIZE,
                "maxItems": rules.PANEL_SIZE,
                "items": ref("Agent"),
            },
            "callback_url": {
                "type": "string",
                "format": "uri",
                "maxLength": webhooks.URL_MAX_CHARS,
                "description": (
                    "Where to POST a signed webhook when the judgement ends or is "
                    "overridden. Its host must be on the deployment's MAGI_WEBHOOK_HOSTS "
                    "(https, unless listed as http://host) and the caller needs a webhook "
                    "secret (`manage.py webhook_secret USER`); otherwise 400 naming "
                    "callback_url."
                ),
            },
        },
        "additionalProperties": False,
    },
    "Override": {
        "type": "object",
        "required": ["by", "at", "reason", "decision"],
        "properties": {
            "by": {"type": "string", "description": "The username of who overrode."},
            "at": {"type": "string", "format": "date-time"},
            "reason": {"type": "string"},
            "decision": {"enum": list(Decision.values)},
        },
        "additionalProperties": False,
    },
    "OverrideRequest": {
        "type": "object",
        "required": ["decision", "reason"],
        "properties": {
            "decision": {"enum": list(Decision.values)},
            "reason": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
    },
    "Round": {
        "type": "object",
        "required": ["round", "decision", "reason"],
        "properties": {
            "round": {"type": "integer", "minimum": 1, "maximum": rules.ROUNDS},
            "decision": {"enum": list(Decision.values)},
            "reason": {"type": "string"},
        },
        "additionalProperties": False,
    },
    "AgentResult": {
        "type": "object",
        "required": ["name", "model", "final_decision", "score", "rounds"],
        "properties": {
            "name": {"type": "string"},
            "model": {"type": "string"},
            "final_decision": {"enum": [*Decision.values, None]},
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "rounds": {"type": "array", "maxItems": rules.ROUNDS, "items": ref("Round")},
        },
        "additionalProperties": False,
    },
    "Judgement": {
        "type": "object",
        "description": (
            'Fail-closed: proceed only when "status" is "approved". Every other value '
            "(rejected, error, idle, judging, or one this document does not list) and "
            "every error answer mean do not proceed."
        ),
        "required": ["id", "title", "status", "panel_status", "override", "error", "agents"],
        "properties": {
            "id": {"type": "integer", "minimum": 1},
            "title": {"type": "string"},
            "status": {
                "enum": STATUSES,
                "description": "The verdict in force: the override's, else the panel's.",
            },
            "panel_status": {"enum": STATUSES, "description": "What the panel decided."},
            "override": {"oneOf": [ref("Override"), {"type": "null"}]},
            "error": {"type": ["string", "null"]},
            "agents": {"type": "array", "items": ref("AgentResult")},
        },
        "additionalProperties": False,
    },
    "JudgementList": {
        "type": "object",
        "required": ["judgements"],
        "properties": {"judgements": {"type": "array", "items": ref("Judgement")}},
        "additionalProperties": False,
    },
}

# A webhook's body: the judgement's own shape plus "event".
SCHEMAS["WebhookEvent"] = {
    **SCHEMAS["Judgement"],
    "description": (
        'The judgement as GET /api/judgements/{id}/ answers it, plus "event". Fail-closed '
        'here too: proceed only on "status": "approved".'
    ),
    "required": ["event", *SCHEMAS["Judgement"]["required"]],
    "properties": {
        "event": {"enum": list(webhooks.EVENTS)},
        **SCHEMAS["Judgement"]["properties"],
    },
}

LOCATION = {"Location": {"required": True, "schema": {"type": "string"}}}
REPLAYED = {
    "Idempotency-Replayed": {
        "description": "With an Idempotency-Key: `true` when this answer replays an earlier "
        "request (nothing new was started), `false` when it started the judgement.",
        "schema": {"enum": ["true", "false"]},
    }
}


def document(wait_max: float) -> dict:
    """The document; `wait_max` is the API's longest ?wait."""
    wait = wait_parameter(wait_max)
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "MAGI",
            "version": "1",
            "description": (
                "Three LLM agents judge a case over three rounds; a weighted vote decides. "
                'Fail-closed: proceed only on "status": "approved"; anything else, and any '
                "error answer, means do not proceed."
            ),
        },
        "security": [{"bearer": []}],
        "paths": {
            "/api/judgements/": {
                "get": {
                    "summary": "The caller's 50 most recent judgements (staff: everyone's).",
                    "responses": {
                        "200": answer("The judgements, newest first.", "JudgementList"),
                        "401": ERRORS["401"],
                    },
                },
                "post": {
                    "summary": "Submit a case; optionally wait for its decision.",
                    "parameters": [
                        wait,
                        {
                            "name": idempotency.HEADER,
                            "in": "header",
                            "required": False,
                            "description": (
                                "Per user. The same key and body answer with the judgement "
                                "the first request started and start nothing; the same key "
                                "with another body answers 422. Remembered for "
                                "MAGI_IDEMPOTENCY_HOURS (24 by default)."
                            ),
                            "schema": {
                                "type": "string",
                                "minLength": 1,
                                "maxLength": idempotency.MAX_LENGTH,
                            },
                        },
                    ],
                    "requestBody": {"required": True, "content": json_content(ref("Case"))},
                    "responses": {
                        "201": answer(
                            "Stored (or, replayed, stored before) and queued.",
                            "Judgement",
                            {**LOCATION, **REPLAYED},
                        ),
                        **{k: ERRORS[k] for k in ("400", "401", "413")},
                        "422": answer("The Idempotency-Key was used with another body.", "Error"),
                        "429": answer(
                            "A rate limit was reached; retry after `Retry-After` seconds.",
                            "Error",
                            {"Retry-After": {"required": True, "schema": {"type": "string"}}},
                        ),
                    },
                },
            },
            "/api/judgements/{judgement_id}/": {
                "get": {
                    "summary": "One judgement, optionally waiting for it to finish.",
                    "parameters": [JUDGEMENT_ID, wait],
                    "responses": {
                        "200": answer("The judgement.", "Judgement"),
                        **{k: ERRORS[k] for k in ("400", "401", "404")},
                    },
                }
            },
            "/api/judgements/{judgement_id}/override": {
                "post": {
                    "summary": "A human's verdict over the panel's (staff, or the "
                    "override_judgement permission). The panel's stays in panel_status.",
                    "parameters": [JUDGEMENT_ID],
                    "requestBody": {
                        "required": True,
                        "content": json_content(ref("OverrideRequest")),
                    },
                    "responses": {
                        "201": answer("Overridden; the judgement with its override.", "Judgement"),
                        **{k: ERRORS[k] for k in ("400", "401", "404", "413")},
                        "403": answer("The caller may not override judgements.", "Error"),
                        "409": answer("Not finished yet, or already overridden.", "Error"),
                    },
                }
            },
            "/api/schema.json": {
                "get": {
                    "summary": "This document.",
                    "security": [],
                    "responses": {"200": {"description": "OpenAPI 3.1 document."}},
                }
            },
        },
        "webhooks": {
            "judgementEvent": {
                "post": {
                    "summary": "A judgement ended (judgement.finished: approved or rejected; "
                    "judgement.failed: error) or was overridden (judgement.overridden).",
                    "description": (
                        "Sent to the case's callback_url, retried with exponential backoff "
                        "until a 2xx answer or MAGI_WEBHOOK_MAX_ATTEMPTS; redirects are not "
                        "followed. Signed per Standard Webhooks: webhook-signature is "
                        '"v1," + base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.'
                        '{body}")), the key being the base64-decoded part of the whsec_ '
                        "secret. The webhook-id stays the same across retries."
                    ),
                    "security": [],
                    "parameters": [
                        {
                            "name": "webhook-id",
                            "in": "header",
                            "required": True,
                            "schema": {"type": "string"},
                        },
                        {
                            "name": "webhook-timestamp",
                            "in": "header",
                            "required": True,
                            "description": "Unix seconds when this attempt was signed.",
                            "schema": {"type": "string", "pattern": "^[0-9]+$"},
                        },
                        {
                            "name": "webhook-signature",
                            "in": "header",
                            "required": True,
                            "schema": {"type": "string", "pattern": "^v1,"},
                        },
                    ],
                    "requestBody": {
                        "required": True,
                        "content": json_content(ref("WebhookEvent")),
                    },
                    "responses": {
                        "200": {"description": "Any 2xx: delivered; anything else is retried."}
                    },
                }
            }
        },
        "components": {
            "schemas": SCHEMAS,
            "responses": {},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
