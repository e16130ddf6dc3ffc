"""The OpenAPI 3.1 description of the HTTP API (judgements/api/judgement_endpoints.py), served at
/api/schema.json. tests/judgements/test_openapi.py validates real answers against it, so
it cannot drift from what the API sends."""

from judgements.core import rules
from judgements.intake import idempotency
from judgements.models import Decision, Status
from judgements.outcome import webhooks

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

LOCATION = {"Location": {"required": True, "schema": {"type": "string"}}}
REPLAYED = {
    "Idempotency-Replayed": {
        "description": "With an Idempotency-Key: `true` when this answer replays an earlier "
        "request (nothing new was started), `false` when it started the judgement.",
        "schema": {"enum": ["true", "false"]},
    }
}


# --- evaluations (judgements/api/evaluation_endpoints.py) ---------------------------------------

RATIO = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
COUNT = {"type": "integer", "minimum": 0}


def counts_of(*keys: str) -> dict:
    return {
        "type": "object",
        "required": list(keys),
        "properties": dict.fromkeys(keys, COUNT),
        "additionalProperties": False,
    }


SCHEMAS.update(
    {
        "Suite": {
            "type": "object",
            "required": ["id", "name", "description", "example", "cases", "export"],
            "properties": {
                "id": {"type": "integer", "minimum": 1},
                "name": {"type": "string"},
                "description": {"type": "string"},
                "example": EXAMPLE,
                "cases": COUNT,
                "export": {"type": "string", "description": "Where to GET it as JSONL."},
            },
            "additionalProperties": False,
        },
        "SuiteList": {
            "type": "object",
            "required": ["suites"],
            "properties": {"suites": {"type": "array", "items": ref("Suite")}},
            "additionalProperties": False,
        },
        "EvaluationRequest": {
            "type": "object",
            "required": ["suite"],
            # The agents, or a saved panel to take them from: exactly one of the two.
            "oneOf": [{"required": ["agents"]}, {"required": ["panel"]}],
            "properties": {
                "panel": {
                    "type": ["string", "integer"],
                    "description": "A saved panel's name or id (GET /api/panels/).",
                },
                "agents": {
                    "type": "array",
                    "minItems": rules.PANEL_SIZE,
                    "maxItems": rules.PANEL_SIZE,
                    "items": ref("Agent"),
                },
                "panel_name": {
                    "type": "string",
                    "maxLength": 100,
                    "description": 'With "agents" only: the name the run reports them '
                    'under ("Unsaved panel" by default).',
                },
                "suite": {
                    "type": ["string", "integer"],
                    "description": "A suite's name or id (GET /api/suites/).",
                },
                "repeat": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 20,
                    "default": 1,
                    "description": "How many times each case is judged.",
                },
            },
            "additionalProperties": False,
        },
        "Progress": {
            "type": "object",
            "required": [
                "total",
                "finished",
                "errors",
                "running",
                "done",
                "rounds",
                "seconds_left",
            ],
            "properties": {
                "total": COUNT,
                "finished": {**COUNT, "description": "Judgements ended, errors included."},
                "errors": COUNT,
                "running": {**COUNT, "description": "Judgements a worker is judging now."},
                "done": {"type": "boolean"},
                "rounds": {
                    "type": "array",
                    "description": "Votes stored in each round, of three per judgement.",
                    "items": {
                        "type": "object",
                        "required": ["round", "votes", "of"],
                        "properties": {
                            "round": {"type": "integer", "minimum": 1, "maximum": 3},
                            "votes": COUNT,
                            "of": COUNT,
                        },
                        "additionalProperties": False,
                    },
                },
                "seconds_left": {
                    "type": ["integer", "null"],
                    "minimum": 0,
                    "description": "An estimate: the time since the run's first start per "
                    "vote stored, times the votes still due. null before the first vote "
                    "and once done.",
                },
            },
            "additionalProperties": False,
        },
        "AgentReport": {
            "type": "object",
            "required": [
                "name",
                "accuracy",
                "round1_accuracy",
                "vote_changes",
                "changes_with_majority",
            ],
            "properties": {
                "name": {"type": "string"},
                "accuracy": RATIO,
                "round1_accuracy": RATIO,
                "vote_changes": COUNT,
                "changes_with_majority": COUNT,
            },
            "additionalProperties": False,
        },
        "Report": {
            "type": "object",
            "description": (
                "What the run's judgements say about the panel, with the key names of "
                "`manage.py evaluate --json`. Ratios are 0..1, or null when there was "
                "nothing to count; errors are counted apart, never as a verdict."
            ),
            "required": [
                "cases",
                "repeats",
                "judgements",
                "accuracy",
                "confusion",
                "kappa",
                "errors",
                "agents",
                "round1_majority_accuracy",
                "deliberation",
                "vote_changes",
                "changes_with_majority",
                "changes_toward_expected",
                "changes_away_from_expected",
                "vote_changes_by_round",
                "changes_with_majority_by_round",
                "unstable_cases",
                "attack_success_rate",
                "trust",
                "tokens",
                "seconds_per_judgement",
                "wall_seconds",
                "cost",
            ],
            "properties": {
                "cases": COUNT,
                "repeats": {"type": "integer", "minimum": 1},
                "judgements": COUNT,
                "accuracy": RATIO,
                "confusion": {
                    "type": "object",
                    "description": "Expected verdict -> the panel's verdict -> count.",
                    "required": list(Decision.values),
                    "properties": {
                        decision: counts_of(*Decision.values) for decision in Decision.values
                    },
                    "additionalProperties": False,
                },
                "kappa": {"type": ["number", "null"], "minimum": -1, "maximum": 1},
                "errors": COUNT,
                "agents": {"type": "array", "items": ref("AgentReport")},
                "round1_majority_accuracy": RATIO,
                "deliberation": counts_of("fixed", "broke"),
                "vote_changes": COUNT,
                "changes_with_majority": COUNT,
                "changes_toward_expected": COUNT,
                "changes_away_from_expected": COUNT,
                "vote_changes_by_round": counts_of(*(str(n) for n in range(2, rules.ROUNDS + 1))),
                "changes_with_majority_by_round": counts_of(
                    *(str(n) for n in range(2, rules.ROUNDS + 1))
                ),
                "unstable_cases": {"type": "array", "items": {"type": "string"}},
                "attack_success_rate": RATIO,
                "trust": {
                    "type": "object",
                    "description": (
                        "How far to trust the panel: coverage is the share of assessed "
                        "judgements not contested; the accuracies are of each part; curve "
                        "keeps the judgements with at most `level` kinds of signal."
                    ),
                    "required": [
                        "assessed",
                        "contested",
                        "coverage",
                        "uncontested_accuracy",
                        "contested_accuracy",
                        "uncontested_attacks",
                        "uncontested_attack_success_rate",
                        "curve",
                    ],
                    "properties": {
                        "assessed": COUNT,
                        "contested": COUNT,
                        "coverage": RATIO,
                        "uncontested_accuracy": RATIO,
                        "contested_accuracy": RATIO,
                        "uncontested_attacks": COUNT,
                        "uncontested_attack_success_rate": RATIO,
                        "curve": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["level", "coverage", "accuracy"],
                                "properties": {
                                    "level": COUNT,
                                    "coverage": RATIO,
                                    "accuracy": RATIO,
                                },
                                "additionalProperties": False,
                            },
                        },
                    },
                    "additionalProperties": False,
                },
                "tokens": {
                    "type": "object",
                    "required": ["prompt", "completion", "cached"],
                    "properties": {
                        kind: {"type": ["integer", "null"], "minimum": 0}
                        for kind in ("prompt", "completion", "cached")
                    },
                    "additionalProperties": False,
                },
                "seconds_per_judgement": {
                    "type": ["number", "null"],
                    "minimum": 0,
                    "description": "Mean time from claim to end of one judgement.",
                },
                "wall_seconds": {
                    "type": ["number", "null"],
                    "minimum": 0,
                    "description": "From the run's first start to its last end.",
                },
                "cost": {
                    "type": ["number", "null"],
                    "minimum": 0,
                    "description": "USD, when MAGI_MODEL_PRICES prices every model used.",
                },
            },
            "additionalProperties": False,
        },
        "EvaluationRun": {
            "type": "object",
            "required": [
                "id",
                "panel",
                "agents",
                "suite",
                "repeat",
                "created_at",
                "url",
                "cancelled_at",
                "cancelled_by",
                "progress",
                "report",
            ],
            "properties": {
                "id": {"type": "integer", "minimum": 1},
                "panel": {
                    "type": "object",
                    "required": ["id", "name"],
                    "properties": {
                        "id": {"type": ["integer", "null"]},
                        "name": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
                "agents": {
                    "type": "array",
                    "description": "The agents as the run used them.",
                    "items": ref("Agent"),
                },
                "suite": {
                    "type": "object",
                    "required": ["id", "name"],
                    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                    "additionalProperties": False,
                },
                "repeat": {"type": "integer", "minimum": 1},
                "created_at": {"type": "string", "format": "date-time"},
                "url": {"type": "string", "description": "The run's page."},
                "cancelled_at": {
                    "type": ["string", "null"],
                    "format": "date-time",
                    "description": "When the run was cancelled; null if it was not.",
                },
                "cancelled_by": {
                    "type": ["string", "null"],
                    "description": "Who cancelled it (a username).",
                },
                "progress": ref("Progress"),
                "report": {
                    "oneOf": [ref("Report"), {"type": "null"}],
                    "description": "null until every judgement of the run has ended.",
                },
            },
            "additionalProperties": False,
        },
    }
)

