"""What a plan compares (magi_client/plan.py), against a live MAGI with the installed
client: texts as the server keeps them, names per team, members' budgets in several teams
(issue 49: each of these left a plan that never settled or an apply that failed)."""

import json

import pytest
import yaml

from magi_client import config
from tests.support.live_site import LiveMagi
from tests.support.magi_client import MAKE_STAFF, PAYMENTS_PANEL, run_magi, write_files

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
    site = LiveMagi(tmp_path_factory.mktemp("plan"), llm_server.base_url, users=5).start()
    site.manage("shell", "-v", "0", "-c", MAKE_STAFF.format(username=site.usernames[0]))
    site.token = site.manage("api_token", site.usernames[0], "--name", "ci").strip()
    yield site
    site.stop()


def magi_run(magi: LiveMagi, *args: str):
    return run_magi(*args, env={"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token})


def versions(magi: LiveMagi) -> dict:
    return json.loads(magi.manage("shell", "-v", "0", "-c", VERSIONS).strip().splitlines()[-1])


def test_block_scalars_and_trailing_line_breaks_settle(magi, tmp_path):
    files = {
        "teams/blocks/team.yaml": "members:\n- user02\n",
        "teams/blocks/panels/deploy-gate.yaml": BLOCK_PANEL,
        "teams/blocks/suites/smoke.jsonl": TRAILING_SUITE,
    }
    root = write_files(tmp_path / "blocks", files)
    applied = magi_run(magi, "apply", str(root))
    assert applied.returncode == config.EXIT_OK, applied.stderr
    planned = magi_run(magi, "plan", str(root))
    assert planned.returncode == config.EXIT_OK, planned.stdout
    before = versions(magi)
    again = magi_run(magi, "apply", str(root))
    assert again.stdout == "No changes: the server matches the directory.\n", again.stdout
    assert versions(magi) == before
    # What is inside the text is kept as typed: the line break between the two lines.
    exported = magi_run(magi, "export", str(tmp_path / "out"))
    assert exported.returncode == config.EXIT_OK, exported.stderr
    panel = (tmp_path / "out/teams/blocks/panels/deploy-gate.yaml").read_text()
    criteria = "Approve only deploys planned Monday to Thursday.\nNever on a Friday."
    assert yaml.safe_load(panel)["agents"][2]["criteria"] == criteria
    assert "  criteria: |-\n" in panel, panel  # written as a person writes it
