"""The audit log on a real PostgreSQL: workers in separate processes appending at once,
with sequencers in separate processes placing their entries, make one log that `manage.py
audit verify` finds clean, and each way of changing the history directly in the database
is named (one way per test), as on SQLite (tests/judgements/audit/test_verification.py,
tests/judgements/configuration/test_live_state.py for the live configuration)."""

import copy
import json
import secrets
import subprocess
import sys
from datetime import UTC, datetime

import psycopg
import pytest
from psycopg.types.json import Jsonb

from magi_client.canonical import canonical, entry_leaf_hash, timestamp
from tests.support.magi_client import run_magi
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


def sequencer(database: str, worker: str) -> subprocess.Popen:
    """A process placing the queued entries, as a worker's timer runs the sequencer."""
    code = (
        "import django; django.setup()\n"
        "from tests.support.audit_history import placed\n"
        f"print(placed({worker!r}))\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, env=env_for(database),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def place(database: str, worker: str = "s1") -> None:
    process = sequencer(database, worker)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err


def made(database: str, judgements: int = 12) -> None:
    process = history(database, judgements, "w1")
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    place(database)


def audit_verify(database: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "audit", "verify", *args],
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


def tampered(database: str, *args: str) -> str:
    done = audit_verify(database, *args)
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stderr.splitlines()[0]


def test_four_workers_and_two_sequencers_at_once_make_one_log_that_checks_clean(database):
    workers = [history(database, 50, f"w{n}") for n in range(4)]
    sequencers = [sequencer(database, f"s{n}") for n in range(2)]
    for process in workers + sequencers:
        _, err = process.communicate(timeout=900)
        assert process.returncode == 0, err
    place(database)
    seqs = [row[0] for row in sql(database, "SELECT seq FROM judgements_chainentry ORDER BY seq")]
    # 200 judgements of 11 entries each, 40 overrides, 24 confirmations, 20 team changes,
    # and each worker's two users and team made.
    assert len(seqs) == 1 + 200 * 11 + 40 + 24 + 20 + 4 * 3
    assert seqs == list(range(len(seqs)))
    sizes = [
        row[0] for row in sql(database, "SELECT size FROM judgements_checkpoint ORDER BY size")
    ]
    assert sizes[-1] == len(seqs) and len(set(sizes)) == len(sizes)
    done = audit_verify(database)
    assert done.returncode == 0, done.stderr
    assert f"clean: {len(seqs)} entries checked" in done.stdout


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


def test_a_status_flip_is_named(database):
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
        f"TAMPERED: entry {seq}: missing: the log jumps from place {seq - 1} to place "
        f"{seq + 1} (entries were deleted)"
    )


def rolled_back(database: str) -> tuple[int, int, str]:
    """A history made and placed, then its last judgement's rows and every entry from its
    first on deleted, the tree rebuilt and signed again from what is left: the log's
    newest checkpoint before (its size and note) and the first place cut."""
    made(database)
    ((size, note),) = sql(
        database, "SELECT size, note FROM judgements_checkpoint ORDER BY size DESC LIMIT 1"
    )
    last = judgement_ids(database)[-1]
    ((first,),) = sql(
        database, "SELECT min(seq) FROM judgements_chainentry WHERE judgement_id = %s", last
    )
    for statement in (
        "DELETE FROM judgements_receipt WHERE judgement_id = %s",
        "DELETE FROM judgements_llmattempt WHERE agent_id IN "
        "(SELECT id FROM judgements_agent WHERE judgement_id = %s)",
        "DELETE FROM judgements_rounddecision WHERE agent_id IN "
        "(SELECT id FROM judgements_agent WHERE judgement_id = %s)",
        "DELETE FROM judgements_override WHERE judgement_id = %s",
        "DELETE FROM judgements_confirmation WHERE judgement_id = %s",
        "UPDATE judgements_judgement SET error_agent_id = NULL WHERE id = %s",
        "DELETE FROM judgements_agent WHERE judgement_id = %s",
        "DELETE FROM judgements_judgement WHERE id = %s",
    ):
        sql(database, statement, last)
    sql(database, "DELETE FROM judgements_chainentry WHERE seq >= %s", first)
    sql(database, "DELETE FROM judgements_checkpoint")
    sql(database, "DELETE FROM judgements_lognode")
    sql(database, "UPDATE judgements_chainentry SET seq = NULL")
    sql(database, "UPDATE judgements_logstate SET size = 0, root_hash = ''")
    place(database)
    return first, size, note


