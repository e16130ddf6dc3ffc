"""The audit log on a real PostgreSQL: workers in separate processes appending at once,
with sequencers in separate processes placing their entries, make one log that `manage.py
audit verify` finds clean, and each way of changing the history directly in the database
is named (one way per test), as on SQLite (tests/judgements/audit/test_verification.py,
tests/judgements/configuration/test_live_state.py for the live configuration).

Each history a test tampers with is built once per module into a database closed to
connections (a template: tests/support/services.py Postgres.template), checked clean there
once, and each test tampers with its own fresh copy (copied_database): building one takes
a worker process, a sequencer process and a check, copying it a second or less."""

import copy
import json
import secrets
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb

from magi_client.canonical import canonical, entry_leaf_hash, timestamp
from tests.support.magi_client import run_magi
from tests.support.services import REPO, TEMPLATE_DB, base_env, copied_database

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


def checked_clean(build: Callable[[str], None]) -> Callable[[str], None]:
    """`build`, then `manage.py audit verify` finding what it built clean: the evidence,
    once for every test that tampers with a copy of it, that what `audit verify` names
    there is that test's tampering and nothing else."""

    def built(database: str) -> None:
        build(database)
        done = audit_verify(database)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "clean: " in done.stdout, done.stdout

    return built


@pytest.fixture(scope="module")
def history_template(postgres):
    """`made(database, 12)`, built once."""
    with postgres.template(checked_clean(made)) as name:
        yield name


@pytest.fixture
def history_db(postgres, django_db_blocker, history_template):
    """This test's own copy of `made(database, 12)`: its URL."""
    with copied_database(postgres, django_db_blocker, history_template) as url:
        yield url


@pytest.fixture(scope="module")
def server_keys(postgres, tmp_path_factory) -> Path:
    """The keys `manage.py audit keys` prints, as a file for --keys: this server's public
    keys, which come from its settings (the same for every database here), so printed
    once."""
    keys = subprocess.run(
        [sys.executable, "manage.py", "audit", "keys"], cwd=REPO,
        env=env_for(postgres.url(TEMPLATE_DB)), capture_output=True, text=True, timeout=300,
        check=True,
    ).stdout  # fmt: skip
    path = tmp_path_factory.mktemp("keys") / "keys.json"
    path.write_text(keys)
    return path


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


def test_an_edited_reason_is_named(history_db):
    judgement = judgement_ids(history_db)[3]
    sql(
        history_db,
        "UPDATE judgements_rounddecision d SET reason = 'It is safe.' FROM judgements_agent a "
        "WHERE d.agent_id = a.id AND a.judgement_id = %s AND a.position = 1 AND d.round = 2",
        judgement,
    )
    assert tampered(history_db) == (
        f"TAMPERED: entry {seq_of(history_db, 'decision', judgement) + 3}: decision of judgement "
        f"{judgement}, agent 1, round 2: the reason text was edited (its SHA-256 differs)"
    )


def test_a_status_flip_is_named(history_db):
    judgement = judgement_ids(history_db)[2]
    sql(history_db, "UPDATE judgements_judgement SET status = 'rejected' WHERE id = %s", judgement)
    assert tampered(history_db) == (
        f"TAMPERED: entry {seq_of(history_db, 'verdict', judgement)}: verdict of judgement "
        f"{judgement}: status is 'rejected' in the database, 'approved' in the chain"
    )


def test_a_deleted_judgement_is_named(history_db):
    judgement = judgement_ids(history_db)[4]
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
        sql(history_db, statement, judgement)
    assert tampered(history_db) == (
        f"TAMPERED: entry {seq_of(history_db, 'submitted', judgement)}: submitted of judgement "
        f"{judgement}: the judgement is gone from the database"
    )


def test_a_deleted_entry_is_named(history_db):
    seq = seq_of(history_db, "verdict", judgement_ids(history_db)[1])
    sql(history_db, "DELETE FROM judgements_chainentry WHERE seq = %s", seq)
    assert tampered(history_db) == (
        f"TAMPERED: entry {seq}: missing: the log jumps from place {seq - 1} to place "
        f"{seq + 1} (entries were deleted)"
    )


