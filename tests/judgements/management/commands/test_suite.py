"""`manage.py suite`: a suite imported from JSONL and exported back, and exit code 2
naming the bad line, suite or owner."""

import json

import pytest

from judgements.models import Suite
from tests.support.commands import run_command
from tests.support.evaluations import GATE_CASES, write_suite

pytestmark = pytest.mark.django_db(transaction=True)


def test_suite_import_then_export_round_trips(tmp_path, user):
    path = write_suite(tmp_path)
    code, _, err = run_command(
        "suite", "import", str(path), "--name", "Gate", "--description", "d", "--owner", "ada"
    )
    assert code == 0
    assert err.strip() == "suite 'Gate' imported: 2 cases"
    suite = Suite.objects.get()
    assert (suite.name, suite.description, suite.owner) == ("Gate", "d", user)
    code, out, _ = run_command("suite", "export", "gate", "--owner", "ada")
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == GATE_CASES


def test_suite_import_exits_2_with_the_bad_lines(tmp_path):
    path = write_suite(
        tmp_path, [GATE_CASES[0], {"id": "ok", "content": "x", "expected": "reject"}]
    )
    code, _, err = run_command("suite", "import", str(path), "--name", "Gate")
    assert code == 2
    assert err.startswith("invalid input: line 2.id: Line 1 already has a case with id 'ok'")
    assert not Suite.objects.exists()


def test_suite_import_exits_2_on_a_label_the_exact_rule_cannot_give(tmp_path):
    one_fails = {
        **GATE_CASES[0],
        "expected": "reject",
        "expected_agents": ["approve"] * 2 + ["reject"],
    }
    path = write_suite(tmp_path, [one_fails])
    code, _, err = run_command("suite", "import", str(path), "--name", "Gate")
    assert code == 2
    assert err.startswith(
        f"invalid input: line 1.expected: Case {one_fails['id']!r} expects 'reject', but its "
        "expected_agents (approve, approve, reject) give 'approve' under the exact rule"
    )
    assert not Suite.objects.exists()


def test_suite_export_of_an_unknown_suite_or_owner_exits_2():
    assert run_command("suite", "export", "nothing")[2].strip() == (
        "invalid input: name: No suite without an owner is called 'nothing'."
    )
    code, _, err = run_command("suite", "export", "nothing", "--owner", "nobody")
    assert (code, err.strip()) == (2, "invalid input: owner: No user is called 'nobody'.")
