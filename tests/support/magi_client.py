"""The `magi` command of the client distribution (clients/magi-client), installed on its
own in a virtualenv beside the test one (`make setup-test`, the Makefile's
.installed-client): what a CI job installs, with no Django in reach."""

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.support.live_site import LiveMagi

# The test virtualenv's own directory holds the client's (Makefile: CLIENT_VENV).
CLIENT_VENV = Path(sys.executable).parent.parent / "magi-client"
INSTALLED_MAGI = CLIENT_VENV / "bin" / "magi"


def run_magi(
    *args: str, env: dict[str, str], stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The installed client's `magi ARGS`, with only `env` (MAGI_URL, MAGI_TOKEN)."""
    return subprocess.run(
        [str(INSTALLED_MAGI), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={"PATH": "", **env},
        cwd=cwd,
        timeout=120,
    )


# Three panels on a live MAGI for the gate's tests: one to judge with, one that holds a
# contested verdict for a person, one whose model always fails.
CREATE_GATE_PANELS = """
from django.contrib.auth import get_user_model
from judgements.models import Panel
from judgements.configuration import saving
owner = get_user_model().objects.get(username={username!r})
names = (("Melchior", "model-a"), ("Balthasar", "model-b"), ("Casper", "model-c"))
agents = [{{"name": name, "model": model, "criteria": name + " approves only safe deploys."}}
          for name, model in names]
saving.save_panel(owner=owner, name="deploy", agents=agents)
held = saving.save_panel(owner=owner, name="deploy-held", agents=agents)
Panel.objects.filter(pk=held.pk).update(hold_contested=True)
broken = [dict(agent, model="model-d") for agent in agents]
saving.save_panel(owner=owner, name="broken", agents=broken)
# An escalation (docs/escalation.md): deploy-escalating's unkept verdicts go to
# deploy-strong, whose agents all run on model-a (unanimous where the others split).
strong = saving.save_panel(
    owner=owner, name="deploy-strong", agents=[dict(a, model="model-a") for a in agents]
)
first = saving.save_panel(owner=owner, name="deploy-escalating", agents=agents)
Panel.objects.filter(pk=first.pk).update(escalate_to=strong)
"""


def script_votes(fake_llm):
    """Approve content marked `ship-it`, reject `no-go`, split 2-1 on `maybe`; model-d
    fails (a 400 is not retried: the first agent's call fails the judgement)."""
    for model, on_maybe in (("model-a", "AAA"), ("model-b", "AAA"), ("model-c", "RRR")):
        fake_llm.script(model, votes_when={"ship-it": "AAA", "no-go": "RRR", "maybe": on_maybe})
    fake_llm.script("model-d", failures={1: ["400"] * 10})
    return fake_llm


# --- a configuration directory of two teams (docs/config-as-code.md) --------------------

# Staff, with a token; four more users for the teams (LiveMagi(users=5)).
MAKE_STAFF = """
from django.contrib.auth import get_user_model
get_user_model().objects.filter(username={username!r}).update(is_staff=True)
"""

PAYMENTS_PANEL = """\
name: deploy gate
description: Deploys of the payments services.
agents:
- name: Melchior
  model: model-a
  criteria: Approve only when the tests passed on the deployed commit.
- name: Balthasar
  model: model-b
  criteria: Approve only when someone other than the author reviewed it.
- name: Casper
  model: model-c
  criteria: Approve only deploys planned Monday to Thursday.
hold_contested: true
run_checks: null
reviewers:
- user02
team_reviews: false
four_eyes: true
notify_contested: false
"""

SUPPORT_PANEL = """\
name: reply check
description: ''
agents:
- name: Melchior
  model: model-a
  criteria: Approve replies that answer the question asked.
- name: Balthasar
  model: model-b
  criteria: Approve replies that promise nothing we cannot do.
- name: Casper
  model: model-c
  criteria: Approve replies with no customer data of anyone else.
hold_contested: null
run_checks: false
reviewers: []
team_reviews: true
four_eyes: false
notify_contested: true
"""

PAYMENTS_TEAM = """\
members:
- user02
- user03
budgets:
- period: day
  limit: 5.0
  unit: usd
- period: month
  limit: 200000
  unit: tokens
  panel: deploy gate
"""

SUPPORT_TEAM = """\
members:
- user04
- user05
budgets:
- period: day
  limit: 1000
  unit: tokens
  user: user04
"""

SMOKE_SUITE = (
    '{"id": "ok-1", "content": "Tests passed on abc, reviewed by Ana, Tuesday.", '
    '"expected": "approve"}\n'
    '{"id": "no-1", "title": "Friday", "content": "Untested, Friday night.", '
    '"expected": "reject", "tags": ["timing"]}\n'
)

REPLIES_SUITE = (
    '{"id": "r-1", "content": "Your refund was sent today.", "expected": "approve"}\n'
    '{"id": "r-2", "content": "Here is the address of another customer.", '
    '"expected": "reject", "expected_agents": ["approve", "reject", "reject"]}\n'
)

TWO_TEAMS = {
    "teams/payments/team.yaml": PAYMENTS_TEAM,
    "teams/payments/panels/deploy-gate.yaml": PAYMENTS_PANEL,
    "teams/payments/suites/deploy-smoke.jsonl": SMOKE_SUITE,
    "teams/support/team.yaml": SUPPORT_TEAM,
    "teams/support/panels/reply-check.yaml": SUPPORT_PANEL,
    "teams/support/suites/replies.jsonl": REPLIES_SUITE,
}


def write_files(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def read_files(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


# What the server holds, for "nothing changed": the rows of every configuration table.
SNAPSHOT = """
import json
from django.contrib.auth import get_user_model
from judgements.models import AuditEntry, Budget, Membership, Panel, Suite, SuiteCase, Team
tables = (get_user_model(), Team, Membership, Panel, Suite, SuiteCase, Budget, AuditEntry)
print(json.dumps({m.__name__: sorted(map(str, m.objects.values_list())) for m in tables}))
"""


# Var directories of set-up sites, by their users, setup and settings: the database with
# the setup done and the token, copied for each site made alike (LiveMagi.prepare's way).
SET_UP: dict[tuple[object, ...], tuple[Path, str]] = {}


def set_up_site(folder: Path, base_url: str, users: int, setup: str, **env: object) -> LiveMagi:
    """A live MAGI, serving, on a database of its own in which `setup` (Python run by
    `manage.py shell`, with `{username}` the first user's name) has run, and a token of
    that user in `site.token`. The first site of each kind is set up in place; the
    others copy its database, so a fresh server costs only its own start."""
    site = LiveMagi(folder, base_url, users=users, **env)
    key = (users, setup, *sorted(env.items()))
    if key in SET_UP:
        prepared, site.token = SET_UP[key]
        shutil.copytree(prepared, site.var_dir, dirs_exist_ok=True)
        return site.serve()
    site.var_dir.mkdir(parents=True, exist_ok=True)
    site.prepare()
    site.shell(setup.format(username=site.usernames[0]))
    site.token = site.command("api_token", site.usernames[0], "--name", "ci").strip()
    # Beside the var directory: in pytest's temporary tree, which pytest prunes. The
    # Django process closed its connections: the database is whole on disk.
    prepared = Path(tempfile.mkdtemp(prefix="set-up-", dir=site.var_dir.parent))
    shutil.copytree(site.var_dir, prepared, dirs_exist_ok=True, ignore=IGNORED)
    SET_UP[key] = (prepared, site.token)
    return site.serve()


# The logs of the site the copy was made from are not the copy's.
IGNORED = shutil.ignore_patterns("*.log")


def client_site(
    folder: Path, base_url: str, users: int, setup: str, **env: object
) -> Iterator[LiveMagi]:
    """set_up_site's live MAGI for a module's tests, stopped when they are done."""
    site = set_up_site(folder, base_url, users, setup, **env)
    yield site
    site.stop()


def run_as(site: LiveMagi, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed `magi ARGS` against `site` with its token."""
    return run_magi(*args, env={"MAGI_URL": site.url, "MAGI_TOKEN": site.token})
