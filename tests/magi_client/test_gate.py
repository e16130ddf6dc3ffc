"""`magi gate` against a running MAGI over real HTTP: the console script of the client
distribution, installed on its own (tests/support/magi_client.py), a saved panel, the suite's
scripted model server. Exit 0 only for an approval."""

import json
import re
import subprocess
import urllib.request
from pathlib import Path

import pytest

from magi_client import gate
from magi_client.receipts import jwk_of
from tests.support.magi_client import (
    CREATE_GATE_PANELS,
    INSTALLED_MAGI,
    client_site,
    script_votes,
)

MAGI = INSTALLED_MAGI


@pytest.fixture(scope="module")
def magi(llm_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("gate")
    yield from client_site(folder, llm_server.base_url, 1, CREATE_GATE_PANELS)


@pytest.fixture
def votes(fake_llm):
    return script_votes(fake_llm)


def run_gate(magi, *args, content="Deploy abc123: ship-it.", token=None, url=None):
    env = {"MAGI_URL": url or magi.url, "MAGI_TOKEN": token or magi.token, "PATH": ""}
    return subprocess.run(
        [str(MAGI), "gate", *args],
        input=content,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_an_approval_exits_0_with_one_line(magi, votes):
    done = run_gate(magi, "--panel", "deploy", "--title", "Deploy abc123")
    assert done.returncode == gate.EXIT_APPROVED, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("approved  panel=deploy  judgement=")
    # No certificate holds for the panel: the line says so, and still exits 0.
    assert "  Trust not measured for this panel: " in line
    assert line.endswith("/") and f"{magi.url}/judgements/" in line


def test_a_rejection_exits_3(magi, votes):
    done = run_gate(magi, "--panel", "deploy", content="Deploy on Friday night: no-go.")
    assert done.returncode == gate.EXIT_REJECTED, done.stderr
    assert done.stdout.startswith("rejected  panel=deploy")


def test_a_contested_verdict_held_for_a_person_exits_4(magi, votes):
    done = run_gate(magi, "--panel", "deploy-held", "--json", content="Deploy, maybe.")
    assert done.returncode == gate.EXIT_HELD, done.stderr
    answer = json.loads(done.stdout)
    assert answer["verdict"] == "held" and answer["judgement"]["contested"] is True
    assert answer["judgement"]["trust"] == "contested"
    assert answer["judgement"]["panel_status"] == "approved"  # the panel's 2-1, not in force


def test_it_waits_for_the_verdict_in_force_and_says_which_level_gave_it(magi, votes):
    # The first panel splits 2-1 on "maybe" (contested): the stronger panel decides.
    done = run_gate(magi, "--panel", "deploy-escalating", content="Deploy, maybe.")
    assert done.returncode == gate.EXIT_APPROVED, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("approved  panel=deploy-escalating  judgement=")
    assert "  level=2  level_panel=deploy-strong  level_judgement=" in line
    # The mark on the line is level 2's (unanimous: not measured), never level 1's.
    assert "Contested" not in line and "  Trust not measured for this panel: " in line
    done = run_gate(magi, "--panel", "deploy-escalating", "--json", content="Deploy: ship-it.")
    answer = json.loads(done.stdout)
    # Kept at the first level: the story ends there, and says so.
    assert done.returncode == gate.EXIT_APPROVED and answer["level"] == 1
    assert [lv["level"] for lv in answer["judgement"]["escalation"]["levels"]] == [1]


def test_an_escalated_approval_s_evidence_is_the_level_in_force_s(magi, votes, tmp_path):
    """Issue 70: --json kept level 1's receipt (verdict "judging") and level 1's mark
    ("Contested") beside level 2's approval. The output a job keeps now carries the level
    in force's receipt, an approval about level 2's judgement, that `magi verify` checks
    with the content, and that level's mark and agents at the top."""
    content = "Deploy, maybe: keep the evidence."
    done = run_gate(
        magi, "--panel", "deploy-escalating", "--json", "--require-receipt", content=content
    )
    assert done.returncode == gate.EXIT_APPROVED, done.stderr
    answer = json.loads(done.stdout)
    story = answer["judgement"]["escalation"]
    first, second = story["levels"]
    assert (answer["verdict"], answer["level"], story["in_force"]) == ("approved", 2, 2)
    signed = answer["receipt"]["receipt"]
    assert (signed["judgement"], signed["verdict"]) == (second["judgement"], "approved")
    assert answer["receipt"] == answer["judgement"]["receipt"] == second["receipt"]
    assert answer["receipt_refused"] is None
    top = answer["judgement"]
    assert top["trust"] == second["trust"] != "contested" and first["trust"] == "contested"
    assert top["panel"]["name"] == "deploy-strong"
    assert {a["model"] for a in top["agents"]} == {"model-a"}
    kept, text = tmp_path / "verdict.json", tmp_path / "content.txt"
    kept.write_text(done.stdout)
    text.write_text(content)
    keys = tmp_path / "keys.json"
    with urllib.request.urlopen(f"{magi.url}/.well-known/magi-keys.json") as response:
        keys.write_bytes(response.read())
    checked = subprocess.run(
        [str(MAGI), "verify", str(kept), "--keys", str(keys), "--content", str(text)],
        capture_output=True, text=True, env={"PATH": ""}, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert f"valid: judgement {second['judgement']} approved" in checked.stdout


def test_an_approval_whose_receipt_does_not_check_never_prints_approved(magi, votes, tmp_path):
    """Issue 70: --require-receipt printed "approved" on stdout, then exited 1. The line
    and --json's verdict are the gate's: error, with the reason."""
    stranger = tmp_path / "stranger.json"
    stranger.write_text(json.dumps({"keys": [jwk_of(bytes(range(32)))]}))
    args = ("--panel", "deploy", "--require-receipt", "--keys", str(stranger))
    done = run_gate(magi, *args)
    assert done.returncode == gate.EXIT_ERROR
    (line,) = done.stdout.splitlines()
    assert line.startswith("error  panel=deploy  judgement=") and "approved" not in line
    assert "  receipt_refused=" in line
    done = run_gate(magi, *args, "--json")
    answer = json.loads(done.stdout)
    assert done.returncode == gate.EXIT_ERROR and answer["verdict"] == "error"
    assert "not among the keys given" in answer["receipt_refused"]
    assert answer["judgement"]["status"] == "approved"  # the server's, kept as it answered


def test_an_error_exits_1_and_is_never_a_go(magi, votes):
    done = run_gate(magi, "--panel", "broken")
    assert done.returncode == gate.EXIT_ERROR
    assert done.stdout.startswith("error  panel=broken") and "failed in round 1" in done.stdout


def test_bad_input_exits_2_naming_the_field(magi, votes):
    unknown = run_gate(magi, "--panel", "no-such-panel")
    assert unknown.returncode == gate.EXIT_BAD_INPUT
    assert "panel:" in unknown.stderr
    blank = run_gate(magi, "--panel", "deploy", content="   ")
    assert blank.returncode == gate.EXIT_BAD_INPUT and "content:" in blank.stderr
    no_token = run_gate(magi, "--panel", "deploy", token="magi_wrong")
    assert no_token.returncode == gate.EXIT_BAD_INPUT and "401" in no_token.stderr


def test_an_unreachable_server_exits_5(magi, votes):
    done = run_gate(magi, "--panel", "deploy", "--timeout", "1", url="http://127.0.0.1:9")
    assert done.returncode == gate.EXIT_UNREACHABLE
    assert "cannot reach http://127.0.0.1:9" in done.stderr


def test_a_verdict_not_in_time_exits_6_not_0(magi, votes):
    votes.gate.close()  # the model never answers
    try:
        done = run_gate(magi, "--panel", "deploy", "--timeout", "1", content="Slow: ship-it.")
    finally:
        votes.gate.open()
    assert done.returncode == gate.EXIT_TIMEOUT
    assert "no verdict before the time ran out" in done.stderr


def test_running_the_job_again_replays_the_judgement_it_started(magi, votes):
    first = run_gate(magi, "--panel", "deploy", "--json", content="Again: ship-it.")
    again = run_gate(magi, "--panel", "deploy", "--json", content="Again: ship-it.")
    assert first.returncode == again.returncode == gate.EXIT_APPROVED
    assert json.loads(first.stdout)["url"] == json.loads(again.stdout)["url"]
    asked = [r for r in votes.requests if "Again: ship-it." in json.dumps(r.body)]
    assert len(asked) == 9  # one judgement's calls: the second run started nothing


def test_the_help_lists_every_exit_status_the_docs_table_has():
    """docs/gate.md's table and `magi gate --help` name the same statuses (issue 49: 7,
    over budget, was missing from the help)."""
    table = Path(__file__).parents[2] / "docs" / "gate.md"
    documented = re.findall(r"^\| (\d+) \|", table.read_text(), flags=re.MULTILINE)
    shown = subprocess.run(
        [str(MAGI), "gate", "--help"], capture_output=True, text=True, env={"PATH": ""}
    )
    assert shown.returncode == 0
    epilog = " ".join(shown.stdout.split()).split("exit status:")[1].strip()
    listed = re.findall(r"(?:^|, )(\d+) ", epilog)
    assert listed == documented and "7" in listed