@dataclass
class Rollback:
    """The shared history rolled back: its last judgement's rows and every entry from its
    first on deleted, the tree rebuilt and signed again from what is left. What it cut:
    the first place cut, and the log's newest checkpoint before (its size and note)."""

    first: int = 0
    size: int = 0
    note: str = ""

    def __call__(self, database: str) -> None:
        ((self.size, self.note),) = sql(
            database, "SELECT size, note FROM judgements_checkpoint ORDER BY size DESC LIMIT 1"
        )
        last = judgement_ids(database)[-1]
        ((self.first,),) = sql(
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
        sql(database, "DELETE FROM judgements_chainentry WHERE seq >= %s", self.first)
        sql(database, "DELETE FROM judgements_checkpoint")
        sql(database, "DELETE FROM judgements_lognode")
        sql(database, "UPDATE judgements_chainentry SET seq = NULL")
        sql(database, "UPDATE judgements_logstate SET size = 0, root_hash = ''")
        place(database)


@pytest.fixture(scope="module")
def rollback_template(postgres, history_template):
    """The shared history rolled back (Rollback), once: its name, and what was cut."""
    rollback = Rollback()
    with postgres.template(rollback, source=history_template) as name:
        yield name, rollback


@pytest.fixture
def rolled_back(postgres, django_db_blocker, rollback_template):
    """This test's own copy of the rolled-back history: its URL, and what was cut."""
    name, rollback = rollback_template
    with copied_database(postgres, django_db_blocker, name) as url:
        yield url, rollback


def test_a_truncated_tail_with_its_head_reset_is_named_against_a_kept_checkpoint(
    rolled_back, tmp_path
):
    database, cut = rolled_back
    kept = tmp_path / "checkpoint.txt"
    kept.write_text(cut.note)
    assert audit_verify(database).returncode == 0
    assert tampered(database, "--checkpoint", str(kept)).startswith(
        f"TAMPERED: entry {cut.first}: the log has {cut.first} entries but the kept checkpoint "
        f"has {cut.size}"
    )


def test_a_rollback_is_named_against_the_checkpoint_directory_alone(rolled_back, tmp_path):
    """No witness and no --checkpoint: the server's own append-only directory holds the
    newest checkpoint signed before the rollback, as the sequencer wrote it."""
    database, cut = rolled_back
    (tmp_path / f"checkpoint-{cut.size:012d}.txt").write_text(cut.note)
    done = subprocess.run(
        [sys.executable, "manage.py", "audit", "verify"], cwd=REPO, capture_output=True,
        text=True, timeout=300,
        env=env_for(database) | {"MAGI_AUDIT_CHECKPOINT_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert "kept checkpoint: " in done.stdout
    assert done.stderr.startswith(
        f"TAMPERED: entry {cut.first}: the log has {cut.first} entries but the kept checkpoint "
        f"has {cut.size}"
    )


def test_a_backdated_override_is_named(history_db):
    judgement = judgement_ids(history_db)[1]  # approved by its panel, not overridden
    ((user,),) = sql(history_db, "SELECT id FROM auth_user ORDER BY id LIMIT 1")
    sql(
        history_db,
        "INSERT INTO judgements_override (judgement_id, by_id, at, panel_status, decision, reason) "
        "VALUES (%s, %s, '2001-01-01', 'approved', 'reject', 'backdated')",
        judgement, user,
    )  # fmt: skip
    done = audit_verify(history_db, "--all")
    assert done.returncode == 1
    assert f"no override entry for judgement {judgement}" in done.stderr


def test_an_edited_reply_is_named(history_db):
    judgement = judgement_ids(history_db)[3]
    sql(
        history_db,
        "UPDATE judgements_llmattempt t SET response_text = 'edited' FROM judgements_agent a "
        "WHERE t.agent_id = a.id AND a.judgement_id = %s AND a.position = 3 AND t.round = 1",
        judgement,
    )
    assert tampered(history_db).endswith(
        f"decision of judgement {judgement}, agent 3, round 1: the call (its prompt, reply, model "
        "or error) was edited, or is gone"
    )


def test_an_edited_budget_is_named(history_db):
    code = (
        "import django; django.setup()\n"
        "from django.contrib.auth import get_user_model\n"
        "from judgements.configuration import budget_config\n"
        "staff = get_user_model().objects.get(username='ops-w1')\n"
        "budget_config.create(staff, {'team': None, 'user': 'maker-w1', 'panel': None,\n"
        "    'panel_team': None, 'period': 'day', 'limit_usd': 5, 'limit_tokens': None})\n"
        "from tests.support.audit_history import placed; placed()\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env_for(history_db), check=True)
    assert audit_verify(history_db).returncode == 0
    sql(history_db, "UPDATE judgements_budget SET limit_usd = 5000")
    done = audit_verify(history_db, "--all")
    assert done.returncode == 1 and "differs from its last audited state" in done.stderr


def test_a_key_added_to_the_retired_keys_is_not_trusted(history_db, server_keys):
    """A checkpoint re-signed with a key of the attacker's, whose public half they added to
    the retired keys beside the data: refused with the keys given."""
    ((size, note),) = sql(
        history_db, "SELECT size, note FROM judgements_checkpoint ORDER BY size DESC LIMIT 1"
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
    sql(history_db, "UPDATE judgements_checkpoint SET note = %s WHERE size = %s", forged, size)
    assert tampered(history_db, "--keys", str(server_keys)) == (
        f"TAMPERED: checkpoint at size {size}: the checkpoint is not signed by any of the keys "
        "given"
    )


def test_two_swapped_entries_are_named(history_db):
    judgement = judgement_ids(history_db)[2]
    first = seq_of(history_db, "submitted", judgement)
    sql(history_db, "UPDATE judgements_chainentry SET seq = 999999999 WHERE seq = %s", first)
    sql(history_db, "UPDATE judgements_chainentry SET seq = %s WHERE seq = %s", first, first + 1)
    sql(history_db, "UPDATE judgements_chainentry SET seq = %s WHERE seq = 999999999", first + 1)
    assert tampered(history_db).startswith(
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


def configured(database: str) -> None:
    """A team, a token, a budget and a suite made the audited way (CONFIGURED)."""
    subprocess.run([sys.executable, "-c", CONFIGURED], cwd=REPO, env=env_for(database), check=True)


@pytest.fixture(scope="module")
def configured_template(postgres):
    with postgres.template(checked_clean(configured)) as name:
        yield name


@pytest.fixture
def configured_db(postgres, django_db_blocker, configured_template):
    """This test's own copy of CONFIGURED's configuration: its URL."""
    with copied_database(postgres, django_db_blocker, configured_template) as url:
        yield url


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
def test_live_configuration_changed_behind_magis_back_is_named(
    configured_db, table, statement, named
):
    """Issue 55: a token's key hash, a suite's cases, a budget's deletion and a team's
    reviewers of every panel, each compared with its last audit row."""
    ((pk,),) = sql(configured_db, f"SELECT min(id) FROM judgements_{table}")
    sql(configured_db, statement)
    done = audit_verify(configured_db, "--all")
    assert done.returncode == 1
    assert f"TAMPERED: {named.format(pk=pk)}" in done.stderr, done.stderr


def test_a_token_added_with_a_known_key_is_named(configured_db):
    ((pk,),) = sql(
        configured_db,
        "INSERT INTO judgements_apitoken (user_id, name, prefix, key_hash, created_at) "
        "SELECT id, 'ci', 'magi_kno', md5('known') || md5('key'), now() FROM auth_user "
        "WHERE username = 'ops' RETURNING id",
    )
    assert tampered(configured_db) == (
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
def test_rows_added_and_users_changed_behind_magis_back_are_named(configured_db, statement, named):
    """Issue 55: a user or budget inserted with no audit row, and a user's password hash
    or permissions changed, each named."""
    ((pk,),) = sql(configured_db, statement)
    done = audit_verify(configured_db, "--all")
    assert done.returncode == 1
    assert f"TAMPERED: {named.format(pk=pk)}" in done.stderr, done.stderr


def test_an_entry_forged_with_its_rows_by_sql_is_set_aside_and_named(configured_db):
    """The issue's attack on PostgreSQL: a budget's limit raised 5 -> 5000, an audit row
    saying so and its configuration entry queued, by SQL, described as MAGI's open code
    describes them, without MAGI's key: set aside, never placed or signed, and named."""
    ((target, by, after),) = sql(
        configured_db,
        "SELECT target, by_id, after FROM judgements_auditentry WHERE subject = 'budget' "
        "ORDER BY id DESC LIMIT 1",
    )
    raised = after | {"limit_usd": "5000.0000"}
    sql(configured_db, "UPDATE judgements_budget SET limit_usd = 5000")
    ((row, at),) = sql(
        configured_db,
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
        configured_db,
        "INSERT INTO judgements_chainentry (kind, subject, judgement_id, at, payload, "
        "prev_sha256, leaf_hash, tag) VALUES ('configuration', %s, NULL, %s, %s, '', %s, %s) "
        "RETURNING id",
        target, moment, payload, digest, secrets.token_hex(32),
    )  # fmt: skip
    ((size,),) = sql(configured_db, "SELECT size FROM judgements_logstate")
    place(configured_db)
    assert sql(
        configured_db, "SELECT seq, set_aside FROM judgements_chainentry WHERE id = %s", forged
    ) == [(None, "untagged")]
    assert sql(configured_db, "SELECT size FROM judgements_logstate") == [(size,)]
    assert tampered(configured_db) == (
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


@pytest.fixture(scope="module")
def stories_template(postgres):
    with postgres.template(checked_clean(stories)) as name:
        yield name


@pytest.fixture
def stories_db(postgres, django_db_blocker, stories_template):
    """This test's own copy of the escalation stories (stories): its URL."""
    with copied_database(postgres, django_db_blocker, stories_template) as url:
        yield url


def test_escalated_stories_check_clean_and_a_level_made_to_keep_its_verdict_is_named(stories_db):
    ((first,),) = sql(
        stories_db,
        "SELECT id FROM judgements_judgement WHERE escalated AND level = 1 ORDER BY id LIMIT 1",
    )
    sql(stories_db, "UPDATE judgements_judgement SET escalated = false WHERE id = %s", first)
    done = audit_verify(stories_db, "--all")
    assert done.returncode == 1
    assert f"judgement {first}: its receipt says 'approved' (in force 'judging')" in done.stderr


def test_magis_tables_refuse_an_id_below_1(stories_db):
    sql(
        stories_db,
        "INSERT INTO judgements_apitoken (user_id, name, prefix, key_hash, created_at, "
        "revoked_at, last_used_at, team_id) SELECT id, 'ci', 'abcd', 'x', now(), NULL, NULL, "
        "NULL FROM auth_user LIMIT 1",
    )
    tables = ("judgement", "apitoken", "auditentry", "override", "chainentry", "receipt")
    for table in (f"judgements_{name}" for name in tables):
        for planted in (0, -1):
            with pytest.raises(psycopg.errors.CheckViolation, match="_id_from_one"):
                sql(stories_db, f"UPDATE {table} SET id = %s WHERE id = (SELECT max(id) FROM "
                    f"{table})", planted)  # fmt: skip


@pytest.mark.parametrize("planted", [0, -1])
def test_a_superuser_with_an_id_below_1_is_named(stories_db, planted):
    sql(
        stories_db,
        "INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name, "
        "email, is_staff, is_active, date_joined) VALUES (%s, 'x', true, 'root', '', '', '', "
        "true, true, now())",
        planted,
    )
    done = audit_verify(stories_db, "--all")
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


def client_verify(keys: Path, tmp_path: Path, pack: str) -> subprocess.CompletedProcess[str]:
    """The installed `magi verify` on `pack`, with the keys `manage.py audit keys` prints
    (server_keys)."""
    (tmp_path / "pack.json").write_text(pack)
    return run_magi("verify", str(tmp_path / "pack.json"), "--keys", str(keys), env={})


def test_a_three_level_story_verifies_with_the_client_alone(stories_db, server_keys, tmp_path):
    ((first,),) = sql(
        stories_db,
        "SELECT id FROM judgements_judgement WHERE level = 1 AND content = 'Trip three.'",
    )
    pack = pack_of(stories_db, first)
    done = client_verify(server_keys, tmp_path, pack)
    assert done.returncode == 0, done.stderr
    assert "story: 3 levels, each checked; the verdict in force is level 3's" in done.stdout
    # One level left out of the story is refused.
    cut = json.loads(pack)
    cut["levels"].pop()
    done = client_verify(server_keys, tmp_path, json.dumps(cut))
    assert done.returncode == 1, done.stdout


def test_a_pack_cut_short_of_its_override_is_refused_as_stale(history_db, server_keys, tmp_path):
    """The attacker keeps the approval's pack as first served, and drops the override's
    entry from the newest one: both stale once the override is in the log."""
    ((judgement,),) = sql(
        history_db,
        "SELECT id FROM judgements_judgement WHERE id NOT IN "
        "(SELECT judgement_id FROM judgements_override) ORDER BY id LIMIT 1",
    )
    before = pack_of(history_db, judgement)
    assert client_verify(server_keys, tmp_path, before).returncode == 0
    in_magi(
        history_db,
        "from django.contrib.auth.models import User\n"
        "from judgements.outcome import overrides\n"
        "from tests.support.audit_history import REVIEW_REASON, placed\n"
        "staff = User.objects.get(username='ops-w1')\n"
        f"overrides.override({judgement}, staff, 'reject', REVIEW_REASON)\n"
        "placed()",
    )
    after = json.loads(pack_of(history_db, judgement))
    assert client_verify(server_keys, tmp_path, json.dumps(after)).returncode == 0
    cut = copy.deepcopy(after)
    cut["entries"].pop()
    cut.update(verdict="approved", review=None, receipt=json.loads(before)["receipt"])
    done = client_verify(server_keys, tmp_path, json.dumps(cut))
    assert done.returncode == 1, done.stdout
    assert "stale" in done.stderr, done.stderr
