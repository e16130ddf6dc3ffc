"""What a plan compares (magi_client/plan.py), against a live MAGI with the installed
client: texts as the server keeps them, names per team, members' budgets in several teams
(issue 49: each of these left a plan that never settled or an apply that failed)."""

import json

import pytest
import yaml

from magi_client import config
from tests.support.live_site import LiveMagi
from tests.support.magi_client import (
    MAKE_STAFF,
    PAYMENTS_PANEL,
    client_site,
    read_files,
    run_as,
    set_up_site,
    write_files,
)

# Criteria and a description as YAML block scalars: `|` keeps the final line break, `>`
# folds the lines and keeps it too; the server keeps neither trailing line break.
BLOCK_PANEL = PAYMENTS_PANEL.replace(
    "description: Deploys of the payments services.",
    "description: >\n  Deploys of the payments\n  services.\n",
).replace(
    "  criteria: Approve only deploys planned Monday to Thursday.",
    "  criteria: |\n    Approve only deploys planned Monday to Thursday.\n    Never on a Friday.\n",
)
TRAILING_SUITE = (
    '{"id": "a-1", "content": "Tests passed, reviewed, Tuesday.\\n", "expected": "approve"}\n'
    '{"id": "a-2", "content": "Friday night.\\n\\n", "expected": "reject", "tags": ["late "]}\n'
)

VERSIONS = """
import json
from judgements.models import Budget, Panel, Suite, Team
print(json.dumps({m.__name__: sorted(m.objects.values_list("pk", "version"))
                  for m in (Budget, Panel, Suite, Team)}))
"""


