"""The OpenAPI 3.1 description of the HTTP API (judgements/api/), served at
/api/schema.json. tests/judgements/api/test_openapi.py validates real answers against it, so
it cannot drift from what the API sends."""

from judgements.api.openapi.evaluation_paths import evaluation_paths
from judgements.api.openapi.evaluation_schemas import EVALUATION_SCHEMAS
from judgements.api.openapi.judgement_schemas import SCHEMAS as JUDGEMENT_SCHEMAS
from judgements.api.openapi.parts import (
    ERRORS,
    JUDGEMENT_ID,
    LOCATION,
    REPLAYED,
    answer,
    json_content,
    ref,
    wait_parameter,
)
from judgements.intake import idempotency

SCHEMAS = {**JUDGEMENT_SCHEMAS, **EVALUATION_SCHEMAS}


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
            "/api/judgements/{judgement_id}/confirm": {
                "post": {
                    "summary": "A reviewer keeps the panel's verdict, with a reason (staff, "
                    "or the override_judgement permission); releases a held verdict.",
                    "parameters": [JUDGEMENT_ID],
                    "requestBody": {
                        "required": True,
                        "content": json_content(ref("ConfirmRequest")),
                    },
                    "responses": {
                        "201": answer(
                            "Confirmed; the judgement with its confirmation.", "Judgement"
                        ),
                        **{k: ERRORS[k] for k in ("400", "401", "404", "413")},
                        "403": answer("The caller may not review judgements.", "Error"),
                        "409": answer("Not approved or rejected, or already reviewed.", "Error"),
                    },
                }
            },
            "/api/reviews/": {
                "get": {
                    "summary": "The review queue: contested judgements nobody has confirmed "
                    "or overridden, newest first (staff: all; others: their own).",
                    "responses": {
                        "200": answer("The judgements waiting for a reviewer.", "JudgementList"),
                        "401": ERRORS["401"],
                        "403": answer("The caller may not review judgements.", "Error"),
                    },
                }
            },
            "/api/panels/": {
                "get": {
                    "summary": "The saved panels a case may name: the caller's own and the "
                    "examples (staff: every panel), the caller's first.",
                    "responses": {
                        "200": answer("The panels.", "PanelList"),
                        "401": ERRORS["401"],
                    },
                }
            },
            **evaluation_paths(),
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
                    "summary": "A judgement ended (judgement.finished: approved, rejected or "
                    "held; judgement.failed: error) or was reviewed (judgement.overridden, "
                    "judgement.confirmed).",
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
