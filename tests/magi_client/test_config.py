"""`magi plan`, `magi apply` and `magi export` (magi_client/config.py), the client installed
on its own, against a live MAGI: two teams' panels, suites, reviewers and budgets applied,
a criterion changed and planned with the certificate it voids, exported back to the same
files, applied again with nothing to do; a refusal in the middle of an apply changes
nothing; deletions only with --prune."""

import json

import pytest

from magi_client import config
from tests.support.live_site import LiveMagi
from tests.support.magi_client import (
    MAKE_STAFF,
    PAYMENTS_PANEL,
    SNAPSHOT,
    TWO_TEAMS,
    read_files,
    run_magi,
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
    site = LiveMagi(tmp_path_factory.mktemp("config"), llm_server.base_url, users=5).start()
    site.manage("shell", "-v", "0", "-c", MAKE_STAFF.format(username=site.usernames[0]))
    site.token = site.manage("api_token", site.usernames[0], "--name", "ci").strip()
    yield site
    site.stop()


def magi_run(magi: LiveMagi, *args: str):
    return run_magi(*args, env={"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token})


def snapshot(magi: LiveMagi) -> dict:
    return json.loads(magi.manage("shell", "-v", "0", "-c", SNAPSHOT).strip().splitlines()[-1])


def teams_files(root) -> dict[str, str]:
    return {name: text for name, text in read_files(root).items() if name.startswith("teams/")}


def test_a_directory_round_trips_through_the_installed_client(magi, tmp_path):
    root = write_files(tmp_path / "config", TWO_TEAMS)

    planned = magi_run(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_CHANGES, planned.stderr
    assert "+ create team payments" in planned.stdout
    assert "+ create panel support/reply check" in planned.stdout
    assert "Plan: 9 to create, 0 to change, 0 to delete." in planned.stdout, planned.stdout

    applied = magi_run(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    assert applied.stdout.endswith("Applied.\n")
    certificate = int(magi.manage("shell", "-v", "0", "-c", CERTIFY).strip())

    # One criterion changes: the plan names it, and the certificate the change voids.
    changed = (root / PANEL_FILE).read_text().replace(OLD_CRITERIA, NEW_CRITERIA)
    (root / PANEL_FILE).write_text(changed)
    planned = magi_run(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_CHANGES, planned.stderr
    assert planned.stdout.splitlines() == [
        "~ change panel payments/deploy gate",
        f'    agents[2].criteria: "{OLD_CRITERIA}" -> "{NEW_CRITERIA}"',
        f"    voids certificate {certificate}",
        "Plan: 0 to create, 1 to change, 0 to delete.",
    ]
    assert magi.manage("shell", "-v", "0", "-c", VOIDED.format(pk=certificate)).strip() == "False"
    applied = magi_run(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    assert magi.manage("shell", "-v", "0", "-c", VOIDED.format(pk=certificate)).strip() == "True"

    # Exported, the files are the ones applied.
    exported = magi_run(magi, "export", str(tmp_path / "exported"))
    assert exported.returncode == config.EXIT_OK, exported.stderr
    assert teams_files(tmp_path / "exported") == teams_files(root)

    # A second apply, of the directory or of its export, has nothing to do.
    for directory in (root, tmp_path / "exported"):
        again = magi_run(magi, "apply", str(directory))
        assert again.returncode == config.EXIT_OK, again.stderr
        assert again.stdout == "No changes: the server matches the directory.\n"
        planned = magi_run(magi, "plan", str(directory))
        assert planned.returncode == config.EXIT_OK, planned.stdout


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
        done = magi_run(magi, command, str(root))
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
    assert magi_run(magi, "apply", str(root)).returncode == config.EXIT_OK
    (root / "teams/ops/panels/gone.yaml").unlink()

    planned = magi_run(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_OK, planned.stderr
    assert planned.stdout.splitlines() == [
        "  panel ops/gone: not in the directory, left alone (--prune deletes it)",
        "No changes: the server matches the directory.",
    ]
    planned = magi_run(magi, "plan", "--prune", str(root))
    assert planned.returncode == config.EXIT_CHANGES
    assert planned.stdout.splitlines()[0] == "- delete panel ops/gone"

    assert magi_run(magi, "apply", str(root)).returncode == config.EXIT_OK
    assert "left alone" in magi_run(magi, "plan", str(root)).stdout
    assert magi_run(magi, "apply", "--prune", str(root)).returncode == config.EXIT_OK
    assert magi_run(magi, "plan", "--prune", str(root)).stdout == (
        "No changes: the server matches the directory.\n"
    )
