"""The schemas of judgements, agents, reviews and panels in the OpenAPI document."""

from typing import Any

from judgements.api.openapi.parts import EXAMPLE, STATUSES, ref
from judgements.core import rules
from judgements.models import Decision
from judgements.outcome import webhooks

SCHEMAS: dict[str, dict[str, Any]] = {
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
        "required": ["title", "content"],
        # The agents, or a saved panel to copy them from: exactly one of the two.
        "oneOf": [{"required": ["agents"]}, {"required": ["panel"]}],
        "properties": {
            "title": {"type": "string", "maxLength": 200},
            "content": {"type": "string"},
            "agents": {
                "type": "array",
                "minItems": rules.PANEL_SIZE,
                "maxItems": rules.PANEL_SIZE,
                "items": ref("Agent"),
            },
            "panel": {
                "type": ["string", "integer"],
                "description": (
                    "A saved panel's name or id (GET /api/panels/), in place of "
                    '"agents": the judgement records the panel and runs with a copy of its '
                    "agents. Unknown, or another user's: 400 naming panel."
                ),
            },
            "hold_contested": {
                "type": ["boolean", "null"],
                "description": (
                    'Hold a contested verdict for a person: status is "held" until a '
                    "reviewer confirms or overrides it (POST .../confirm, .../override), "
                    "and the webhook fires again then. Absent or null: the saved panel's "
                    "choice, else the deployment's MAGI_HOLD_CONTESTED."
                ),
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
    "Panel": {
        "type": "object",
        "required": ["id", "name", "description", "example", "hold_contested", "agents"],
        "properties": {
            "id": {"type": "integer", "minimum": 1},
            "name": {"type": "string"},
            "description": {"type": "string"},
            "example": EXAMPLE,
            "hold_contested": {
                "type": ["boolean", "null"],
                "description": "Hold contested verdicts of judgements started from it; "
                "null: the deployment's MAGI_HOLD_CONTESTED.",
            },
            "agents": {
                "type": "array",
                "minItems": rules.PANEL_SIZE,
                "maxItems": rules.PANEL_SIZE,
                "items": ref("Agent"),
            },
        },
        "additionalProperties": False,
    },
    "PanelList": {
        "type": "object",
        "required": ["panels"],
        "properties": {"panels": {"type": "array", "items": ref("Panel")}},
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
    "ConfirmRequest": {
        "type": "object",
        "required": ["reason"],
        "properties": {"reason": {"type": "string", "minLength": 1}},
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
        "required": ["round", "decision", "reason", "changed", "with_majority"],
        "properties": {
            "round": {"type": "integer", "minimum": 1, "maximum": rules.ROUNDS},
            "decision": {"enum": list(Decision.values)},
            "reason": {"type": "string"},
            "changed": {
                "type": "boolean",
                "description": "The decision differs from the agent's own in the round "
                "before (false in round 1).",
            },
            "with_majority": {
                "type": ["boolean", "null"],
                "description": "Whether the decision is the one both other agents gave in "
                "the round before; null in round 1 and when those two disagreed.",
            },
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
        "required": [
            "id",
            "title",
            "status",
            "panel_status",
            "contested",
            "contest_reasons",
            "hold_contested",
            "override",
            "confirmation",
            "error",
            "panel",
            "agents",
        ],
        "properties": {
            "id": {"type": "integer", "minimum": 1},
            "title": {"type": "string"},
            "panel": {
                "description": (
                    "The saved panel it started from (null: agents given directly). The "
                    "agents below are the ones that ran, whatever the panel holds now."
                ),
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["id", "name"],
                        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                        "additionalProperties": False,
                    },
                    {"type": "null"},
                ],
            },
            "status": {
                "enum": STATUSES,
                "description": (
                    "The verdict in force: the override's; else held while a contested "
                    "verdict waits for a person; else the panel's."
                ),
            },
            "panel_status": {"enum": STATUSES, "description": "What the panel decided."},
            "contested": {
                "type": ["boolean", "null"],
                "description": (
                    "Whether a person should look at the panel's verdict before anyone "
                    "relies on it (null until decided); contest_reasons says why."
                ),
            },
            "contest_reasons": {"type": "array", "items": {"type": "string"}},
            "hold_contested": {"type": "boolean"},
            "override": {"oneOf": [ref("Override"), {"type": "null"}]},
            "confirmation": {
                "description": "A reviewer kept the panel's verdict: who, when, why.",
                "oneOf": [ref("Override"), {"type": "null"}],
            },
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
