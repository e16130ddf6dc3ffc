"""Appending to the audit chain: each entry names the one before, the first append makes
the genesis entry, appends from several threads at once make one chain, and an append
never changes the row it describes (judgements/audit/chain.py). The same on PostgreSQL
with processes: tests/durability/test_audit_chain_postgres.py."""

import threading

import pytest
from django.db import connection, transaction

from judgements.audit import chain, record, verification
from judgements.configuration import teams
from judgements.models import ChainEntry, ChainHead, EntryKind, Judgement, Team
from magi_client.canonical import GENESIS_PREV, entry_sha256, timestamp

pytestmark = pytest.mark.django_db(transaction=True)


def body_of(entry: ChainEntry) -> dict:
    import json

    return {
        "seq": entry.seq, "kind": entry.kind, "subject": entry.subject,
        "at": timestamp(entry.at), "payload": json.loads(entry.payload),
        "prev_sha256": entry.prev_sha256,
    }  # fmt: skip


def test_the_first_append_starts_the_chain_with_its_genesis(make_judgement):
    before = make_judgement()
    ChainEntry.objects.all().delete()
    ChainHead.objects.all().delete()
    with transaction.atomic():
        chain.append(EntryKind.CONFIGURATION, "team 1", {"audit_entry": 1})
    genesis, first = ChainEntry.objects.order_by("seq")
    assert (genesis.seq, genesis.kind, genesis.prev_sha256) == (1, "genesis", GENESIS_PREV)
    assert genesis.payload == f'{{"judgements_before":{before.pk}}}'
    assert (first.seq, first.prev_sha256) == (2, genesis.sha256)
    assert first.sha256 == entry_sha256(body_of(first))
    assert ChainHead.objects.get().seq == 2


def test_an_entry_rolled_back_with_its_change_leaves_no_trace(make_judgement):
    make_judgement()
    head = ChainHead.objects.get().seq
    with pytest.raises(RuntimeError), transaction.atomic():
        chain.append(EntryKind.CONFIGURATION, "team 1", {"audit_entry": 1})
        raise RuntimeError("the change failed")
    assert ChainHead.objects.get().seq == head == ChainEntry.objects.count()


def test_threads_appending_at_once_make_one_chain(make_judgement, django_user_model):
    """Four threads, each changing its own team's members 25 times: 100 audited changes."""
    make_judgement()
    start = ChainHead.objects.get().seq
    people = [django_user_model.objects.create_user(f"member{n}") for n in range(2)]
    teams_made = [Team.objects.create(name=f"team {n}") for n in range(4)]

    def change_many(team: Team) -> None:
        try:
            for number in range(25):
                teams.set_members(team, people[: 1 + number % 2], None)
        finally:
            connection.close()

    threads = [threading.Thread(target=change_many, args=(team,)) for team in teams_made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seqs = list(ChainEntry.objects.values_list("seq", flat=True))
    assert seqs == list(range(1, start + 101))
    report = verification.verify()
    assert report.clean, [str(p) for p in report.problems]


def test_an_append_only_reads_the_rows_it_describes(fake_llm, settings):
    from tests.support.audit_history import judge_one

    settings.MAGI_RATE_LIMIT_PER_USER = 0
    judgement = judge_one("w1", None, "Japan next week.")
    rows = Judgement.objects.filter(pk=judgement)
    before = rows.values().get()
    with transaction.atomic():
        record.verdict(judgement)
    assert rows.values().get() == before
    verdicts = ChainEntry.objects.filter(judgement_id=judgement, kind="verdict")
    first, again = verdicts.values_list("payload", flat=True)
    assert first == again