def test_a_truncated_tail_with_its_head_reset_is_named_against_a_kept_checkpoint(
    database, tmp_path
):
    first, size, note = rolled_back(database)
    kept = tmp_path / "checkpoint.txt"
    kept.write_text(note)
    assert audit_verify(database).returncode == 0
    assert tampered(database, "--checkpoint", str(kept)).startswith(
        f"TAMPERED: entry {first}: the log has {first} entries but the kept checkpoint has {size}"
    )


def test_a_rollback_is_named_against_the_checkpoint_directory_alone(database, tmp_path):
    """No witness and no --checkpoint: the server's own append-only directory holds the
    newest checkpoint signed before the rollback, as the sequencer wrote it."""
    first, size, note = rolled_back(database)
    (tmp_path / f"checkpoint-{size:012d}.txt").write_text(note)
    done = subprocess.run(
        [sys.executable, "manage.py", "audit", "verify"], cwd=REPO, capture_output=True,
        text=True, timeout=300,
        env=env_for(database) | {"MAGI_AUDIT_CHECKPOINT_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert "kept checkpoint: " in done.stdout
    assert done.stderr.startswith(
        f"TAMPERED: entry {first}: the log has {first} entries but the kept checkpoint has {size}"
    )


def test_a_backdated_override_is_named(database):
    made(database)
    judgement = judgement_ids(database)[1]  # approved by its panel, not overridden
    ((user,),) = sql(database, "SELECT id FROM auth_user ORDER BY id LIMIT 1")
    sql(
        database,
        "INSERT INTO judgements_override (judgement_id, by_id, at, panel_status, decision, reason) "
        "VALUES (%s, %s, '2001-01-01', 'approved', 'reject', 'backdated')",
        judgement, user,
    )  # fmt: skip
    done = audit_verify(database, "--all")
    assert done.returncode == 1
    assert f"no override entry for judgement {judgement}" in done.stderr


def test_an_edited_reply_is_named(database):
    made(database)
    judgement = judgement_ids(database)[3]
    sql(
        database,
        "UPDATE judgements_llmattempt t SET response_text = 'edited' FROM judgements_agent a "
        "WHERE t.agent_id = a.id AND a.judgement_id = %s AND a.position = 3 AND t.round = 1",
        judgement,
    )
    assert tampered(database).endswith(
        f"decision of judgement {judgement}, agent 3, round 1: the call (its prompt, reply, model "
        "or error) was edited, or is gone"
    )


def test_an_edited_budget_is_named(database):
    made(database)
    code = (
        "import django; django.setup()\n"
        "from django.contrib.auth import get_user_model\n"
        "from judgements.configuration import budget_config\n"
        "staff = get_user_model().objects.get(username='ops-w1')\n"
        "budget_config.create(staff, {'team': None, 'user': 'maker-w1', 'panel': None,\n"
        "    'panel_team': None, 'period': 'day', 'limit_usd': 5, 'limit_tokens': None})\n"
        "from tests.support.audit_history import placed; placed()\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env_for(database), check=True)
    assert audit_verify(database).returncode == 0
    sql(database, "UPDATE judgements_budget SET limit_usd = 5000")
    done = audit_verify(database, "--all")
    assert done.returncode == 1 and "differs from its last audited state" in done.stderr


def test_a_key_added_to_the_retired_keys_is_not_trusted(database, tmp_path):
    """A checkpoint re-signed with a key of the attacker's, whose public half they added to
    the retired keys beside the data: refused with the keys given."""
    made(database)
    ((size, note),) = sql(
        database, "SELECT size, note FROM judgements_checkpoint ORDER BY size DESC LIMIT 1"
    )
    forge = (
        "import sys\n"
        "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey\n"
        "from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat\n"
        "from magi_client import checkpoints\n"
        "key = Ed25519PrivateKey.generate()\n"
        "public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)\n"
        "found, _ = checkpoints.parse(sys.stdin.read())\n"
        "note = checkpoints.signed_note(found.origin, found.size, found.root, public, key.sign)\n"
        "print(note, end='')\n"
    )
    forged = subprocess.run(
        [sys.executable, "-c", forge],
        input=note,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    keys = subprocess.run(
        [sys.executable, "manage.py", "audit", "keys"], cwd=REPO, env=env_for(database),
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    (tmp_path / "keys.json").write_text(keys)
    sql(database, "UPDATE judgements_checkpoint SET note = %s WHERE size = %s", forged, size)
    assert tampered(database, "--keys", str(tmp_path / "keys.json")) == (
        f"TAMPERED: checkpoint at size {size}: the checkpoint is not signed by any of the keys "
        "given"
    )


def test_two_swapped_entries_are_named(database):
    made(database)
    judgement = judgement_ids(database)[2]
    first = seq_of(database, "submitted", judgement)
    sql(database, "UPDATE judgements_chainentry SET seq = 999999999 WHERE seq = %s", first)
    sql(database, "UPDATE judgements_chainentry SET seq = %s WHERE seq = %s", first, first + 1)
    sql(database, "UPDATE judgements_chainentry SET seq = %s WHERE seq = 999999999", first + 1)
    assert tampered(database).startswith(
        f"TAMPERED: entry {first}: the stored subtree of level 0 at place {first} is not the one "
        "its leaves make"
    )


CONFIGURED = (
    "import django; django.setup()\n"
    "from judgements.configuration import budget_config, people, suite_config, team_config\n"
    "from tests.support.audit_history import placed\n"
    "staff = people.create_user(None, 'ops', 'ops@example.com', is_staff=True)\n"
    "people.create_user(staff, 'maker', 'maker@example.com')\n"
    "team_config.create(staff, {'name': 'Payments', 'members': ['maker', 'ops']})\n"
    "people.issue_token(staff, 'maker', 'ci', 'Payments')\n"
    "budget_config.create(staff, {'team': 'Payments', 'user': None, 'panel': None,\n"
    "    'panel_team': None, 'period': 'day', 'limit_usd': 5, 'limit_tokens': None})\n"
    'case = b\'{"id": "c1", "content": "Deploy.", "expected": "reject"}\\n\'\n'
    "suite_config.made(staff, staff, None, suite_config.Upload('Smoke', '', None, case))\n"
    "placed()\n"
)


@pytest.mark.parametrize(
    ("table", "statement", "named"),
    [
        (
            "apitoken",
            "UPDATE judgements_apitoken SET key_hash = md5('known') || md5('key')",
            "token {pk} differs from its last audited state",
        ),
        (
            "suite",
            "UPDATE judgements_suitecase SET expected = 'approve'",
            "suite {pk} differs from its last audited state",
        ),
        ("budget", "DELETE FROM judgements_budget", "budget {pk} is gone"),
        (
            "team",
            "UPDATE judgements_membership SET reviews_all = TRUE",
            "team {pk} differs from its last audited state",
        ),
    ],
    ids=["a token's key hash swapped", "a suite's case edited", "a budget deleted",
         "a team-wide reviewer added"],
)  # fmt: skip
def test_live_configuration_changed_behind_magis_back_is_named(database, table, statement, named):
    """Issue 55: a token's key hash, a suite's cases, a budget's deletion and a team's
    reviewers of every panel, each compared with its last audit row."""
    subprocess.run([sys.executable, "-c", CONFIGURED], cwd=REPO, env=env_for(database), check=True)
    assert audit_verify(database).returncode == 0
    ((pk,),) = sql(database, f"SELECT min(id) FROM judgements_{table}")
    sql(database, statement)
    done = audit_verify(database, "--all")
    assert done.returncode == 1
    assert f"TAMPERED: {named.format(pk=pk)}" in done.stderr, done.stderr


def test_a_token_added_with_a_known_key_is_named(database):
    subprocess.run([sys.executable, "-c", CONFIGURED], cwd=REPO, env=env_for(database), check=True)
    assert audit_verify(database).returncode == 0
    ((pk,),) = sql(
        database,
        "INSERT INTO judgements_apitoken (user_id, name, prefix, key_hash, created_at) "
        "SELECT id, 'ci', 'magi_kno', md5('known') || md5('key'), now() FROM auth_user "
        "WHERE username = 'ops' RETURNING id",
    )
    assert tampered(database) == (
        f"TAMPERED: token {pk} was added outside MAGI: no audit row made it (ApiToken)"
    )


@pytest.mark.parametrize(
    ("statement", "named"),
    [
        (
            "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, "
            "email, is_staff, is_active, date_joined) VALUES ('md5$salt$known', TRUE, "
            "'mallory', '', '', '', TRUE, TRUE, now()) RETURNING id",
            "user {pk} was added outside MAGI: no audit row made it (User)",
        ),
        (
            "INSERT INTO judgements_budget (user_id, period, limit_usd, created_at, version) "
            "SELECT id, 'day', 5000, now(), 1 FROM auth_user WHERE username = 'maker' "
            "RETURNING id",
            "budget {pk} was added outside MAGI: no audit row made it (Budget)",
        ),
        (
            "UPDATE auth_user SET password = 'md5$salt$known' WHERE username = 'maker' "
            "RETURNING id",
            "user {pk} differs from its last audited state",
        ),
        (
            "INSERT INTO auth_user_user_permissions (user_id, permission_id) SELECT u.id, p.id "
            "FROM auth_user u, auth_permission p WHERE u.username = 'maker' "
            "AND p.codename = 'delete_budget' RETURNING user_id",
            "user {pk} differs from its last audited state",
        ),
    ],
    ids=["a superuser added", "a budget added", "a password hash swapped", "a permission granted"],
)  # fmt: skip
def test_rows_added_and_users_changed_behind_magis_back_are_named(database, statement, named):
    """Issue 55: a user or budget inserted with no audit row, and a user's password hash
    or permissions changed, each named."""
    subprocess.run([sys.executable, "-c", CONFIGURED], cwd=REPO, env=env_for(database), check=True)
    assert audit_verify(database).returncode == 0
    ((pk,),) = sql(database, statement)
    done = audit_verify(database, "--all")
    assert done.returncode == 1
    assert f"TAMPERED: {named.format(pk=pk)}" in done.stderr, done.stderr


def test_an_entry_forged_with_its_rows_by_sql_is_set_aside_and_named(database):
    """The issue's attack on PostgreSQL: a budget's limit raised 5 -> 5000, an audit row
    saying so and its configuration entry queued, by SQL, described as MAGI's open code
    describes them, without MAGI's key: set aside, never placed or signed, and named."""
    subprocess.run([sys.executable, "-c", CONFIGURED], cwd=REPO, env=env_for(database), check=True)
    ((target, by, after),) = sql(
        database,
        "SELECT target, by_id, after FROM judgements_auditentry WHERE subject = 'budget' "
        "ORDER BY id DESC LIMIT 1",
    )
    raised = after | {"limit_usd": "5000.0000"}
    sql(database, "UPDATE judgements_budget SET limit_usd = 5000")
    ((row, at),) = sql(
        database,
        "INSERT INTO judgements_auditentry (subject, target, by_id, actor, at, before, after) "
        "VALUES ('budget', %s, %s, '', now(), %s, %s) RETURNING id, at",
        target, by, Jsonb(after), Jsonb(raised),
    )  # fmt: skip
    payload = canonical({
        "audit_entry": row, "subject": "budget", "target": target, "by": by, "actor": "",
        "at": timestamp(at), "before": after, "after": raised,
    }).decode()  # fmt: skip
    moment = datetime.now(UTC)
    digest = entry_leaf_hash("configuration", target, None, timestamp(moment), payload)
    ((forged,),) = sql(
        database,
        "INSERT INTO judgements_chainentry (kind, subject, judgement_id, at, payload, "
        "prev_sha256, leaf_hash, tag) VALUES ('configuration', %s, NULL, %s, %s, '', %s, %s) "
        "RETURNING id",
        target, moment, payload, digest, secrets.token_hex(32),
    )  # fmt: skip
    ((size,),) = sql(database, "SELECT size FROM judgements_logstate")
    place(database)
    assert sql(
        database, "SELECT seq, set_aside FROM judgements_chainentry WHERE id = %s", forged
    ) == [(None, "untagged")]
    assert sql(database, "SELECT size FROM judgements_logstate") == [(size,)]
    assert tampered(database) == (
        f"TAMPERED: log entry id {forged} (configuration of {target}) was queued without "
        "MAGI's key: its tag does not check; it is set aside, never placed or signed, and "
        "describes nothing (it was written into the database outside MAGI)"
    )


def stories(database: str) -> None:
    """Escalation stories of 1, 2 and 3 levels (kept, overridden), made as the engine
    makes them, in a worker process (tests/support/audit_history.py make_stories)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.audit_history", "stories", "w1"],
        cwd=REPO, env=env_for(database), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err


def test_escalated_stories_check_clean_and_a_level_made_to_keep_its_verdict_is_named(database):
    stories(database)
    done = audit_verify(database)
    assert done.returncode == 0, done.stdout + done.stderr
    ((first,),) = sql(
        database,
        "SELECT id FROM judgements_judgement WHERE escalated AND level = 1 ORDER BY id LIMIT 1",
    )
    sql(database, "UPDATE judgements_judgement SET escalated = false WHERE id = %s", first)
    done = audit_verify(database, "--all")
    assert done.returncode == 1
    assert f"judgement {first}: its receipt says 'approved' (in force 'judging')" in done.stderr


def test_magis_tables_refuse_an_id_below_1(database):
    stories(database)
    sql(
        database,
        "INSERT INTO judgements_apitoken (user_id, name, prefix, key_hash, created_at, "
        "revoked_at, last_used_at, team_id) SELECT id, 'ci', 'abcd', 'x', now(), NULL, NULL, "
        "NULL FROM auth_user LIMIT 1",
    )
    tables = ("judgement", "apitoken", "auditentry", "override", "chainentry", "receipt")
    for table in (f"judgements_{name}" for name in tables):
        for planted in (0, -1):
            with pytest.raises(psycopg.errors.CheckViolation, match="_id_from_one"):
                sql(database, f"UPDATE {table} SET id = %s WHERE id = (SELECT max(id) FROM "
                    f"{table})", planted)  # fmt: skip


@pytest.mark.parametrize("planted", [0, -1])
def test_a_superuser_with_an_id_below_1_is_named(database, planted):
    stories(database)
    sql(
        database,
        "INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name, "
        "email, is_staff, is_active, date_joined) VALUES (%s, 'x', true, 'root', '', '', '', "
        "true, true, now())",
        planted,
    )
    done = audit_verify(database, "--all")
    assert done.returncode == 1
    assert f"user {planted} has an id below 1, which no row MAGI makes has" in done.stderr


def in_magi(database: str, code: str) -> str:
    """`code` run in a process of MAGI's on `database`, after django.setup(): its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", "import django, json; django.setup()\n" + code],
        cwd=REPO, env=env_for(database), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def pack_of(database: str, judgement: int) -> str:
    """The judgement's evidence pack as the API serves it (outcome/results.py builds it
    the same way), as JSON."""
    return in_magi(
        database,
        "from judgements.audit import evidence\n"
        "from judgements.models import Judgement\n"
        f"print(json.dumps(evidence.pack(Judgement.objects.with_results().get(pk={judgement}))))",
    )


def client_verify(database: str, tmp_path, pack: str) -> subprocess.CompletedProcess[str]:
    """The installed `magi verify` on `pack`, with the keys `manage.py audit keys` prints."""
    keys = subprocess.run(
        [sys.executable, "manage.py", "audit", "keys"], cwd=REPO, env=env_for(database),
        capture_output=True, text=True, timeout=300, check=True,
    ).stdout  # fmt: skip
    (tmp_path / "keys.json").write_text(keys)
    (tmp_path / "pack.json").write_text(pack)
    return run_magi(
        "verify", str(tmp_path / "pack.json"), "--keys", str(tmp_path / "keys.json"), env={}
    )


def test_a_three_level_story_verifies_with_the_client_alone(database, tmp_path):
    stories(database)
    ((first,),) = sql(
        database, "SELECT id FROM judgements_judgement WHERE level = 1 AND content = 'Trip three.'"
    )
    done = client_verify(database, tmp_path, pack_of(database, first))
    assert done.returncode == 0, done.stderr
    assert "story: 3 levels, each checked; the verdict in force is level 3's" in done.stdout
    # One level left out of the story is refused.
    cut = json.loads(pack_of(database, first))
    cut["levels"].pop()
    done = client_verify(database, tmp_path, json.dumps(cut))
    assert done.returncode == 1, done.stdout


def test_a_pack_cut_short_of_its_override_is_refused_as_stale(database, tmp_path):
    """The attacker keeps the approval's pack as first served, and drops the override's
    entry from the newest one: both stale once the override is in the log."""
    made(database, judgements=2)
    ((judgement,),) = sql(
        database,
        "SELECT id FROM judgements_judgement WHERE id NOT IN "
        "(SELECT judgement_id FROM judgements_override) ORDER BY id LIMIT 1",
    )
    before = pack_of(database, judgement)
    assert client_verify(database, tmp_path, before).returncode == 0
    in_magi(
        database,
        "from django.contrib.auth.models import User\n"
        "from judgements.outcome import overrides\n"
        "from tests.support.audit_history import REVIEW_REASON, placed\n"
        "staff = User.objects.get(username='ops-w1')\n"
        f"overrides.override({judgement}, staff, 'reject', REVIEW_REASON)\n"
        "placed()",
    )
    after = json.loads(pack_of(database, judgement))
    assert client_verify(database, tmp_path, json.dumps(after)).returncode == 0
    cut = copy.deepcopy(after)
    cut["entries"].pop()
    cut.update(verdict="approved", review=None, receipt=json.loads(before)["receipt"])
    done = client_verify(database, tmp_path, json.dumps(cut))
    assert done.returncode == 1, done.stdout
    assert "stale" in done.stderr, done.stderr
