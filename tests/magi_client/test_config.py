"""`magi plan`, `magi apply` and `magi export` (magi_client/config.py), the client installed
on its own, against a live MAGI: two teams' panels, suites, reviewers and budgets applied,
a criterion changed and planned with the certificate it voids, exported back to the same
files, applied again with nothing to do; a refusal in the middle of an apply changes
nothing; deletions only with --prune."""

import json

import pytest

from magi_client import config, directory, plan, server_state
from magi_client.http import Server
from tests.support.live_site import LiveMagi
from tests.support.magi_client import (
    MAKE_STAFF,
    PAYMENTS_PANEL,
    SMOKE_SUITE,
    SNAPSHOT,
    TWO_TEAMS,
    client_site,
    read_files,
    run_as,
    run_magi,
    set_up_site,
    write_files,
)

PANEL_FILE = "teams/payments/panels/deploy-gate.yaml"
OLD_CRITERIA = "Approve only deploys planned Monday to Thursday."
NEW_CRITERIA = "Approve only deploys planned Monday to Wednesday."

CERTIFY = """
from judgements.models import Certificate, Panel, agents_fingerprint
panel = Panel.objects.get(name="deploy gate")
certificate = Certificate.objects.create(
    panel=panel, agents=panel.agents, fingerprint=agents_fingerprint(panel.agents),
    target=0.9, delta=0.1, samples=100, certified=True)
print(certificate.pk)
"""

VOIDED = """
from judgements.models import Certificate
print(Certificate.objects.get(pk={pk}).voided_at is not None)
"""


