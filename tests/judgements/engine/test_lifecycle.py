"""Every status change, from the states it may start in and no other, with the lease
guards each one relies on."""

import asyncio
import logging
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import timezone

from judgements.engine import lease, lifecycle
from judgements.engine.lease import Lease, LeaseLost
from judgements.evaluations import suites
from judgements.infrastructure.events import Event, group_name_for, publish
from judgements.models import Agent, Judgement, RoundDecision, Status
from tests.support.evaluations import SUITE, start
from tests.support.states import bring

pytestmark = pytest.mark.django_db


def held(judgement: Judgement, owner: str, *, expires_in: float = 30, started_ago: float = 0):
    now = timezone.now()
    bring(
        Judgement.objects.filter(pk=judgement.pk),
        Status.JUDGING,
        lease_owner=owner,
        lease_expires_at=now + timedelta(seconds=expires_in),
        started_at=now - timedelta(seconds=started_ago),
    )
    judgement.refresh_from_db()
    return judgement


def claim_one(judgement: Judgement, worker_id: str) -> list[int]:
    return lifecycle.claim(worker_id, Judgement.objects.filter(pk=judgement.pk), 1)


def test_it_claims_a_queued_judgement_and_logs_it(make_judgement, caplog):
    judgement = make_judgement()
    with caplog.at_level(logging.INFO, logger="judgements.engine.lifecycle"):
        assert claim_one(judgement, "w1") == [judgement.pk]
    judgement.refresh_from_db()
    assert (judgement.status, judgement.lease_owner) == (Status.JUDGING, "w1")
    assert judgement.lease_expires_at > timezone.now() and judgement.started_at
    assert f"judgement {judgement.pk}: idle -> judging by worker w1 in round 1" in caplog.text


def test_a_second_worker_cannot_claim_a_held_judgement(make_judgement):
    judgement = make_judgement()
    assert claim_one(judgement, "w1") == [judgement.pk]
    assert claim_one(judgement, "w2") == []
    judgement.refresh_from_db()
    assert judgement.lease_owner == "w1"


def test_it_claims_a_judgement_whose_lease_expired_and_keeps_its_start(make_judgement):
    judgement = held(make_judgement(), "dead", expires_in=-1, started_ago=5)
    assert claim_one(judgement, "w2") == [judgement.pk]
    resumed = Judgement.objects.get(pk=judgement.pk)
    assert resumed.lease_owner == "w2"
    assert resumed.started_at == judgement.started_at  # the deadline counts from the first


@pytest.mark.parametrize("status", [Status.APPROVED, Status.REJECTED, Status.ERROR])
def test_it_never_claims_a_finished_judgement(make_judgement, status):
    judgement = make_judgement()
    bring(Judgement.objects.filter(pk=judgement.pk), status)
    assert claim_one(judgement, "w1") == []


def test_it_claims_the_oldest_first_up_to_the_limit(make_judgement):
    judgements = [make_judgement() for _ in range(3)]
    assert lifecycle.claim("w1", Judgement.objects.all(), 2) == [j.pk for j in judgements[:2]]
    assert lifecycle.claim("w1", Judgement.objects.all(), 0) == []


def voted(judgement: Judgement, votes: list[list[str]]) -> dict[Agent, list[str]]:
    """Each agent's three votes, stored as the engine stores them, by position."""
    agents = list(judgement.agents.order_by("position"))
    for agent, agent_votes in zip(agents, votes, strict=True):
        for round_number, decision in enumerate(agent_votes, start=1):
            RoundDecision.objects.create(
                agent=agent, round=round_number, decision=decision, reason="r"
            )
    return dict(zip(agents, votes, strict=True))


def votes_of(judgement: Judgement, decisions: list[str]) -> dict[Agent, list[str]]:
    """Each agent the same decision in every round, one decision per agent."""
    return voted(judgement, [[decision] * 3 for decision in decisions])


def test_a_renewal_after_the_end_says_so(make_judgement):
    judgement = held(make_judgement(), "w1")
    lifecycle.finish(judgement.pk, "w1", votes_of(judgement, ["approve"] * 3))
    assert lease.renew(judgement.pk, "w1") is Lease.ENDED


