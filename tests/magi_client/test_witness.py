"""A witness and an offline check against what it kept, with the client installed on its
own against a running MAGI: `magi audit watch URL --state FILE` keeps the log's last
checkpoint and exits 0 while each new one extends it; a receipt then checks offline
against the checkpoint the witness kept, by its inclusion proof; and the witness exits 1
on a log rolled back (a truncated tail with its head reset) or forked (rewritten and
signed again), keeping the checkpoint it had as the evidence (magi_client/watch.py)."""

import json
import urllib.request

import pytest

from magi_client import gate, verify, watch
from tests.support.magi_client import (
    CREATE_GATE_PANELS,
    INSTALLED_MAGI,
    client_site,
    script_votes,
)

PLACE = "from tests.support.audit_history import placed; placed('test')"
# What an attacker with the database does to its log, then has it signed again: the
# last `cut` entries deleted (a truncated tail), or one entry's payload rewritten (a fork).
REBUILD = """
import json
from django.db import connection
from judgements.audit import log
from judgements.models import ChainEntry, Checkpoint, LogNode, LogState
from magi_client.canonical import canonical, leaf_hash
cut, rewrite = {cut}, {rewrite}
size = LogState.objects.get().size
ChainEntry.objects.filter(seq__gte=size - cut).delete()
if rewrite:
    entry = ChainEntry.objects.get(seq=1)
    payload = json.loads(entry.payload) | {{"rewritten": True}}
    entry.payload = canonical(payload).decode()
    entry.leaf_hash = leaf_hash(log.leaf_of(entry, payload))
    entry.save()
Checkpoint.objects.all().delete()
LogNode.objects.all().delete()
ChainEntry.objects.update(seq=None)
LogState.objects.update(size=0, root_hash="")
from tests.support.audit_history import placed
placed("attacker")
"""


@pytest.fixture(scope="module")
def magi(llm_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("witness")
    # The tests place entries themselves (PLACE) and rebuild the log as an attacker would;
    # the site's own sequencer, waking every second, raced a rebuild half done (a fork
    # read as a rollback, once in CI). So it runs once, at start-up, and not again.
    yield from client_site(
        folder, llm_server.base_url, 1, CREATE_GATE_PANELS, MAGI_AUDIT_LOG_INTERVAL=86400
    )


def magi_command(*args, stdin="", env=None):
    import subprocess

    return subprocess.run(
        [str(INSTALLED_MAGI), *args],
        input=stdin, capture_output=True, text=True, env={"PATH": "", **(env or {})}, timeout=120,
    )  # fmt: skip


def approved(magi, content: str) -> int:
    env = {"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token}
    done = magi_command("gate", "--panel", "deploy", "--json", stdin=content, env=env)
    assert done.returncode == gate.EXIT_APPROVED, done.stderr
    return json.loads(done.stdout)["judgement"]["id"]


def receipt_of(magi, judgement: int) -> dict:
    request = urllib.request.Request(
        f"{magi.url}/api/judgements/{judgement}/", headers={"Authorization": f"Bearer {magi.token}"}
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())["receipt"]


def test_a_receipt_checks_offline_against_the_checkpoint_a_witness_kept(magi, fake_llm, tmp_path):
    script_votes(fake_llm)
    judgement = approved(magi, "Deploy abc123: ship-it.")
    magi.shell(PLACE)
    state = tmp_path / "witness.json"
    first = magi_command("audit", "watch", magi.url, "--state", str(state), "--once")
    assert first.returncode == watch.EXIT_CONSISTENT, first.stderr
    assert "trusting the keys the server publishes now, on first use" in first.stdout
    receipt = tmp_path / "receipt.json"
    receipt.write_text(json.dumps(receipt_of(magi, judgement)))
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(json.loads(state.read_text())["keys"]))
    done = magi_command("verify", str(receipt), "--keys", str(keys), "--checkpoint", str(state))
    assert done.returncode == verify.EXIT_VALID, done.stderr
    assert " of magi.invalid/" in done.stdout.splitlines()[-1]
    # The log grows; the witness checks the new checkpoint extends the one it kept.
    approved(magi, "Deploy abc124: ship-it.")
    magi.shell(PLACE)
    again = magi_command("audit", "watch", magi.url, "--state", str(state), "--once")
    assert again.returncode == watch.EXIT_CONSISTENT, again.stderr
    assert again.stdout.startswith("consistent: magi.invalid/")
    # The old receipt was proven at the old size: checking it against the new kept
    # checkpoint says how to get the proof at that size.
    stale = magi_command("verify", str(receipt), "--keys", str(keys), "--checkpoint", str(state))
    assert (
        stale.returncode == verify.EXIT_NOT_VALID and "GET /api/log/proof/inclusion" in stale.stderr
    )


@pytest.mark.parametrize(
    "attack, failure", [("rollback", "rollback: the log went back"), ("fork", "fork:")]
)
def test_the_witness_exits_1_on_a_rollback_or_a_fork_and_keeps_its_checkpoint(
    magi, fake_llm, tmp_path, attack, failure
):
    script_votes(fake_llm)
    approved(magi, f"Deploy {attack}: ship-it.")
    magi.shell(PLACE)
    state = tmp_path / "witness.json"
    assert magi_command("audit", "watch", magi.url, "--state", str(state), "--once").returncode == 0
    kept = state.read_text()
    if attack == "rollback":
        magi.shell(REBUILD.format(cut=5, rewrite=False))
    else:
        approved(magi, "Deploy more: ship-it.")
        magi.shell(REBUILD.format(cut=0, rewrite=True))
    done = magi_command("audit", "watch", magi.url, "--state", str(state), "--once")
    assert done.returncode == watch.EXIT_INCONSISTENT, done.stdout + done.stderr
    assert failure in done.stderr
    assert state.read_text() == kept


def unused_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_witness_running_on_retries_an_unreachable_server_backing_off(tmp_path):
    import subprocess

    url = f"http://127.0.0.1:{unused_port()}"
    state = str(tmp_path / "witness.json")
    witness = subprocess.Popen(
        [str(INSTALLED_MAGI), "audit", "watch", url, "--state", state, "--interval", "2"],
        stderr=subprocess.PIPE, text=True, env={"PATH": ""},
    )  # fmt: skip
    assert witness.stderr is not None
    try:
        said = [witness.stderr.readline() for _ in range(4)]
    finally:
        witness.kill()
        witness.wait()
    waits = [line.rsplit("trying again in ", 1)[-1].strip() for line in said]
    assert all(line.startswith("magi audit watch: unreachable: cannot read") for line in said)
    assert waits == ["0.5 s", "1 s", "2 s", "2 s"]


def test_once_an_unreachable_server_exits_2(tmp_path):
    url = f"http://127.0.0.1:{unused_port()}"
    done = magi_command("audit", "watch", url, "--state", str(tmp_path / "w.json"), "--once")
    assert done.returncode == watch.EXIT_BAD_INPUT
    assert "magi audit watch: bad input: cannot read" in done.stderr
