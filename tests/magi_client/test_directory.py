"""A configuration directory with one bad file (magi_client/directory.py): `magi plan` and
`magi apply`, the installed client against a live MAGI, exit 2 naming the file, the line
and the field, and the server is left exactly as it was, although every other file of
the directory is good and would change it."""

import json

import pytest

from magi_client import config
from tests.support.live_site import LiveMagi
from tests.support.magi_client import (
    MAKE_STAFF,
    PAYMENTS_PANEL,
    PAYMENTS_TEAM,
    SNAPSHOT,
    TWO_TEAMS,
    run_magi,
    set_up_site,
    write_files,
)

PANEL_FILE = "teams/payments/panels/deploy-gate.yaml"
TEAM_FILE = "teams/payments/team.yaml"
TWO_AGENTS = PAYMENTS_PANEL.replace(
    "- name: Casper\n  model: model-c\n  criteria: Approve only deploys planned Monday to "
    "Thursday.\n",
    "",
)

# (what is wrong, the files that replace the good ones, what stderr must say)
BAD_FILES = [
    (
        "an unknown field",
        {PANEL_FILE: PAYMENTS_PANEL + "colour: red\n"},
        f"{PANEL_FILE}:20: colour: Unknown field",
    ),
    (
        "a wrong type",
        {PANEL_FILE: PAYMENTS_PANEL.replace("four_eyes: true", "four_eyes: sometimes")},
        f"{PANEL_FILE}:18: four_eyes: Must be boolean, not string.",
    ),
    (
        "a panel of two agents",
        {PANEL_FILE: TWO_AGENTS},
        f"{PANEL_FILE}:3: agents: Must hold exactly 3 items, not 2.",
    ),
    (
        "a reviewer outside the team",
        {PANEL_FILE: PAYMENTS_PANEL.replace("- user02", "- user04")},
        f"{PANEL_FILE}:16: reviewers[0]: 'user04' is not a member of the team",
    ),
    (
        "a budget in an unknown unit",
        {TEAM_FILE: PAYMENTS_TEAM.replace("unit: usd", "unit: eur")},
        f'{TEAM_FILE}:7: budgets[0].unit: Must be one of "usd", "tokens", not "eur".',
    ),
    (
        "YAML that does not parse",
        {PANEL_FILE: PAYMENTS_PANEL.replace("description: Deploys", "description: [Deploys")},
        f"{PANEL_FILE}:3: Not valid YAML:",
    ),
    (
        "a duplicate name",
        {
            "teams/payments/panels/zz-copy.yaml": PAYMENTS_PANEL.replace(
                "name: deploy gate", "name: Deploy  GATE"
            )
        },
        "teams/payments/panels/zz-copy.yaml:1: name: teams/payments/panels/deploy-gate.yaml "
        "already has a panel called 'Deploy  GATE'.",
    ),
    (
        "a key given twice",
        {PANEL_FILE: PAYMENTS_PANEL + "four_eyes: false\n"},
        f"{PANEL_FILE}:20: four_eyes: Given twice.",
    ),
    (
        "a suite's bad line",
        {"teams/support/suites/replies.jsonl": '{"id": "a", "content": "x", "expected": "ok"}\n'},
        'teams/support/suites/replies.jsonl:1: expected: Must be one of "approve", "reject"',
    ),
    (
        "a panel escalating to itself",
        {PANEL_FILE: PAYMENTS_PANEL + "escalate_to: Deploy Gate\n"},
        f"{PANEL_FILE}:20: escalate_to: A panel cannot escalate to itself.",
    ),
    (
        "an escalation that comes back",
        {
            PANEL_FILE: PAYMENTS_PANEL + "escalate_to: second gate\n",
            "teams/payments/panels/second-gate.yaml": PAYMENTS_PANEL.replace(
                "name: deploy gate", "name: second gate"
            )
            + "escalate_to: deploy gate\n",
        },
        f"{PANEL_FILE}:20: escalate_to: The escalation comes back to 'deploy gate': a cycle.",
    ),
    (
        # The server's refusal, told against the file and line it came from.
        "an escalation to another team's panel",
        {PANEL_FILE: PAYMENTS_PANEL + "escalate_to: reply check\n"},
        f"{PANEL_FILE}:20: escalate_to: ",
    ),
    (
        "a suite's label the exact rule cannot give",
        {
            "teams/support/suites/replies.jsonl": json.dumps(
                {
                    "id": "one-fails",
                    "content": "x",
                    "expected": "reject",
                    "expected_agents": ["approve", "reject", "approve"],
                }
            )
            + "\n"
        },
        "teams/support/suites/replies.jsonl:1: expected: Case 'one-fails' expects 'reject', "
        "but its expected_agents (approve, reject, approve) give 'approve' under the exact "
        "rule: a case is approved when at least 2 of its 3 agents approve.",
    ),
    (
        "a budget of a panel that is not there",
        {TEAM_FILE: PAYMENTS_TEAM.replace("panel: deploy gate", "panel: nightly")},
        f"{TEAM_FILE}:11: budgets[1].panel: The team has no panel called 'nightly'",
    ),
]


@pytest.fixture(scope="module")
def magi(llm_server, tmp_path_factory):
    site = set_up_site(tmp_path_factory.mktemp("config"), llm_server.base_url, 5, MAKE_STAFF)
    site.before = snapshot(site)  # type: ignore[attr-defined]
    yield site
    site.stop()


def snapshot(magi: LiveMagi) -> dict:
    return json.loads(magi.shell(SNAPSHOT).strip().splitlines()[-1])


@pytest.mark.parametrize(("wrong", "files", "said"), BAD_FILES, ids=[case[0] for case in BAD_FILES])
def test_a_bad_file_exits_2_naming_file_line_and_field(magi, tmp_path, wrong, files, said):
    # Every other file is good and would create teams, panels, suites and budgets.
    root = write_files(tmp_path, TWO_TEAMS | files)
    env = {"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token}
    for command in ("plan", "apply"):
        done = run_magi(command, str(root), env=env)
        assert done.returncode == config.EXIT_BAD_INPUT, (command, done.stdout, done.stderr)
        # The problem alone, not others it would cause.
        assert done.stderr == f"magi {command}: {said}" or done.stderr.startswith(
            f"magi {command}: {said}"
        ), done.stderr
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stdout == ""
    assert snapshot(magi) == magi.before