@pytest.fixture(scope="module")
def magi(llm_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("config")
    yield from client_site(folder, llm_server.base_url, 5, MAKE_STAFF)


def snapshot(magi: LiveMagi) -> dict:
    return json.loads(magi.shell(SNAPSHOT).strip().splitlines()[-1])


def teams_files(root) -> dict[str, str]:
    return {name: text for name, text in read_files(root).items() if name.startswith("teams/")}


def test_a_directory_round_trips_through_the_installed_client(magi, tmp_path):
    root = write_files(tmp_path / "config", TWO_TEAMS)

    planned = run_as(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_CHANGES, planned.stderr
    assert "+ create team payments" in planned.stdout
    assert "+ create panel support/reply check" in planned.stdout
    assert "Plan: 9 to create, 0 to change, 0 to delete." in planned.stdout, planned.stdout

    applied = run_as(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    assert applied.stdout.endswith("Applied.\n")
    certificate = int(magi.shell(CERTIFY).strip())

    # One criterion changes: the plan names it, and the certificate the change voids.
    changed = (root / PANEL_FILE).read_text().replace(OLD_CRITERIA, NEW_CRITERIA)
    (root / PANEL_FILE).write_text(changed)
    planned = run_as(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_CHANGES, planned.stderr
    assert planned.stdout.splitlines() == [
        "~ change panel payments/deploy gate",
        f'    agents[2].criteria: "{OLD_CRITERIA}" -> "{NEW_CRITERIA}"',
        f"    voids certificate {certificate}",
        "Plan: 0 to create, 1 to change, 0 to delete.",
    ]
    assert magi.shell(VOIDED.format(pk=certificate)).strip() == "False"
    applied = run_as(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    assert magi.shell(VOIDED.format(pk=certificate)).strip() == "True"

    # Exported, the files are the ones applied.
    exported = run_as(magi, "export", str(tmp_path / "exported"))
    assert exported.returncode == config.EXIT_OK, exported.stderr
    assert teams_files(tmp_path / "exported") == teams_files(root)

    # A second apply, of the directory or of its export, has nothing to do.
    for folder in (root, tmp_path / "exported"):
        again = run_as(magi, "apply", str(folder))
        assert again.returncode == config.EXIT_OK, again.stderr
        assert again.stdout == "No changes: the server matches the directory.\n"
        planned = run_as(magi, "plan", str(folder))
        assert planned.returncode == config.EXIT_OK, planned.stdout


def test_a_refused_token_exits_2_as_the_docs_table_says(magi, tmp_path):
    """docs/config-as-code.md: a refused token is bad input, 2, for export as for plan
    (issue 49: export exited 1)."""
    root = write_files(tmp_path / "config", TWO_TEAMS)
    env = {"MAGI_URL": magi.url, "MAGI_TOKEN": "magi_not-a-token"}
    for args in (("export", str(tmp_path / "out")), ("plan", str(root))):
        refused = run_magi(*args, env=env)
        assert refused.returncode == config.EXIT_BAD_INPUT, (args, refused.stderr)
        assert "401" in refused.stderr
    assert not (tmp_path / "out").exists()


def test_a_refusal_in_the_middle_of_an_apply_changes_nothing(magi, tmp_path):
    """The first operations would create a team and its panel; a later one names a model
    the deployment does not serve. The server refuses it, and nothing is kept."""
    broken = PAYMENTS_PANEL.replace("name: deploy gate", "name: nightly").replace(
        "model: model-c", "model: no-such-model"
    )
    files = {
        "teams/audit/team.yaml": "members:\n- user02\n",
        "teams/audit/panels/a-first.yaml": PAYMENTS_PANEL.replace("name: deploy gate", "name: a"),
        "teams/audit/panels/nightly.yaml": broken,
        "teams/audit/panels/z-last.yaml": PAYMENTS_PANEL.replace("name: deploy gate", "name: z"),
    }
    root = write_files(tmp_path, files)
    before = snapshot(magi)
    for command in ("plan", "apply"):
        done = run_as(magi, command, str(root))
        assert done.returncode == config.EXIT_BAD_INPUT, (done.stdout, done.stderr)
        assert done.stderr.startswith(
            f"magi {command}: teams/audit/panels/nightly.yaml:11: agents[2].model: "
        ), done.stderr
    assert snapshot(magi) == before


def test_deletes_only_with_prune(magi, tmp_path):
    files = {
        "teams/ops/team.yaml": "members:\n- user05\n",
        "teams/ops/panels/keep.yaml": PAYMENTS_PANEL.replace(
            "name: deploy gate", "name: keep"
        ).replace("- user02", "- user05"),
        "teams/ops/panels/gone.yaml": PAYMENTS_PANEL.replace(
            "name: deploy gate", "name: gone"
        ).replace("- user02", "- user05"),
    }
    root = write_files(tmp_path, files)
    assert run_as(magi, "apply", str(root)).returncode == config.EXIT_OK
    (root / "teams/ops/panels/gone.yaml").unlink()

    planned = run_as(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_OK, planned.stderr
    assert planned.stdout.splitlines() == [
        "  panel ops/gone: not in the directory, left alone (--prune deletes it)",
        "No changes: the server matches the directory.",
    ]
    planned = run_as(magi, "plan", "--prune", str(root))
    assert planned.returncode == config.EXIT_CHANGES
    assert planned.stdout.splitlines()[0] == "- delete panel ops/gone"
    as_json = json.loads(run_as(magi, "plan", "--prune", "--json", str(root)).stdout)
    assert as_json == {
        "changes": [{"action": "delete", "what": "panel ops/gone", "fields": [], "voids": []}],
        "left_alone": [],
    }

    assert run_as(magi, "apply", str(root)).returncode == config.EXIT_OK
    assert "left alone" in run_as(magi, "plan", str(root)).stdout
    assert run_as(magi, "apply", "--prune", str(root)).returncode == config.EXIT_OK
    assert run_as(magi, "plan", "--prune", str(root)).stdout == (
        "No changes: the server matches the directory.\n"
    )


def test_a_members_token_sees_and_changes_only_its_teams(magi, tmp_path):
    web = {
        "teams/web/team.yaml": "members:\n- user03\nbudgets:\n- period: day\n  limit: 3.0\n"
        "  unit: usd\n",
        "teams/web/panels/web.yaml": PAYMENTS_PANEL.replace(
            "name: deploy gate", "name: web"
        ).replace("- user02", "- user03"),
    }
    assert run_as(magi, "apply", str(write_files(tmp_path / "staff", web))).returncode == 0
    everything = run_as(magi, "export", str(tmp_path / "all"))
    assert everything.returncode == config.EXIT_OK, everything.stderr
    theirs = {
        folder.name
        for folder in (tmp_path / "all" / "teams").iterdir()
        if "- user03\n" in (folder / "team.yaml").read_text().split("budgets:")[0]
    }
    assert "web" in theirs and "elsewhere" not in theirs

    member = {"MAGI_URL": magi.url, "MAGI_TOKEN": magi.command("api_token", "user03").strip()}
    root = tmp_path / "member"
    exported = run_magi("export", str(root), env=member)
    assert exported.returncode == config.EXIT_OK, exported.stderr
    assert {folder.name for folder in (root / "teams").iterdir()} == theirs
    assert teams_files(root) == {
        name: text
        for name, text in teams_files(tmp_path / "all").items()
        if name.split("/")[1] in theirs
    }
    assert run_magi("plan", str(root), env=member).returncode == config.EXIT_OK

    # Its team's panel: the member changes it.
    panel = root / "teams/web/panels/web.yaml"
    panel.write_text(panel.read_text().replace(OLD_CRITERIA, NEW_CRITERIA))
    applied = run_magi("apply", str(root), env=member)
    assert applied.returncode == config.EXIT_OK, applied.stderr
    # Its budget: only staff change one; refused, named in its file, and nothing changes.
    team = root / "teams/web/team.yaml"
    team.write_text(team.read_text().replace("limit: 3.0", "limit: 30.0"))
    before = snapshot(magi)
    refused = run_magi("apply", str(root), env=member)
    assert refused.returncode == config.EXIT_BAD_INPUT, refused.stdout
    assert refused.stderr.startswith("magi apply: teams/web/team.yaml:4: budgets[0]: "), (
        refused.stderr
    )
    assert snapshot(magi) == before


def test_an_export_applied_to_a_fresh_server_reproduces_the_configuration(
    magi, llm_server, tmp_path
):
    assert run_as(magi, "apply", str(write_files(tmp_path / "given", TWO_TEAMS))).returncode == 0
    assert run_as(magi, "export", str(tmp_path / "first")).returncode == config.EXIT_OK
    fresh = set_up_site(tmp_path / "fresh", llm_server.base_url, 5, MAKE_STAFF)
    try:
        applied = run_as(fresh, "apply", str(tmp_path / "first"))
        assert applied.returncode == config.EXIT_OK, applied.stderr
        assert run_as(fresh, "export", str(tmp_path / "second")).returncode == config.EXIT_OK
    finally:
        fresh.stop()
    assert read_files(tmp_path / "second") == read_files(tmp_path / "first")
    assert (
        teams_files(tmp_path / "first")["teams/payments/team.yaml"]
        == TWO_TEAMS["teams/payments/team.yaml"]
    )


def test_a_plan_gone_stale_is_refused_with_412_and_changes_nothing(magi, tmp_path):
    """Someone changes the panel between the read and the apply: the apply's If-Match no
    longer holds, nothing is overwritten, and the command says to run it again."""
    assert run_as(magi, "apply", str(write_files(tmp_path / "a", TWO_TEAMS))).returncode == 0
    mine = dict(TWO_TEAMS)
    mine[PANEL_FILE] = PAYMENTS_PANEL.replace(OLD_CRITERIA, NEW_CRITERIA)
    read = directory.read(write_files(tmp_path / "mine", mine))
    server = Server(magi.url, magi.token, timeout=60)
    stale = plan.make(read.state, server_state.read(server), prune=False)
    theirs = dict(TWO_TEAMS)
    theirs[PANEL_FILE] = PAYMENTS_PANEL.replace(OLD_CRITERIA, "Approve only on Mondays.")
    assert run_as(magi, "apply", str(write_files(tmp_path / "theirs", theirs))).returncode == 0
    before = snapshot(magi)
    with pytest.raises(config.Failure) as failed:
        config.run_batch(server, stale, read, dry_run=False)
    assert failed.value.status == config.EXIT_ERROR
    (line,) = failed.value.lines
    assert line.startswith(f"{PANEL_FILE}:1: ") and line.endswith("(412)"), line
    assert snapshot(magi) == before


def test_staff_apply_the_shared_examples_as_examples(magi, tmp_path):
    """A directory's top-level panels/ and suites/ are MAGI's examples: no owner, no
    team, seen by everyone (as judgements/examples/ is laid out)."""
    shared = PAYMENTS_PANEL.replace("name: deploy gate", "name: shared gate").replace(
        "reviewers:\n- user02\n", "reviewers: []\n"
    )
    files = {"panels/shared-gate.yaml": shared, "suites/shared-smoke.jsonl": SMOKE_SUITE}
    root = write_files(tmp_path / "shared", files)
    applied = run_as(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    assert "+ create panel shared gate" in applied.stdout
    owners = magi.shell(
        "from judgements.models import Panel, Suite;"
        "print(list(Panel.objects.filter(name='shared gate').values_list('owner', 'team')),"
        "list(Suite.objects.filter(name='shared-smoke').values_list('owner', 'team')))",
    )
    assert owners.strip() == "[(None, None)] [(None, None)]"
    assert run_as(magi, "plan", str(root)).returncode == config.EXIT_OK
    exported = run_as(magi, "export", str(tmp_path / "exported"))
    assert exported.returncode == config.EXIT_OK, exported.stderr
    assert read_files(tmp_path / "exported")["panels/shared-gate.yaml"] == shared
    assert read_files(tmp_path / "exported")["suites/shared-smoke.jsonl"] == SMOKE_SUITE


VARIANTS_CERTIFY = """
from judgements.panels import saved_panels
from judgements.models import Certificate, Panel
from judgements.panels import variant_setting
panel = Panel.objects.get(name="lab a")
certificate = Certificate.objects.create(
    panel=panel, agents=panel.agents, fingerprint=variant_setting.fingerprint_of(panel),
    target=0.9, delta=0.1, samples=100, certified=True)
print(certificate.pk)
"""


def lab_panel(name: str, variants: str) -> str:
    """PAYMENTS_PANEL as the lab team's `name`, with `variants` (YAML lines) after
    run_checks."""
    text = PAYMENTS_PANEL.replace("name: deploy gate", f"name: {name}")
    return text.replace("run_checks: null\n", "run_checks: null\n" + variants)


def test_a_panels_prompt_variants_round_trip_byte_for_byte(magi, tmp_path):
    two = "prompt_variants:\n- quote\n- decision_first\n"
    files = {
        "teams/lab/team.yaml": "members:\n- user02\nbudgets: []\n",
        "teams/lab/panels/lab-a.yaml": lab_panel("lab a", two),
        "teams/lab/panels/lab-b.yaml": lab_panel("lab b", "prompt_variants: []\n"),
        "teams/lab/panels/lab-c.yaml": lab_panel("lab c", ""),
    }  # fmt: skip
    root = write_files(tmp_path / "config", files)
    applied = run_as(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    exported = run_as(magi, "export", str(tmp_path / "exported"))
    assert exported.returncode == config.EXIT_OK, exported.stderr
    written = {k: v for k, v in teams_files(tmp_path / "exported").items() if "/lab/" in k}
    assert written == files
    planned = run_as(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_OK, planned.stdout

    # Only the variants change: the plan says so, with the certificate it voids.
    certificate = int(magi.shell(VARIANTS_CERTIFY).strip())
    (root / "teams/lab/panels/lab-a.yaml").write_text(
        lab_panel("lab a", "prompt_variants:\n- quote\n")
    )
    planned = run_as(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_CHANGES, planned.stderr
    lines = planned.stdout.splitlines()
    assert lines[0] == "~ change panel lab/lab a" and lines[1].startswith("    prompt_variants: ")
    assert f"    voids certificate {certificate}" in lines
    assert run_as(magi, "apply", str(root)).returncode == config.EXIT_OK
    assert magi.shell(VOIDED.format(pk=certificate)).strip() == "True"


@pytest.mark.parametrize(
    ("variants", "expected"),
    [
        (
            "prompt_variants:\n- named_peers\n- decisions_only\n",
            "teams/lab2/panels/bad.yaml:15: prompt_variants: named_peers and decisions_only",
        ),
        (
            "prompt_variants:\n- plain_question\n- user_words\n",
            "teams/lab2/panels/bad.yaml:15: prompt_variants: plain_question and user_words both"
            " say how to ask round 1",
        ),
        (
            "prompt_variants:\n- quote\n- reason_last\n",
            "teams/lab2/panels/bad.yaml:17: prompt_variants[1]: Must be one of ",
        ),
    ],
)
def test_bad_prompt_variants_are_refused_with_file_and_line(magi, tmp_path, variants, expected):
    files = {
        "teams/lab2/team.yaml": "members:\n- user02\n",
        "teams/lab2/panels/bad.yaml": lab_panel("bad", variants),
    }
    root = write_files(tmp_path, files)
    before = snapshot(magi)
    planned = run_as(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_BAD_INPUT, (planned.stdout, planned.stderr)
    assert planned.stderr.startswith(f"magi plan: {expected}"), planned.stderr
    assert snapshot(magi) == before


# --- a team's Slack connection in team.yaml (docs/slack.md) ------------------------------

SLACK_TEAM = "teams/deploys/team.yaml"
BOT_TOKEN = "xoxb-1234-deploys-bot"
SIGNING_SECRET = "deployssigningsecret42"
SLACK_YAML = """\
members:
- user02
slack:
  channel: {channel}
  bot_token_env: DEPLOYS_SLACK_BOT
  signing_secret_env: DEPLOYS_SLACK_SIGNING
"""
SLACK_ENV = {"DEPLOYS_SLACK_BOT": BOT_TOKEN, "DEPLOYS_SLACK_SIGNING": SIGNING_SECRET}
CONNECTION = """
from judgements.models import SlackConnection
found = SlackConnection.objects.filter(team__name="deploys").first()
print(None if found is None else [found.channel, found.bot_token, found.signing_secret])
"""


def run_with(magi: LiveMagi, *args: str, **env: str):
    return run_magi(*args, env={"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token, **env})


def connection(magi: LiveMagi) -> str:
    return magi.shell(CONNECTION).strip()


def test_a_teams_slack_connection_is_applied_from_the_environment_and_exported_without_secrets(
    magi, tmp_path
):
    root = write_files(tmp_path / "config", {SLACK_TEAM: SLACK_YAML.format(channel="C0123ABCD")})

    # A secret's variable unset: refused before anything is sent, naming it.
    before = snapshot(magi)
    for command in ("plan", "apply"):
        done = run_with(magi, command, str(root), DEPLOYS_SLACK_BOT=BOT_TOKEN)
        assert done.returncode == config.EXIT_BAD_INPUT, (done.stdout, done.stderr)
        assert done.stderr == (
            f"magi {command}: {SLACK_TEAM}:6: slack.signing_secret_env: The environment "
            "variable DEPLOYS_SLACK_SIGNING is not set (or is empty).\n"
        )
    assert snapshot(magi) == before and connection(magi) == "None"

    planned = run_with(magi, "plan", str(root), **SLACK_ENV)
    assert planned.returncode == config.EXIT_CHANGES, planned.stderr
    assert "slack" in planned.stdout and BOT_TOKEN not in planned.stdout
    applied = run_with(magi, "apply", str(root), **SLACK_ENV)
    assert applied.returncode == config.EXIT_OK, applied.stderr
    assert connection(magi) == str(["C0123ABCD", BOT_TOKEN, SIGNING_SECRET])
    again = run_with(magi, "plan", str(root), **SLACK_ENV)
    assert again.returncode == config.EXIT_OK, again.stdout

    # Exported: where it posts, never a secret nor a variable; applied, it keeps them.
    exported = run_as(magi, "export", str(tmp_path / "exported"))
    assert exported.returncode == config.EXIT_OK, exported.stderr
    files = read_files(tmp_path / "exported")
    assert files[SLACK_TEAM] == "members:\n- user02\nbudgets: []\nslack:\n  channel: C0123ABCD\n"
    assert not [name for name, text in files.items() if BOT_TOKEN in text or SIGNING_SECRET in text]
    kept = run_as(magi, "apply", str(tmp_path / "exported"))
    assert kept.returncode == config.EXIT_OK, kept.stderr
    assert connection(magi) == str(["C0123ABCD", BOT_TOKEN, SIGNING_SECRET])

    # A new token in the variable is a change; a bad channel is the server's refusal,
    # named in the file, and changes nothing.
    rotated = run_with(magi, "plan", str(root), **{**SLACK_ENV, "DEPLOYS_SLACK_BOT": "xoxb-9-new"})
    assert rotated.returncode == config.EXIT_CHANGES and "slack.bot_token" in rotated.stdout
    (root / SLACK_TEAM).write_text(SLACK_YAML.format(channel='"#deploys"'))
    before = snapshot(magi)
    refused = run_with(magi, "apply", str(root), **SLACK_ENV)
    assert refused.returncode == config.EXIT_BAD_INPUT, (refused.stdout, refused.stderr)
    assert refused.stderr.startswith(f"magi apply: {SLACK_TEAM}:4: slack.channel: Must be a "), (
        refused.stderr
    )
    assert snapshot(magi) == before
    assert connection(magi) == str(["C0123ABCD", BOT_TOKEN, SIGNING_SECRET])
