"""A database with the hash chain of before issue 55 migrates: its entries become the
log's first leaves in the form they were hashed in then, at their places, and the log,
once its sequencer has signed a checkpoint, checks clean (migration 0029); what is queued
at the upgrade (0029's genesis) is tagged with the key then current, and placed (0030)."""

import hashlib
import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from judgements.audit import keys, verification
from judgements.models import ChainEntry, LogState
from magi_client.canonical import canonical, timestamp
from tests.support.audit_history import placed

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("judgements", "0028_house_states")]


@pytest.fixture(autouse=True)
def migrated_to_the_latest_after():
    """The database back at the latest migrations once the test has moved it: the tests
    that run after it in the same process need every table (Slack's came after 0030)."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_the_old_chain_is_carried_into_the_log_and_checks_clean():
    keys.signing_key()  # the old release's, which signed its chain's head
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    audit_row = old.get_model("judgements", "AuditEntry").objects.create(
        subject="team", target="team 1 (t)", before=[], after=["ada"]
    )
    prev = "0" * 64
    payloads = [
        ("genesis", "chain", {"judgements_before": 0}),
        ("configuration", "team 1 (t)", {
            "audit_entry": audit_row.pk, "subject": "team", "target": "team 1 (t)", "by": None,
            "actor": "", "at": timestamp(audit_row.at), "before": [], "after": ["ada"],
        }),
    ]  # fmt: skip
    for seq, (kind, subject, payload) in enumerate(payloads, 1):
        at = timezone.now()
        body = {"seq": seq, "kind": kind, "subject": subject, "at": timestamp(at),
                "payload": payload, "prev_sha256": prev}  # fmt: skip
        digest = hashlib.sha256(canonical(body)).hexdigest()
        old.get_model("judgements", "ChainEntry").objects.create(
            seq=seq, kind=kind, subject=subject, at=at, payload=canonical(payload).decode(),
            prev_sha256=prev, sha256=digest,
        )  # fmt: skip
        prev = digest
    # Up to the latest migrations, 0029 and 0030 among them: what the log is checked
    # against today needs every table.
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    carried = list(ChainEntry.objects.order_by("id"))
    assert [(e.seq, e.kind) for e in carried] == [
        (0, "genesis"),
        (1, "configuration"),
        (None, "genesis"),
    ]
    assert LogState.objects.get().size == 2
    assert [bool(e.tag) for e in carried] == [False, False, True]
    assert placed() == 1
    report = verification.verify(verification.trust_beside_the_data())
    assert report.clean, [str(p) for p in report.problems]
    assert json.loads(carried[2].payload)["before"]["audit_entry"] == audit_row.pk
