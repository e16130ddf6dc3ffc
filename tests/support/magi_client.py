"""The `magi` command of the client distribution (clients/magi-client), installed on its
own in a virtualenv beside the test one (`make setup-test`, the Makefile's
.installed-client): what a CI job installs, with no Django in reach."""

import subprocess
import sys
from pathlib import Path

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
from judgements.panels import saving
owner = get_user_model().objects.get(username={username!r})
names = (("Melchior", "model-a"), ("Balthasar", "model-b"), ("Casper", "model-c"))
agents = [{{"name": name, "model": model, "criteria": name + " approves only safe deploys."}}
          for name, model in names]
saving.save_panel(owner=owner, name="deploy", agents=agents)
held = saving.save_panel(owner=owner, name="deploy-held", agents=agents)
Panel.objects.filter(pk=held.pk).update(hold_contested=True)
broken = [dict(agent, model="model-d") for agent in agents]
saving.save_panel(owner=owner, name="broken", agents=broken)
"""


def script_votes(fake_llm):  # type: ignore[no-untyped-def]
    """Approve content marked `ship-it`, reject `no-go`, split 2-1 on `maybe`; model-d
    fails (a 400 is not retried: the first agent's call fails the judgement)."""
    for model, on_maybe in (("model-a", "AAA"), ("model-b", "AAA"), ("model-c", "RRR")):
        fake_llm.script(model, votes_when={"ship-it": "AAA", "no-go": "RRR", "maybe": on_maybe})
    fake_llm.script("model-d", failures={1: ["400"] * 10})
    return fake_llm