@pytest.fixture(scope="module")
def magi(llm_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("plan")
    yield from client_site(folder, llm_server.base_url, 5, MAKE_STAFF)


def versions(magi: LiveMagi) -> dict:
    return json.loads(magi.shell(VERSIONS).strip().splitlines()[-1])


def test_block_scalars_and_trailing_line_breaks_settle(magi, tmp_path):
    files = {
        "teams/blocks/team.yaml": "members:\n- user02\n",
        "teams/blocks/panels/deploy-gate.yaml": BLOCK_PANEL,
        "teams/blocks/suites/smoke.jsonl": TRAILING_SUITE,
    }
    root = write_files(tmp_path / "blocks", files)
    applied = run_as(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    planned = run_as(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_OK, planned.stdout
    before = versions(magi)
    again = run_as(magi, "apply", str(root))
    assert again.stdout == "No changes: the server matches the directory.\n", again.stdout
    assert versions(magi) == before
    # What is inside the text is kept as typed: the line break between the two lines.
    exported = run_as(magi, "export", str(tmp_path / "out"))
    assert exported.returncode == config.EXIT_OK, exported.stderr
    panel = (tmp_path / "out/teams/blocks/panels/deploy-gate.yaml").read_text()
    criteria = "Approve only deploys planned Monday to Thursday.\nNever on a Friday."
    assert yaml.safe_load(panel)["agents"][2]["criteria"] == criteria
    assert "  criteria: |-\n" in panel, panel  # written as a person writes it


def gate_of(team: str) -> str:
    return PAYMENTS_PANEL.replace("name: deploy gate", "name: Deploy gate").replace(
        "- user02", "- user03"
    )


def team_file(members: list[str], budgets: str) -> str:
    return "members:\n" + "".join(f"- {m}\n" for m in members) + "budgets:\n" + budgets


ALPHA_BUDGETS = (
    "- period: month\n  limit: 200000\n  unit: tokens\n  panel: Deploy gate\n"
    "- period: day\n  limit: 1000\n  unit: tokens\n  user: user03\n"
)
BETA_BUDGETS = "- period: day\n  limit: 7.5\n  unit: usd\n  panel: Deploy gate\n"

BUDGET_PANELS = """
from judgements.models import Budget
print(sorted((str(b.limit_usd or b.limit_tokens), b.panel.team.name)
             for b in Budget.objects.filter(panel__name="Deploy gate")))
"""


def test_two_teams_share_a_panel_name_and_a_member_with_a_budget(magi, tmp_path):
    """Issue 49: one staff apply gives two teams each a "Deploy gate" (each budget on its
    own team's), and a member of both teams' budget is exported once and never pruned."""
    files = {
        "teams/alpha/team.yaml": team_file(["user03", "user04"], ALPHA_BUDGETS),
        "teams/alpha/panels/deploy-gate.yaml": gate_of("alpha"),
        "teams/beta/team.yaml": team_file(["user03", "user05"], BETA_BUDGETS),
        "teams/beta/panels/deploy-gate.yaml": gate_of("beta"),
    }
    root = write_files(tmp_path / "given", files)
    applied = run_as(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    budgets = magi.shell(BUDGET_PANELS).strip()
    assert budgets == "[('200000', 'alpha'), ('7.5000', 'beta')]"
    for args in (("plan",), ("plan", "--prune")):
        planned = run_as(magi, *args, str(root))
        assert planned.returncode == config.EXIT_OK, planned.stdout
        assert "left alone" not in planned.stdout
    exported = run_as(magi, "export", str(tmp_path / "out"))
    assert exported.returncode == config.EXIT_OK, exported.stderr
    out = tmp_path / "out/teams"
    assert (out / "alpha/team.yaml").read_text() == files["teams/alpha/team.yaml"]
    assert (out / "beta/team.yaml").read_text() == files["teams/beta/team.yaml"]
    before = versions(magi)
    pruned = run_as(magi, "apply", "--prune", str(tmp_path / "out"))
    assert pruned.stdout == "No changes: the server matches the directory.\n", pruned.stdout
    assert versions(magi) == before


def test_a_members_budget_is_written_in_one_team_file(magi, tmp_path):
    """The member's budget is kept where the directory lists it, even in a later team;
    listed in two team files it is refused, both files named."""
    moved = {
        "teams/gamma/team.yaml": "members:\n- user04\nbudgets: []\n",
        "teams/delta/team.yaml": team_file(
            ["user04"], "- period: month\n  limit: 50\n  unit: usd\n  user: user04\n"
        ),
    }
    root = write_files(tmp_path / "moved", moved)
    assert run_as(magi, "apply", str(root)).returncode == config.EXIT_OK
    for args in (("plan",), ("plan", "--prune")):
        planned = run_as(magi, *args, str(root))
        assert planned.returncode == config.EXIT_OK, planned.stdout
    twice = dict(moved)
    twice["teams/gamma/team.yaml"] = moved["teams/delta/team.yaml"]
    refused = run_as(magi, "plan", str(write_files(tmp_path / "twice", twice)))
    assert refused.returncode == config.EXIT_BAD_INPUT
    assert refused.stderr == (
        "magi plan: teams/gamma/team.yaml:4: budgets[0]: teams/delta/team.yaml already has "
        "this budget of 'user04''s: a member's budget is theirs in every team, written once.\n"
    )


def big_suite(name: str, cases: int = 10) -> str:
    line = {"content": f"{name}: " + "a deploy of the payments service, tested. " * 16}
    return "".join(
        json.dumps({"id": f"{name}-{n}", **line, "expected": "approve"}) + "\n"
        for n in range(cases)
    )


def test_a_directory_larger_than_one_request_body_applies_all_or_nothing(llm_server, tmp_path):
    """Issue 49: suites each accepted alone, together over MAGI_MAX_BODY_BYTES, apply (as
    parts of one transaction); one suite alone over it is named before anything is sent."""
    small = small_magi(llm_server, tmp_path / "small")
    try:
        files = {"teams/big/team.yaml": "members:\n- user02\n"}
        files |= {f"teams/big/suites/s{n}.jsonl": big_suite(f"s{n}") for n in range(5)}
        root = write_files(tmp_path / "big", files)
        assert sum(len(text) for text in files.values()) > 3 * 10_000
        applied = run_as(small, "apply", str(root))
        assert applied.returncode == config.EXIT_OK, applied.stderr
        assert applied.stdout.endswith("Plan: 6 to create, 0 to change, 0 to delete.\nApplied.\n")
        exported = run_as(small, "export", str(tmp_path / "out"))
        assert exported.returncode == config.EXIT_OK, exported.stderr
        again = run_as(small, "apply", str(tmp_path / "out"))
        assert again.stdout == "No changes: the server matches the directory.\n", again.stderr
        before = versions(small)
        # One more suite, too large for any request; and a bad one among parts: nothing stays.
        (root / "teams/big/suites/huge.jsonl").write_text(big_suite("huge", 40))
        refused = run_as(small, "apply", str(root))
        assert refused.returncode == config.EXIT_BAD_INPUT
        assert refused.stderr.startswith(
            "magi apply: teams/big/suites/huge.jsonl:1: Too large for one request"
        ), refused.stderr
        (root / "teams/big/suites/huge.jsonl").unlink()
        for n in range(5):
            (root / f"teams/big/suites/t{n}.jsonl").write_text(big_suite(f"t{n}"))
        # The server refuses the last operation (a model it does not serve), after the
        # parts holding the new suites were sent: none of them stays.
        broken = gate_of("zz").replace("model: model-c", "model: no-such-model")
        write_files(root, {"teams/zz/team.yaml": "members:\n- user03\n"})
        write_files(root, {"teams/zz/panels/z.yaml": broken})
        refused = run_as(small, "apply", str(root))
        assert refused.returncode == config.EXIT_BAD_INPUT, refused.stderr
        assert refused.stderr.startswith(
            "magi apply: teams/zz/panels/z.yaml:11: agents[2].model: "
        ), refused.stderr
        assert versions(small) == before
    finally:
        small.stop()


def small_magi(llm_server, where) -> LiveMagi:
    """A MAGI whose request bodies are small (10 kB): a directory of a few suites needs
    several requests."""
    return set_up_site(where, llm_server.base_url, 5, MAKE_STAFF, MAGI_MAX_BODY_BYTES="10000")


def test_everything_of_issue_49_round_trips_to_a_fresh_server_byte_for_byte(llm_server, tmp_path):
    """Teams sharing panel names, a member in two teams with a budget, block-scalar
    criteria, content ending in line breaks, a name with a zero-width space and suites
    larger than one request body: applied, exported, applied to a fresh server, exported
    again byte for byte, and a second apply has nothing to do."""
    zero_width = gate_of("beta").replace("name: Deploy gate", "name: Night\u200bly gate")
    files = {
        "teams/alpha/team.yaml": team_file(["user03", "user04"], ALPHA_BUDGETS),
        "teams/alpha/panels/deploy-gate.yaml": BLOCK_PANEL.replace("user02", "user03"),
        "teams/alpha/suites/smoke.jsonl": TRAILING_SUITE,
        "teams/beta/team.yaml": team_file(["user03", "user05"], BETA_BUDGETS),
        "teams/beta/panels/deploy-gate.yaml": gate_of("beta"),
        "teams/beta/panels/nightly.yaml": zero_width,
        **{f"teams/beta/suites/big-{n}.jsonl": big_suite(f"big-{n}") for n in range(4)},
        "teams/beta/suites/smoke.jsonl": TRAILING_SUITE,
    }
    root = write_files(tmp_path / "given", files)
    first, second = tmp_path / "first", tmp_path / "second"
    source = small_magi(llm_server, tmp_path / "source")
    try:
        applied = run_as(source, "apply", str(root))
        assert applied.returncode == config.EXIT_OK, applied.stderr
        assert run_as(source, "plan", "--prune", str(root)).returncode == config.EXIT_OK
        assert run_as(source, "export", str(first)).returncode == config.EXIT_OK
    finally:
        source.stop()
    fresh = small_magi(llm_server, tmp_path / "fresh")
    try:
        applied = run_as(fresh, "apply", str(first))
        assert applied.returncode == config.EXIT_OK, applied.stderr
        assert run_as(fresh, "export", str(second)).returncode == config.EXIT_OK
        before = versions(fresh)
        again = run_as(fresh, "apply", "--prune", str(first))
        assert again.stdout == "No changes: the server matches the directory.\n", again.stdout
        assert versions(fresh) == before
    finally:
        fresh.stop()
    assert read_files(second) == read_files(first)
    exported = read_files(first)
    assert len([name for name in exported if "/panels/" in name]) == 3
    assert exported["teams/beta/team.yaml"] == files["teams/beta/team.yaml"]
    assert yaml.safe_load(exported["teams/alpha/panels/deploy-gate.yaml"])["agents"][2][
        "criteria"
    ] == ("Approve only deploys planned Monday to Thursday.\nNever on a Friday.")


def test_a_panel_escalating_to_a_later_one_applies_settles_and_exports(magi, tmp_path):
    # "a first" escalates to "z strong", which the batch must create before it.
    first = PAYMENTS_PANEL.replace("name: deploy gate", "name: a first").replace(
        "- user02", "- user03"
    )
    strong = first.replace("name: a first", "name: z strong")
    files = {
        "teams/ladder/team.yaml": "members:\n- user03\n",
        "teams/ladder/panels/a-first.yaml": first + "escalate_to: z strong\n",
        "teams/ladder/panels/z-strong.yaml": strong,
    }
    root = write_files(tmp_path / "ladder", files)
    applied = run_as(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    again = run_as(magi, "apply", str(root))
    assert again.stdout == "No changes: the server matches the directory.\n", again.stdout
    exported = run_as(magi, "export", str(tmp_path / "out"))
    assert exported.returncode == config.EXIT_OK, exported.stderr
    written = yaml.safe_load((tmp_path / "out/teams/ladder/panels/a-first.yaml").read_text())
    assert written["escalate_to"] == "z strong"
    assert "escalate_to" not in (tmp_path / "out/teams/ladder/panels/z-strong.yaml").read_text()
