"""`magi verify` and `magi gate --require-receipt` from the client distribution installed
on its own (no Django), against a running MAGI over real HTTP: a receipt checks offline
with the published keys, and fails after any change to it or to the content."""

import json
import subprocess
import urllib.request

import pytest

from magi_client import gate, verify
from magi_client.receipts import b64url, jwk_of
from tests.support.magi_client import (
    CREATE_GATE_PANELS,
    INSTALLED_MAGI,
    client_site,
    script_votes,
)

CONTENT = "Deploy abc123: ship-it."


@pytest.fixture(scope="module")
def magi(llm_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("verify")
    yield from client_site(folder, llm_server.base_url, 1, CREATE_GATE_PANELS)


@pytest.fixture
def votes(fake_llm):
    return script_votes(fake_llm)


def magi_command(*args, stdin="", env=None):
    return subprocess.run(
        [str(INSTALLED_MAGI), *args],
        input=stdin, capture_output=True, text=True, env={"PATH": "", **(env or {})}, timeout=120,
    )  # fmt: skip


@pytest.fixture
def approval(magi, votes, tmp_path):
    """`magi gate --json`'s output for an approval, the content and the keys, as files."""
    env = {"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token}
    done = magi_command("gate", "--panel", "deploy", "--json", stdin=CONTENT, env=env)
    assert done.returncode == gate.EXIT_APPROVED, done.stderr
    files = {"gate": tmp_path / "gate.json", "content": tmp_path / "content.txt"}
    files["gate"].write_text(done.stdout)
    files["content"].write_bytes(CONTENT.encode())
    files["keys"] = tmp_path / "keys.json"
    with urllib.request.urlopen(f"{magi.url}/.well-known/magi-keys.json") as response:
        files["keys"].write_bytes(response.read())
    return files


def test_the_gates_receipt_checks_offline(approval):
    done = magi_command(
        "verify", str(approval["gate"]), "--keys", str(approval["keys"]),
        "--content", str(approval["content"]),
    )  # fmt: skip
    assert done.returncode == verify.EXIT_VALID, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("valid: judgement ") and " approved, content sha256 " in last
    assert done.stdout.startswith("keys: 1 trusted, from ")


def test_the_receipt_alone_checks_with_the_keys_url(approval, magi, tmp_path):
    receipt = tmp_path / "receipt.json"
    receipt.write_text(json.dumps(json.loads(approval["gate"].read_text())["receipt"]))
    done = magi_command("verify", str(receipt), "--keys", f"{magi.url}/.well-known/magi-keys.json")
    assert done.returncode == verify.EXIT_VALID, done.stderr


def test_a_changed_verdict_fails_naming_the_signature(approval, tmp_path):
    receipt = json.loads(approval["gate"].read_text())["receipt"]
    receipt["receipt"]["verdict"] = "rejected"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(receipt))
    done = magi_command("verify", str(changed), "--keys", str(approval["keys"]))
    assert done.returncode == verify.EXIT_NOT_VALID
    assert "NOT VALID: the receipt's signature does not match its contents" in done.stderr


def test_any_byte_of_the_content_changed_fails(approval, tmp_path):
    other = tmp_path / "other.txt"
    other.write_bytes(CONTENT.encode().replace(b"abc123", b"abc124"))
    done = magi_command(
        "verify", str(approval["gate"]), "--keys", str(approval["keys"]), "--content", str(other)
    )
    assert done.returncode == verify.EXIT_NOT_VALID
    assert "it is not the content that was judged" in done.stderr


def test_keys_that_did_not_sign_it_fail(approval, tmp_path):
    stranger = tmp_path / "stranger.json"
    stranger.write_text(json.dumps({"keys": [jwk_of(b"\x07" * 32)]}))
    done = magi_command("verify", str(approval["gate"]), "--keys", str(stranger))
    assert done.returncode == verify.EXIT_NOT_VALID
    assert "which is not among the keys given" in done.stderr


def test_bad_input_exits_2_naming_it(approval, tmp_path):
    missing = magi_command("verify", str(tmp_path / "nope.json"), "--keys", str(approval["keys"]))
    assert missing.returncode == verify.EXIT_BAD_INPUT
    assert "bad input: RECEIPT_FILE: cannot read" in missing.stderr
    not_json = magi_command("verify", str(approval["content"]), "--keys", str(approval["keys"]))
    assert not_json.returncode == verify.EXIT_BAD_INPUT and "is not JSON" in not_json.stderr
    no_keys = magi_command("verify", str(approval["gate"]))
    assert no_keys.returncode == verify.EXIT_BAD_INPUT and "--keys" in no_keys.stderr
    other = tmp_path / "other.json"
    other.write_text('{"name": "not a receipt"}')
    not_ours = magi_command("verify", str(other), "--keys", str(approval["keys"]))
    assert not_ours.returncode == verify.EXIT_BAD_INPUT
    assert "it is JSON, but not a receipt, an evidence pack" in not_ours.stderr


@pytest.mark.parametrize("where", ["answer", "gate"])
def test_a_status_that_contradicts_its_receipt_is_refused(approval, tmp_path, where):
    """The gate's output (or the API answer in it) says rejected beside a receipt that
    signed approved: the document is refused, not passed on its receipt alone."""
    document = json.loads(approval["gate"].read_text())
    if where == "answer":
        document = document["judgement"]
        document["status"] = "rejected"
    else:
        document["verdict"] = "rejected"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(document))
    done = magi_command("verify", str(changed), "--keys", str(approval["keys"]))
    assert done.returncode == verify.EXIT_NOT_VALID, done.stdout
    assert "'rejected', its signed receipt" in done.stderr
    assert "the document contradicts its receipt" in done.stderr


