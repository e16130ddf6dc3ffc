"""The schemas of suites, runs and their reports in the OpenAPI document."""

from typing import Any

from judgements.api.openapi.parts import COUNT, EXAMPLE, RATIO, counts_of, ref
from judgements.core import rules
from judgements.models import Decision

EVALUATION_SCHEMAS: dict[str, dict[str, Any]] = {
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
