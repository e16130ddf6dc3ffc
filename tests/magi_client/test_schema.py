"""The configuration files' JSON Schemas (magi_client/schema.py): the published copies are
the source's, they are valid draft 2020-12 schemas, and the client's own checks agree with
the reference implementation (jsonschema) on every document of a table."""

import itertools
import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from judgements.core import rules
from judgements.evaluations import suite_schema
from magi_client import schema
from tests.support.live_site import REPO
from tests.support.magi_client import PAYMENTS_PANEL, PAYMENTS_TEAM, SUPPORT_PANEL, SUPPORT_TEAM

COPIES = [REPO / "docs" / "schemas", REPO / "clients/magi-client/src/magi_client/schemas"]

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


@pytest.mark.parametrize("copy", COPIES, ids=lambda path: str(path.relative_to(REPO)))
def test_the_published_schemas_are_the_sources(copy: Path):
    published = {path.name: json.loads(path.read_text()) for path in copy.glob("*.json")}
    assert published == schema.PUBLISHED, "run: python -m magi_client.schema " + str(copy)


@pytest.mark.parametrize("name", sorted(schema.PUBLISHED))
def test_each_schema_is_a_valid_draft_2020_12_schema(name: str):
    jsonschema.Draft202012Validator.check_schema(schema.PUBLISHED[name])


@pytest.mark.parametrize(("shape", "document"), DOCUMENTS)
def test_the_clients_checks_agree_with_the_reference_validator(shape, document):
    reference = jsonschema.Draft202012Validator(shape)
    assert (schema.problems(document, shape) == []) == reference.is_valid(document)


def test_a_problem_names_the_field_path():
    document = {**PANEL, "agents": [{**AGENT, "model": 3}, AGENT, AGENT], "colour": "red"}
    assert schema.problems(document, schema.PANEL) == [
        ("agents[0].model", "Must be string, not integer."),
        ("colour", "Unknown field; the fields are " + ", ".join(schema.PANEL["properties"]) + "."),
    ]


def test_the_prompt_variants_are_the_servers():
    from judgements.core import prompt_variants

    assert [variant.value for variant in prompt_variants.Variant] == schema.VARIANTS
    assert [
        (str(first), str(second), what) for first, second, what in prompt_variants.EXCLUSIVE
    ] == schema.EXCLUSIVE_VARIANTS


@pytest.mark.parametrize("expected", ["approve", "reject"])
@pytest.mark.parametrize("agents", list(itertools.product(["approve", "reject"], repeat=3)))
def test_the_client_refuses_a_label_the_exact_rule_cannot_give_in_the_servers_words(
    expected, agents
):
    case: schema.SuiteCase = {
        "id": "c-1",
        "content": "x",
        "expected": expected,
        "expected_agents": list(agents),
    }
    by_rule = rules.panel_decision(agents)
    said = schema.rule_problem(case)
    if by_rule == expected:
        assert said is None
    else:
        assert said == suite_schema.contradiction("c-1", expected, list(agents), by_rule)
    assert schema.rule_problem({"id": "c-1", "content": "x", "expected": expected}) is None
