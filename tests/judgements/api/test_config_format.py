"""The configuration format declared once (judgements/api/config_format.py): the client's
limits are the server's own, and the name rule is one function both sides import (issue
49: the client allowed criteria of 10,000 characters against the server's 5,000, content
of 100,000 against 20,000, and folded names differently)."""

import pytest

from judgements.api import config_format
from judgements.core import text
from judgements.intake import schemas
from magi_client import directory, kinds, limits, names, schema, schema_check


def test_the_clients_limits_are_the_servers_own():
    shipped = config_format.CLIENT_LIMITS.read_text(encoding="utf-8")
    assert shipped == config_format.client_module(), (
        "magi_client/limits.py differs from the server's schemas: run config_format.write()"
    )
    assert limits.CRITERIA_MAX_CHARS == schemas.CRITERIA_MAX_CHARS


def test_the_export_reads_each_kind_where_the_servers_registry_says():
    shipped = config_format.CLIENT_KINDS.read_text(encoding="utf-8")
    assert shipped == config_format.client_kinds(), (
        "magi_client/kinds.py differs from the server's registry: run config_format.write()"
    )
    assert kinds.LISTS["panel"] == ("/api/panels/", "panels")
    assert "user" not in kinds.LISTS  # not configuration a directory holds


def test_a_kind_registered_is_one_the_export_reads(notes):
    assert '    "note": ("/api/notes/", "notes"),\n' in config_format.client_kinds()


def test_the_client_refuses_exactly_what_the_server_refuses_in_length():
    agent = {"name": "A", "model": "m", "criteria": "x" * (schemas.CRITERIA_MAX_CHARS + 1)}
    assert schema_check.problems(agent, schema.AGENT) == [
        ("criteria", f"Must be at most {schemas.CRITERIA_MAX_CHARS} characters.")
    ]
    case = {"id": "a", "content": "x" * (limits.CONTENT_MAX_CHARS + 1), "expected": "approve"}
    assert [path for path, _ in schema_check.problems(case, schema.SUITE_CASE)] == ["content"]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Deploy\u200b gate", "deploy gate"),  # a zero-width space
        ("\uff24eploy gate", "deploy gate"),  # a full-width D
        ("Stra\u00dfe", "STRASSE"),  # casefold, then NFKC again
        ("deploy\u00a0 \tgate ", "DEPLOY GATE"),
    ],
)
def test_the_client_and_the_server_call_the_same_names_equal(one, other):
    assert directory.comparable(one) == directory.comparable(other)
    assert text.comparable_name(one) == text.comparable_name(other)


def test_the_name_rule_is_one_function_on_both_sides():
    assert text.comparable_name is names.comparable_name
    assert directory.comparable is names.comparable_name
