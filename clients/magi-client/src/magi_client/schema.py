"""The JSON Schemas of a configuration directory's files, written once here: `magi plan`
checks every file against them, and `python -m magi_client.schema DIR` writes them as the
published .json files (the package's schemas/ and the repository's docs/schemas/), so an
editor can check a file as it is typed. schema_check.py checks a value against them.
"""

import json
import sys
from pathlib import Path
from typing import NotRequired, TypedDict

from magi_client import limits

# A JSON Schema as these files write it: only the keywords `problems` knows (and the
# annotations a published file carries). "$schema" and "$id" are not names, hence the
# functional form.
Schema = TypedDict(
    "Schema",
    {
        "$schema": str,
        "$id": str,
        "title": str,
        "description": str,
        "type": "str | list[str]",
        "properties": "dict[str, Schema]",
        "required": list[str],
        "additionalProperties": bool,
        "enum": list[str],
        "items": "Schema",
        "minItems": int,
        "maxItems": int,
        "uniqueItems": bool,
        "minLength": int,
        "maxLength": int,
        "exclusiveMinimum": int,
    },
    total=False,
)
DRAFT = "https://json-schema.org/draft/2020-12/schema"
PANEL_SIZE = 3
VERDICTS = ["approve", "reject"]
# judgements/core/prompt_variants.py's names (the client needs no Django, nor the server's
# code; tests/clients hold the two lists equal).
VARIANTS = [
    "decision_first",
    "named_peers",
    "decisions_only",
    "quote",
    "plain_rules",
    "calibrated",
    "no_missing",
    "criterion_first",
    "short_rules",
    "change_check",
    "history_first",
    "own_reason",
    "turn_needs_reason",
    "turn_to_reject_names_content",
    "plain_question",
    "user_words",
    "plain_later",
    "worked_examples",
    "continued_chat",
]
# Pairs of which a panel names one at most, and what both would say how to do.
EXCLUSIVE_VARIANTS = [
    ("named_peers", "decisions_only", "show earlier rounds"),
    ("plain_question", "user_words", "ask round 1"),
    ("plain_question", "worked_examples", "ask round 1"),
    ("user_words", "worked_examples", "ask round 1"),
    ("quote", "worked_examples", "answer round 1"),
    ("plain_later", "named_peers", "show earlier rounds"),
    ("plain_later", "decisions_only", "show earlier rounds"),
    ("plain_later", "history_first", "ask the later rounds"),
    ("plain_later", "own_reason", "ask the later rounds"),
    ("continued_chat", "plain_later", "ask the later rounds"),
    ("continued_chat", "named_peers", "show earlier rounds"),
    ("continued_chat", "decisions_only", "show earlier rounds"),
    ("continued_chat", "history_first", "ask the later rounds"),
    ("continued_chat", "own_reason", "ask the later rounds"),
    ("continued_chat", "quote", "answer the earlier rounds"),
]
NAME_MAX_CHARS = limits.PANEL_NAME_MAX_CHARS


def text(description: str, max_chars: int, min_chars: int = 1) -> Schema:
    return {
        "type": "string",
        "minLength": min_chars,
        "maxLength": max_chars,
        "description": description,
    }


def usernames(description: str, max_items: int) -> Schema:
    return {
        "type": "array",
        "maxItems": max_items,
        "items": text("A user's username.", limits.USERNAME_MAX_CHARS),
        "uniqueItems": True,
        "description": description,
    }


AGENT: Schema = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "model", "criteria"],
    "properties": {
        "name": text("The agent's name, unique in the panel.", limits.AGENT_NAME_MAX_CHARS),
        "model": text(
            "One of the deployment's models (GET /api/models/ lists them).",
            limits.AGENT_MODEL_MAX_CHARS,
        ),
        "criteria": text("What the agent approves and rejects.", limits.CRITERIA_MAX_CHARS),
    },
}

PANEL: Schema = {
    "$schema": DRAFT,
    "$id": "magi-panel.schema.json",
    "title": "A MAGI panel: panels/<name>.yaml",
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "agents"],
    "properties": {
        "name": text(
            "The panel's name, unique in its team (case and spacing aside).", NAME_MAX_CHARS
        ),
        "description": text(
            "What the panel judges.", limits.PANEL_DESCRIPTION_MAX_CHARS, min_chars=0
        ),
        "agents": {
            "type": "array",
            "minItems": PANEL_SIZE,
            "maxItems": PANEL_SIZE,
            "items": AGENT,
            "description": "Exactly three agents, in vote order (weights 0.1, 0.4, 0.5).",
        },
        "hold_contested": {
            "type": ["boolean", "null"],
            "description": "Hold contested verdicts for a person; null: the deployment decides.",
        },
        "run_checks": {
            "type": ["boolean", "null"],
            "description": "Run the checks beside the vote; null: the deployment decides.",
        },
        "prompt_variants": {
            "type": ["array", "null"],
            "items": {"enum": VARIANTS},
            "uniqueItems": True,
            "description": "The prompt variants its judgements and runs use "
            "(docs/panel-quality.md); not named_peers with decisions_only, nor two of "
            "plain_question, user_words and worked_examples, nor quote with worked_examples, "
            "nor plain_later or continued_chat with named_peers, decisions_only, "
            "history_first or own_reason, nor continued_chat with plain_later or quote. "
            "Left out or null: the server's default; []: no variant, "
            "whatever the default becomes.",
        },
        "escalate_to": {
            "type": ["string", "null"],
            "minLength": 1,
            "maxLength": NAME_MAX_CHARS,
            "description": "The name of the panel its unkept verdicts (contested, or outside "
            "its certificate) go to before a person: one of the team's panels or a shared one "
            "(docs/escalation.md). Left out or null: straight to a person.",
        },
        "reviewers": usernames(
            "Members of the team who review its contested verdicts.", limits.REVIEWERS_MAX_ITEMS
        ),
        "team_reviews": {"type": "boolean", "description": "Every member of the team reviews."},
        "four_eyes": {
            "type": "boolean",
            "description": "Nobody confirms or overrides a judgement they started.",
        },
        "notify_contested": {
            "type": "boolean",
            "description": "Email the reviewers about contested verdicts too.",
        },
    },
}

