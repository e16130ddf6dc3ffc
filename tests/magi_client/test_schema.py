"""The configuration files' JSON Schemas (magi_client/schema.py): the published copies are
the source's, they are valid draft 2020-12 schemas, and the lists they share with the
server are the server's (test_schema_check.py holds the client's checks to the reference
validator)."""

import itertools
import json
from pathlib import Path

import jsonschema
import pytest

from judgements.core import rules
from judgements.evaluations import suite_schema
from magi_client import schema
from tests.support.live_site import REPO

COPIES = [REPO / "docs" / "schemas", REPO / "clients/magi-client/src/magi_client/schemas"]


@pytest.mark.parametrize("copy", COPIES, ids=lambda path: str(path.relative_to(REPO)))
def test_the_published_schemas_are_the_sources(copy: Path):
    published = {path.name: json.loads(path.read_text()) for path in copy.glob("*.json")}
    assert published == schema.PUBLISHED, "run: python -m magi_client.schema " + str(copy)


@pytest.mark.parametrize("name", sorted(schema.PUBLISHED))
def test_each_schema_is_a_valid_draft_2020_12_schema(name: str):
    jsonschema.Draft202012Validator.check_schema(schema.PUBLISHED[name])


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