def test_require_receipt_passes_a_receipt_that_checks(magi, votes):
    env = {"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token}
    done = magi_command("gate", "--panel", "deploy", "--require-receipt", stdin=CONTENT, env=env)
    assert done.returncode == gate.EXIT_APPROVED, done.stderr


def test_require_receipt_refuses_an_approval_whose_receipt_does_not_check(magi, votes, tmp_path):
    """Keys of someone else stand for a server whose receipts cannot be trusted."""
    stranger = tmp_path / "stranger.json"
    stranger.write_text(json.dumps({"keys": [jwk_of(bytes(range(32)))]}))
    env = {"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token}
    args = ("gate", "--panel", "deploy", "--require-receipt", "--keys", str(stranger))
    done = magi_command(*args, stdin=CONTENT, env=env)
    assert done.returncode == gate.EXIT_ERROR
    assert "the approval's receipt does not check" in done.stderr
    assert done.stdout.startswith("error  panel=deploy")  # never "approved" for a no-go


def test_a_kid_that_is_not_its_keys_thumbprint_is_refused(approval, tmp_path):
    keys = json.loads(approval["keys"].read_text())
    keys["keys"][0]["x"] = b64url(b"\x01" * 32)
    lying = tmp_path / "lying.json"
    lying.write_text(json.dumps(keys))
    done = magi_command("verify", str(approval["gate"]), "--keys", str(lying))
    assert done.returncode == verify.EXIT_NOT_VALID
    assert "its kid is not its thumbprint" in done.stderr


def test_an_evidence_pack_checks_offline_and_fails_once_changed(approval, magi, tmp_path):
    judgement = json.loads(approval["gate"].read_text())["judgement"]["id"]
    request = urllib.request.Request(
        f"{magi.url}/api/judgements/{judgement}/evidence",
        headers={"Authorization": f"Bearer {magi.token}"},
    )
    with urllib.request.urlopen(request) as response:
        pack = json.loads(response.read())
    good = tmp_path / "pack.json"
    good.write_text(json.dumps(pack))
    done = magi_command("verify", str(good), "--keys", str(approval["keys"]))
    assert done.returncode == verify.EXIT_VALID, done.stderr
    pack["agents"][0]["decisions"][0]["reason"] += " (edited)"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(pack))
    done = magi_command("verify", str(edited), "--keys", str(approval["keys"]))
    assert done.returncode == verify.EXIT_NOT_VALID
    assert "the pack's decisions is not what its signed receipt says" in done.stderr
    assert (
        'the pack\'s own "keys" were not used'
        in magi_command("verify", str(good), "--keys", str(approval["keys"])).stdout
    )


def test_the_documented_recipe_pipes_git_log_into_the_gate_and_exits_0(magi, votes, tmp_path):
    """docs/gate.md: `git log -1 --format=%B | magi gate ... --require-receipt`: the commit
    message ends in a newline the server does not store, and the receipt still checks."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=ci", "-c", "user.email=ci@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run(
        [*git, "commit", "-q", "--allow-empty", "-m", "Deploy abc123: ship-it.\r"], check=True
    )
    script = (
        f"git -C {repo} log -1 --format=%B | {INSTALLED_MAGI} gate --panel deploy "
        "--title 'Deploy abc123' --require-receipt"
    )
    env = {"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == gate.EXIT_APPROVED, done.stderr
