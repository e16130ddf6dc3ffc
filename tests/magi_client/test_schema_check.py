"""A value checked against the client's schemas (magi_client/schema_check.py), held to the
reference validator."""

import jsonschema
import pytest
import yaml

from magi_client import schema, schema_check
from tests.support.magi_client import PAYMENTS_PANEL, PAYMENTS_TEAM, SUPPORT_PANEL, SUPPORT_TEAM

AGENT = {"name": "A", "model": "m", "criteria": "c"}
PANEL = {"name": "p", "agents": [AGENT, {**AGENT, "name": "B"}, {**AGENT, "name": "C"}]}
DOCUMENTS = [
    (schema.PANEL, yaml.safe_load(PAYMENTS_PANEL)),
    (schema.PANEL, yaml.safe_load(SUPPORT_PANEL)),
    (schema.PANEL, PANEL),
    (schema.PANEL, {**PANEL, "colour": "red"}),
    (schema.PANEL, {**PANEL, "agents": PANEL["agents"][:2]}),
    (schema.PANEL, {**PANEL, "agents": [*PANEL["agents"], AGENT]}),
    (schema.PANEL, {**PANEL, "four_eyes": "yes"}),
    (schema.PANEL, {**PANEL, "four_eyes": 1}),
    (schema.PANEL, {**PANEL, "hold_contested": None}),
    (schema.PANEL, {**PANEL, "name": ""}),
    (schema.PANEL, {**PANEL, "name": "x" * 101}),
    (schema.PANEL, {**PANEL, "reviewers": ["a", "a"]}),
    (schema.PANEL, {**PANEL, "reviewers": "ana"}),
    (schema.PANEL, {**PANEL, "agents": [{**AGENT, "temperature": 1}, AGENT, AGENT]}),
    (schema.PANEL, {"agents": PANEL["agents"]}),
    (schema.PANEL, ["not", "an", "object"]),
    (schema.TEAM, yaml.safe_load(PAYMENTS_TEAM)),
    (schema.TEAM, yaml.safe_load(SUPPORT_TEAM)),
    (schema.TEAM, {}),
    (schema.TEAM, {"budgets": [{"period": "week", "limit": 5, "unit": "usd"}]}),
    (schema.TEAM, {"budgets": [{"period": "day", "limit": 5, "unit": "eur"}]}),
    (schema.TEAM, {"budgets": [{"period": "day", "limit": 0, "unit": "usd"}]}),
    (schema.TEAM, {"budgets": [{"period": "day", "limit": "5", "unit": "usd"}]}),
    (schema.TEAM, {"budgets": [{"period": "day", "limit": True, "unit": "usd"}]}),
    (schema.TEAM, {"budgets": [{"period": "day", "unit": "usd"}]}),
    (schema.TEAM, {"members": [1, 2]}),
    (schema.SUITE_CASE, {"id": "a", "content": "x", "expected": "approve"}),
    (schema.SUITE_CASE, {"id": "a", "content": "x", "expected": "ok"}),
    (schema.SUITE_CASE, {"id": "a", "content": "x", "expected": "reject", "tags": ["t"] * 21}),
    (schema.SUITE_CASE, {"id": "a", "content": "", "expected": "reject"}),
    (schema.SUITE_CASE, {"id": "a", "content": "x", "expected": "reject", "x": 1}),
    (
        schema.SUITE_CASE,
        {"id": "a", "content": "x", "expected": "reject", "expected_agents": ["reject"] * 2},
    ),
]


@pytest.mark.parametrize(("shape", "document"), DOCUMENTS)
def test_the_clients_checks_agree_with_the_reference_validator(shape, document):
    reference = jsonschema.Draft202012Validator(shape)
    assert (schema_check.problems(document, shape) == []) == reference.is_valid(document)


def test_a_problem_names_the_field_path():
    document = {**PANEL, "agents": [{**AGENT, "model": 3}, AGENT, AGENT], "colour": "red"}
    assert schema_check.problems(document, schema.PANEL) == [
        ("agents[0].model", "Must be string, not integer."),
        ("colour", "Unknown field; the fields are " + ", ".join(schema.PANEL["properties"]) + "."),
    ]