JSONL = {"application/jsonl": {"schema": {"type": "string"}}}


def id_parameter(name: str) -> dict:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
    }


def evaluation_paths() -> dict:
    invalid_suite = answer(
        "Invalid input; `errors` names the line and field (`line 4.expected`), or `name`, "
        "`description` or `cases`.",
        "Invalid",
    )
    invalid_run = answer(
        "Invalid input; `errors` names each field (`suite`, `repeat`, `agents[1].model`).",
        "Invalid",
    )
    not_found = answer("No such suite or run, or another user's.", "Error")
    return {
        "/api/suites/": {
            "get": {
                "summary": "The suites the caller may run: their own and the shipped ones "
                "(staff: every suite).",
                "responses": {
                    "200": answer("The suites.", "SuiteList"),
                    "401": ERRORS["401"],
                },
            },
            "post": {
                "summary": "Import a suite: the body is JSONL, one case a line "
                '({"id", "content", "expected", and optionally "title", '
                '"expected_agents", "tags"}), as GET /api/suites/{suite_id}.jsonl '
                "exports it.",
                "parameters": [
                    {
                        "name": "name",
                        "in": "query",
                        "required": True,
                        "description": "Differs from the caller's other suites' names.",
                        "schema": {"type": "string", "maxLength": 100},
                    },
                    {
                        "name": "description",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string"},
                    },
                ],
                "requestBody": {"required": True, "content": JSONL},
                "responses": {
                    "201": answer("Stored.", "Suite", LOCATION),
                    "400": invalid_suite,
                    **{k: ERRORS[k] for k in ("401", "413")},
                },
            },
        },
        "/api/suites/{suite_id}.jsonl": {
            "get": {
                "summary": "A suite as JSONL, one case a line.",
                "parameters": [id_parameter("suite_id")],
                "responses": {
                    "200": {"description": "The suite.", "content": JSONL},
                    "401": ERRORS["401"],
                    "404": not_found,
                },
            }
        },
        "/api/evaluations/": {
            "post": {
                "summary": "Start an evaluation run: a panel over a suite, each case "
                "`repeat` times, as ordinary judgements.",
                "requestBody": {
                    "required": True,
                    "content": json_content(ref("EvaluationRequest")),
                },
                "responses": {
                    "201": answer("Queued; its progress.", "EvaluationRun", LOCATION),
                    "400": invalid_run,
                    **{k: ERRORS[k] for k in ("401", "413")},
                    "429": answer(
                        "The caller has MAGI_UNFINISHED_RUNS_PER_USER runs under way; retry "
                        "after `Retry-After` seconds.",
                        "Error",
                        {"Retry-After": {"required": True, "schema": {"type": "string"}}},
                    ),
                },
            }
        },
        "/api/evaluations/{run_id}/": {
            "get": {
                "summary": "A run's progress and, once every judgement has ended, its report.",
                "parameters": [id_parameter("run_id")],
                "responses": {
                    "200": answer("The run.", "EvaluationRun"),
                    "401": ERRORS["401"],
                    "404": not_found,
                },
            }
        },
        "/api/evaluations/{run_id}/cancel": {
            "post": {
                "summary": "Cancel a run: its judgements not yet ended end in error, and "
                "workers stop their remaining calls. What was decided stays.",
                "parameters": [id_parameter("run_id")],
                "responses": {
                    "200": answer("The run, cancelled.", "EvaluationRun"),
                    "401": ERRORS["401"],
                    "404": not_found,
                    "409": answer("The run has already ended.", "Error"),
                },
            }
        },
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
