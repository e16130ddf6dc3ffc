"""The audit chain on a real PostgreSQL: workers in separate processes appending at once
make one chain that `manage.py audit verify` finds clean, and each way of changing the
history directly in the database is named (one way per test), as on SQLite
(tests/judgements/audit/test_verification.py)."""

import subprocess
import sys

import psycopg
import pytest

from tests.support.services import REPO, base_env

pytestmark = pytest.mark.postgres

TEST_KEY = "bWFnaS10ZXN0LWF1ZGl0LWtleS1ub3QtZm9yLXVzZSE"


def env_for(database: str) -> dict:
    return base_env(database_url=database, redis_url="") | {
        "DJANGO_SETTINGS_MODULE": "magi_site.settings",
        "MAGI_AUDIT_SIGNING_KEY": TEST_KEY,
        "MAGI_RATE_LIMIT_PER_USER": "0",
        "MAGI_UNFINISHED_PER_USER": "0",
        "LOG_LEVEL": "WARNING",
    }


def history(database: str, judgements: int, worker: str) -> subprocess.Popen:
    """A worker process making `judgements` through MAGI's own functions."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.audit_history", str(judgements), worker],
        cwd=REPO, env=env_for(database), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def made(database: str, judgements: int = 12) -> None:
    process = history(database, judgements, "w1")
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err


def audit_verify(database: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "audit", "verify"],
        cwd=REPO, env=env_for(database), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def sql(database: str, statement: str, *params) -> list[tuple]:
    with psycopg.connect(database, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def seq_of(database: str, kind: str, judgement: int) -> int:
    ((seq,),) = sql(
        database,
        "SELECT seq FROM judgements_chainentry WHERE kind = %s AND judgement_id = %s "
        "ORDER BY seq LIMIT 1",
        kind,
        judgement,
    )
    return seq


def judgement_ids(database: str) -> list[int]:
    return [row[0] for row in sql(database, "SELECT id FROM judgements_judgement ORDER BY id")]


def tampered(database: str) -> str:
    done = audit_verify(database)
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stderr.splitlines()[0]


def test_four_workers_at_once_make_one_chain_that_checks_clean(database):
    workers = [history(database, 50, f"w{n}") for n in range(4)]
    for worker in workers:
        _, err = worker.communicate(timeout=900)
        assert worker.returncode == 0, err
    seqs = [row[0] for row in sql(database, "SELECT seq FROM judgements_chainentry ORDER BY seq")]
    # 200 judgements of 11 entries each, 40 overrides, 24 confirmations, 20 team changes.
    assert len(seqs) == 1 + 200 * 11 + 40 + 24 + 20
    assert seqs == list(range(1, len(seqs) + 1))
    links = sql(
        database,
        "SELECT count(*) FROM judgements_chainentry e JOIN judgements_chainentry p "
        "ON p.seq = e.seq - 1 WHERE e.prev_sha256 <> p.sha256",
    )
    assert links == [(0,)]
    done = audit_verify(database)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"clean: {len(seqs)} entries checked")


def test_an_edited_reason_is_named(database):
    made(database)
    judgement = judgement_ids(database)[3]
    sql(
        database,
        "UPDATE judgements_rounddecision d SET reason = 'It is safe.' FROM judgements_agent a "
        "WHERE d.agent_id = a.id AND a.judgement_id = %s AND a.position = 1 AND d.round = 2",
        judgement,
    )
    assert tampered(database) == (
        f"TAMPERED: entry {seq_of(database, 'decision', judgement) + 3}: decision of judgement "
        f"{judgement}, agent 1, round 2: the reason text was edited (its SHA-256 differs)"
    )


def test_a_flipped_verdict_is_named(database):
    made(database)
    judgement = judgement_ids(database)[2]
    sql(database, "UPDATE judgements_judgement SET status = 'rejected' WHERE id = %s", judgement)
    assert tampered(database) == (
        f"TAMPERED: entry {seq_of(database, 'verdict', judgement)}: verdict of judgement "
        f"{judgement}: status is 'rejected' in the database, 'approved' in the chain"
    )


def test_a_deleted_judgement_is_named(database):
    made(database)
    judgement = judgement_ids(database)[4]
    # As a careless operator would: the rows that point at it first, then the judgement.
    for statement in (
        "DELETE FROM judgements_llmattempt WHERE agent_id IN "
        "(SELECT id FROM judgements_agent WHERE judgement_id = %s)",
        "DELETE FROM judgements_rounddecision WHERE agent_id IN "
        "(SELECT id FROM judgements_agent WHERE judgement_id = %s)",
        "UPDATE judgements_judgement SET error_agent_id = NULL WHERE id = %s",
        "DELETE FROM judgements_agent WHERE judgement_id = %s",
        "DELETE FROM judgements_judgement WHERE id = %s",
    ):
        sql(database, statement, judgement)
    assert tampered(database) == (
        f"TAMPERED: entry {seq_of(database, 'submitted', judgement)}: submitted of judgement "
        f"{judgement}: the judgement is gone from the database"
    )


def test_a_deleted_entry_is_named(database):
    made(database)
    seq = seq_of(database, "verdict", judgement_ids(database)[1])
    sql(database, "DELETE FROM judgements_chainentry WHERE seq = %s", seq)
    assert tampered(database) == (
        f"TAMPERED: entry {seq}: missing: the chain jumps from entry {seq - 1} to entry "
        f"{seq + 1} (entries were deleted)"
    )


def test_two_swapped_entries_are_named(database):
    made(database)
    judgement = judgement_ids(database)[2]
    first = seq_of(database, "submitted", judgement)
    sql(database, "UPDATE judgements_chainentry SET seq = 0 WHERE seq = %s", first)
    sql(database, "UPDATE judgements_chainentry SET seq = %s WHERE seq = %s", first, first + 1)
    sql(database, "UPDATE judgements_chainentry SET seq = %s WHERE seq = 0", first + 1)
    assert tampered(database).startswith(
        f"TAMPERED: entry {first}: decision of judgement {judgement}, agent 1, round 1: its "
        "SHA-256 does not match its contents"
    )


def test_a_head_re_signed_with_another_key_is_named(database):
    made(database)
    ((signature_id, seq, digest),) = sql(
        database,
        "SELECT id, seq, sha256 FROM judgements_chainsignature ORDER BY seq DESC LIMIT 1",
    )
    forge = (
        "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey\n"
        "from magi_client.canonical import canonical\n"
        "from magi_client.receipts import b64url\n"
        f"body = {{'format': 'magi-chain-head/1', 'seq': {seq}, 'sha256': {digest!r}}}\n"
        "print(b64url(Ed25519PrivateKey.generate().sign(canonical(body))))\n"
    )
    forged = subprocess.run(
        [sys.executable, "-c", forge], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    sql(
        database,
        "UPDATE judgements_chainsignature SET signature = %s WHERE id = %s",
        forged,
        signature_id,
    )
    assert tampered(database).startswith(
        f"TAMPERED: entry {seq}: forged signature: the head's signature does not match"
    )