def test_only_the_holder_finishes(make_judgement, caplog):
    judgement = held(make_judgement(), "w1")
    rejecting = votes_of(judgement, ["approve", "reject", "reject"])
    with pytest.raises(LeaseLost):
        lifecycle.finish(judgement.pk, "w2", rejecting)
    with caplog.at_level(logging.INFO, logger="judgements.engine.lifecycle"):
        assert lifecycle.finish(judgement.pk, "w1", rejecting) is Status.REJECTED
    judgement.refresh_from_db()
    assert (judgement.status, judgement.lease_owner, judgement.lease_expires_at) == (
        Status.REJECTED,
        "",
        None,
    )
    assert judgement.finished_at
    assert "judging -> rejected by worker w1 in round 3" in caplog.text
    with pytest.raises(LeaseLost):  # only once
        lifecycle.finish(judgement.pk, "w1", rejecting)


def test_finishing_stores_each_agents_score_and_the_rule_s_verdict(make_judgement):
    """Round weights 1, 4 and 5 tenths; an agent approves at 5 tenths; two of three carry."""
    judgement = held(make_judgement(), "w1")
    votes = voted(
        judgement,
        [
            ["reject", "reject", "approve"],  # 5 tenths: approves
            ["approve", "approve", "reject"],  # 5 tenths: approves
            ["approve", "reject", "reject"],  # 1 tenth: rejects
        ],
    )
    assert lifecycle.finish(judgement.pk, "w1", votes) is Status.APPROVED
    finals = judgement.agents.order_by("position").values_list(
        "final_score_tenths", "final_decision"
    )
    assert list(finals) == [(5, "approve"), (5, "approve"), (1, "reject")]


def test_only_the_holder_fails_a_judgement_and_decisions_stay(make_judgement):
    judgement = held(make_judgement(), "w1")
    agent = judgement.agents.first()
    RoundDecision.objects.create(agent=agent, round=1, decision="approve", reason="fine")
    assert not lifecycle.fail(judgement.pk, "boom", worker_id="w2")
    assert lifecycle.fail(judgement.pk, "boom", worker_id="w1", agent_id=agent.pk, round_number=1)
    judgement.refresh_from_db()
    assert (judgement.status, judgement.error_message, judgement.error_agent_id) == (
        Status.ERROR,
        "boom",
        agent.pk,
    )
    assert RoundDecision.objects.filter(agent=agent).count() == 1
    assert not lifecycle.fail(judgement.pk, "again", worker_id="w1")
    assert Judgement.objects.get(pk=judgement.pk).error_message == "boom"


def test_an_idle_judgement_is_not_failed(make_judgement):
    judgement = make_judgement()
    assert not lifecycle.fail(judgement.pk, "boom", worker_id="")
    assert Judgement.objects.get(pk=judgement.pk).status == Status.IDLE


def test_it_expires_a_judgement_nobody_holds_past_its_deadline(make_judgement, settings):
    settings.MAGI_JUDGEMENT_TIMEOUT = 60
    judgement = held(make_judgement(), "dead-worker", expires_in=-1, started_ago=61)
    assert lifecycle.expire_overdue("sweeper") == [
        (
            judgement.pk,
            "Judgement did not finish within 60 s of its start (given up in round 1): "
            "worker dead-worker stopped renewing its lease",
        )
    ]
    judgement.refresh_from_db()
    assert (judgement.status, judgement.error_round, judgement.lease_owner) == (
        Status.ERROR,
        1,
        "",
    )
    assert claim_one(judgement, "w2") == []


def test_it_neither_expires_nor_resumes_within_the_deadline(make_judgement, settings):
    settings.MAGI_JUDGEMENT_TIMEOUT = 60
    live = held(make_judgement(), "w1", expires_in=30, started_ago=61)
    young = held(make_judgement(), "dead", expires_in=-1, started_ago=59)
    assert lifecycle.expire_overdue("sweeper") == []
    assert Judgement.objects.get(pk=live.pk).status == Status.JUDGING
    # A held one past its deadline is its holder's to end; an expired young one resumes.
    assert claim_one(live, "w2") == []
    assert claim_one(young, "w2") == [young.pk]