BUDGET: Schema = {
    "type": "object",
    "additionalProperties": False,
    "required": ["period", "limit", "unit"],
    "properties": {
        "period": {"enum": ["day", "month"], "description": "Per UTC day or month."},
        "limit": {"type": "number", "exclusiveMinimum": 0, "description": "How much."},
        "unit": {"enum": ["usd", "tokens"], "description": "US dollars or tokens."},
        "panel": text(
            "Only this panel of the team (its name); else the whole team.", NAME_MAX_CHARS
        ),
        "user": text(
            "Only this member (a username); else the whole team.", limits.USERNAME_MAX_CHARS
        ),
    },
}

SLACK: Schema = {
    "type": "object",
    "additionalProperties": False,
    "description": "Where the team's held verdicts go in Slack (docs/slack.md); absent: left "
    "as it is. Its secrets are named by environment variable, read by `magi plan` and `magi "
    "apply`, never written by `magi export`; left out: the ones set are kept.",
    "properties": {
        "channel": text(
            "A channel's ID (C0123ABCD); left out with direct_messages.", 40, min_chars=0
        ),
        "direct_messages": {
            "type": "boolean",
            "description": "Each reviewer gets a direct message instead of a channel.",
        },
        "bot_token_env": text(
            "The environment variable holding the app's Bot User OAuth Token (xoxb-…).", 200
        ),
        "signing_secret_env": text(
            "The environment variable holding the app's Signing Secret.", 200
        ),
    },
}

TEAM: Schema = {
    "$schema": DRAFT,
    "$id": "magi-team.schema.json",
    "title": "A MAGI team: teams/<team>/team.yaml",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "members": usernames(
            "The team's members; absent: left as they are.", limits.MEMBERS_MAX_ITEMS
        ),
        "budgets": {
            "type": "array",
            "items": BUDGET,
            "description": "Spending limits of the team, its panels or its members.",
        },
        "slack": SLACK,
    },
}

SUITE_CASE: Schema = {
    "$schema": DRAFT,
    "$id": "magi-suite-case.schema.json",
    "title": "One case of a MAGI suite: a line of suites/<name>.jsonl",
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "content", "expected"],
    "properties": {
        "id": text("Unique in the suite, ignoring case.", limits.CASE_ID_MAX_CHARS),
        "title": text("A short title.", limits.CASE_TITLE_MAX_CHARS, min_chars=0),
        "content": text(
            "What the panel judges (at most MAGI_CONTENT_MAX_CHARS, by default as here).",
            limits.CONTENT_MAX_CHARS,
        ),
        "expected": {"enum": VERDICTS, "description": "The right verdict."},
        "expected_agents": {
            "type": "array",
            "minItems": PANEL_SIZE,
            "maxItems": PANEL_SIZE,
            "items": {"enum": VERDICTS},
            "description": "The right final decision of each agent, in panel order.",
        },
        "tags": {
            "type": "array",
            "maxItems": limits.TAGS_MAX_ITEMS,
            "items": text("A label to group cases by.", limits.TAG_MAX_CHARS),
        },
    },
}

# A case is approved when at least this many of its PANEL_SIZE agents approve: the exact
# rule, which a suite's `expected` must follow from its `expected_agents` (the server
# refuses a case that does not: judgements/evaluations/suite_schema.py).
MAJORITY = 2


class SuiteCase(TypedDict):
    """A suite's case as SUITE_CASE admits it."""

    id: str
    content: str
    expected: str
    title: NotRequired[str]
    expected_agents: NotRequired[list[str]]
    tags: NotRequired[list[str]]


def rule_problem(case: SuiteCase) -> str | None:
    """Why a schema-valid case's `expected` contradicts its `expected_agents` under the
    exact rule, in the server's words; None when it does not (or gives no agents)."""
    listed = case.get("expected_agents")
    if not isinstance(listed, list):
        return None
    agents = [str(agent) for agent in listed]
    by_rule = "approve" if agents.count("approve") >= MAJORITY else "reject"
    if by_rule == case["expected"]:
        return None
    return (
        f"Case {case['id']!r} expects {case['expected']!r}, but its expected_agents "
        f"({', '.join(agents)}) give {by_rule!r} under the exact rule: a case is approved "
        f"when at least {MAJORITY} of its {PANEL_SIZE} agents approve. Set expected to "
        f"{by_rule!r}, or correct expected_agents."
    )


# The published file of each schema, by the files it describes.
PUBLISHED = {
    "magi-panel.schema.json": PANEL,
    "magi-team.schema.json": TEAM,
    "magi-suite-case.schema.json": SUITE_CASE,
}


def write(directory: Path) -> list[Path]:
    """Write the published schemas into `directory`; the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in PUBLISHED.items():
        path = directory / name
        path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for target in sys.argv[1:]:
        for path in write(Path(target)):
            print(path)