def test_a_past_deadline_judgement_is_not_resumed(make_judgement, settings):
    settings.MAGI_JUDGEMENT_TIMEOUT = 60
    judgement = held(make_judgement(), "dead", expires_in=-1, started_ago=61)
    assert claim_one(judgement, "w2") == []


def test_the_round_comes_from_the_stored_decisions(make_judgement):
    judgement = make_judgement()
    agents = list(judgement.agents.all())
    assert lifecycle.round_of(judgement.pk) == 1
    for agent in agents:
        RoundDecision.objects.create(agent=agent, round=1, decision="approve", reason="r")
    RoundDecision.objects.create(agent=agents[0], round=2, decision="approve", reason="r")
    assert lifecycle.round_of(judgement.pk) == 2


# --- each transition announces itself, once it commits --------------------------------


def follow(judgement_id: int) -> str:
    """A channel in the judgement's group, as a live page's websocket joins it."""
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_name_for(judgement_id), channel)
    return channel


async def received(channel: str) -> dict:
    # Bounded: an event never published fails the test instead of hanging it.
    return await asyncio.wait_for(get_channel_layer().receive(channel), 10)


def next_event(channel: str) -> dict:
    event = async_to_sync(received)(channel)
    return {key: value for key, value in event.items() if key not in ("type", "judgement_id")}


@pytest.mark.django_db(transaction=True)
def test_a_claim_announces_the_start_once_it_commits(make_judgement):
    judgement = make_judgement()
    channel = follow(judgement.pk)
    assert claim_one(judgement, "w1") == [judgement.pk]
    assert next_event(channel) == {"kind": Event.JUDGING_STARTED}


@pytest.mark.django_db(transaction=True)
def test_finishing_publishes_the_verdict_once_it_commits(make_judgement):
    judgement = held(make_judgement(), "w1")
    channel = follow(judgement.pk)
    lifecycle.finish(judgement.pk, "w1", votes_of(judgement, ["approve"] * 3))
    assert next_event(channel) == {"kind": Event.FINISHED, "status": "approved"}


@pytest.mark.django_db(transaction=True)
def test_failing_publishes_the_cause_and_a_rolled_back_failure_publishes_nothing(
    make_judgement,
):
    judgement = held(make_judgement(), "w1")
    channel = follow(judgement.pk)
    with pytest.raises(RuntimeError), transaction.atomic():
        assert lifecycle.fail(judgement.pk, "undone", worker_id="w1")
        raise RuntimeError("the caller's transaction rolls back")
    # Published after the rollback: had "undone" been announced, it would come first.
    async_to_sync(publish)(judgement.pk, Event.REVIEWED)
    assert next_event(channel) == {"kind": Event.REVIEWED}
    assert lifecycle.fail(judgement.pk, "boom", worker_id="w1")
    assert next_event(channel) == {"kind": Event.FAILED, "message": "boom"}


@pytest.mark.django_db(transaction=True)
def test_expiring_publishes_why_for_each_judgement(make_judgement, settings):
    settings.MAGI_JUDGEMENT_TIMEOUT = 60
    first = held(make_judgement(), "dead", expires_in=-1, started_ago=61)
    second = held(make_judgement(), "", expires_in=-1, started_ago=61)
    channels = {first.pk: follow(first.pk), second.pk: follow(second.pk)}
    expired = dict(lifecycle.expire_overdue("sweeper"))
    assert set(expired) == {first.pk, second.pk}
    for pk, channel in channels.items():
        assert next_event(channel) == {"kind": Event.FAILED, "message": expired[pk]}


@pytest.mark.django_db(transaction=True)
def test_cancelling_a_run_tells_each_of_its_judgements_pages(user, fake_llm):
    suite = suites.import_suite(name="Gate cases", description="", owner=user, data=SUITE)
    run = start(suite, user)
    ids = list(run.judgements.values_list("pk", flat=True))
    channels = [follow(pk) for pk in ids]
    assert sorted(lifecycle.cancel_run(run, user)) == sorted(ids)
    assert [next_event(channel) for channel in channels] == [{"kind": Event.FAILED}] * len(ids)
