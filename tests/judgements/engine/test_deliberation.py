"""The deliberation through the real SDK and the suite's fake LLM server: rounds, votes,
storage, events and failures. Events are ordered with the fake server's gate, never with
delays."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from judgements.infrastructure.events import Event, group_name_for
from judgements.models import Agent, Judgement, LLMAttempt, RoundDecision, Status

pytestmark = pytest.mark.django_db(transaction=True)


@sync_to_async
def reload(judgement_id: int) -> Judgement:
    return Judgement.objects.prefetch_related("agents__decisions").get(pk=judgement_id)


@sync_to_async
def rows(judgement_id: int) -> list[tuple[str, int, str]]:
    return list(
        RoundDecision.objects.filter(agent__judgement_id=judgement_id)
        .order_by("agent__position", "round")
        .values_list("agent__name", "round", "decision")
    )


class Follower:
    """The judgement's events, as a live page receives them."""

    def __init__(self, judgement: Judgement) -> None:
        self.judgement = judgement
        self.decided: set[tuple[str, int]] = set()

    async def start(self) -> "Follower":
        self.layer = get_channel_layer()
        self.channel = await self.layer.new_channel()
        await self.layer.group_add(group_name_for(self.judgement.pk), self.channel)
        self.names = {a.pk: a.name async for a in self.judgement.agents.all()}
        return self

    async def stored(self, name: str, round_number: int) -> None:
        """Wait for the event saying the agent's decision for the round is stored."""
        async with asyncio.timeout(10):
            while (name, round_number) not in self.decided:
                event = await self.layer.receive(self.channel)
                if event["kind"] == Event.DECISION_STORED:
                    self.decided.add((self.names[event["agent_id"]], event["round"]))


async def parked(fake_llm, *calls: tuple[str, int]) -> None:
    await asyncio.to_thread(fake_llm.gate.wait_parked, *calls)


async def judge(make_judgement, runner, **kwargs) -> Judgement:
    return (await judge_with_events(make_judgement, runner, **kwargs))[0]


async def judge_with_events(make_judgement, runner, **kwargs) -> tuple[Judgement, list[dict]]:
    """The judgement once run, and every event it published, up to its last."""
    judgement = await sync_to_async(make_judgement)(**kwargs)
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group_name_for(judgement.pk), channel)
    assert await runner.run_judgement(judgement.pk)
    events: list[dict] = []
    while not events or events[-1]["kind"] not in (Event.FINISHED, Event.FAILED):
        events.append(await layer.receive(channel))
    return await reload(judgement.pk), events


async def test_it_approves_with_two_of_three(fake_llm, make_judgement, runner):
    fake_llm.script("model-a", votes="AAR")  # 0.5: approve
    fake_llm.script("model-b", votes="RRA")  # 0.5: approve
    fake_llm.script("model-c", votes="ARR")  # 0.1: reject
    judgement = await judge(make_judgement, runner)
    assert judgement.status == Status.APPROVED
    agents = {a.name: a for a in judgement.agents.all()}
    assert {n: (a.final_decision, a.final_score_tenths) for n, a in agents.items()} == {
        "Melchior": ("approve", 5),
        "Balthasar": ("approve", 5),
        "Casper": ("reject", 1),
    }
    assert len(await rows(judgement.pk)) == 9
    assert judgement.started_at and judgement.finished_at
    assert judgement.lease_owner == ""


async def test_it_rejects_two_agents(fake_llm, make_judgement, runner):
    fake_llm.script("model-a", votes="RAR")  # 0.4
    fake_llm.script("model-b", votes="ARR")  # 0.1
    fake_llm.script("model-c", votes="AAA")
    judgement = await judge(make_judgement, runner)
    assert judgement.status == Status.REJECTED
    assert [a.final_decision for a in judgement.agents.all()] == ["reject", "reject", "approve"]


async def test_it_stores_every_row_of_a_full_judgement(fake_llm, make_judgement, runner):
    judgement = await judge(make_judgement, runner)
    assert await rows(judgement.pk) == [
        (name, rnd, "approve") for name in ("Melchior", "Balthasar", "Casper") for rnd in (1, 2, 3)
    ]
    decision = await RoundDecision.objects.select_related("agent").afirst()
    assert decision is not None
    assert decision.reason.startswith(decision.agent.model)
    assert decision.prompt_tokens == 100 and decision.completion_tokens == 20
    assert await LLMAttempt.objects.filter(agent__judgement=judgement).acount() == 9
    attempt = await LLMAttempt.objects.afirst()
    assert attempt is not None
    assert attempt.request["messages"][0]["role"] == "system"
    assert "approve" in attempt.response_text


async def test_it_shows_each_agent_every_earlier_decision(fake_llm, make_judgement, runner):
    fake_llm.script("model-b", votes="RAA", reason="Balthasar's reason")
    await judge(make_judgement, runner)
    prompt = "\n".join(m["content"] for m in round_two_messages(fake_llm, "model-a"))
    assert "round 1, Balthasar, reject: \"Balthasar's reason" in prompt
    assert "Balthasar's reason" in prompt
    round_three = "\n".join(
        m["content"] for m in fake_llm.requests_for("model-c", 3)[0].body["messages"]
    )
    assert round_three.count("\nround 1, ") == 3 and round_three.count("\nround 2, ") == 3


def round_two_messages(fake_llm, model: str) -> list[dict]:
    return fake_llm.requests_for(model, 2)[0].body["messages"]


async def test_it_publishes_every_state_change(fake_llm, make_judgement, runner):
    _, events = await judge_with_events(make_judgement, runner)
    kinds = [e["kind"] for e in events]
    assert kinds[0] == Event.JUDGING_STARTED
    assert kinds.count(Event.AGENTS_THINKING) == 3
    assert kinds.count(Event.DECISION_STORED) == 9
    assert kinds.count(Event.ROUND_DONE) == 3
    assert kinds[-1] == Event.FINISHED
    assert events[-1]["status"] == "approved"


async def test_it_runs_a_round_concurrently_and_rounds_in_order(fake_llm, make_judgement, runner):
    judgement = await sync_to_async(make_judgement)()
    events = await Follower(judgement).start()
    fake_llm.gate.close()
    run = asyncio.create_task(runner.run_judgement(judgement.pk))
    # All three calls of round 1 are in flight at once.
    await parked(fake_llm, ("model-a", 1), ("model-b", 1), ("model-c", 1))
    fake_llm.gate.allow("model-a", 1)
    fake_llm.gate.allow("model-b", 1)
    await events.stored("Melchior", 1)
    await events.stored("Balthasar", 1)
    # Casper's round 1 is still held: round 2 must wait for it.
    fake_llm.gate.allow("model-c", 1)
    await parked(fake_llm, ("model-a", 2), ("model-b", 2), ("model-c", 2))
    fake_llm.gate.open()
    assert await run
    assert fake_llm.max_in_flight == 3
    for round_number in (1, 2):
        ended = max(r.finished for r in fake_llm.requests if r.round == round_number)
        next_started = min(r.started for r in fake_llm.requests if r.round == round_number + 1)
        assert next_started >= ended
    assert (await reload(judgement.pk)).status == Status.APPROVED


async def test_it_recovers_when_a_retry_succeeds(fake_llm, make_judgement, runner):
    fake_llm.script("model-b", failures={2: ["500", "malformed"]})
    judgement = await judge(make_judgement, runner)
    assert judgement.status == Status.APPROVED
    failed = LLMAttempt.objects.filter(agent__name="Balthasar", round=2, outcome="failed")
    assert await failed.acount() == 2
    assert len(await rows(judgement.pk)) == 9


async def test_it_ends_in_error_naming_agent_round_and_cause(fake_llm, make_judgement, runner):
    fake_llm.script("model-b", failures={2: ["503"] * 10})
    judgement = await sync_to_async(make_judgement)()
    events = await Follower(judgement).start()
    fake_llm.gate.close()
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.gate.allow(model, 1)
    fake_llm.gate.allow("model-a", 2)
    run = asyncio.create_task(runner.run_judgement(judgement.pk))
    await events.stored("Melchior", 2)
    # Casper is still thinking about round 2 when Balthasar gives up.
    await parked(fake_llm, ("model-c", 2))
    fake_llm.gate.allow("model-b", 2)
    assert await run
    judged = await reload(judgement.pk)
    assert judged.status == Status.ERROR
    assert judged.error_message == (
        "Agent 'Balthasar' failed in round 2: HTTP 503: scripted failure 503 (after 4 attempts)"
    )
    assert judged.error_round == 2 and judged.error_agent_id is not None
    assert (await Agent.objects.aget(pk=judged.error_agent_id)).name == "Balthasar"
    assert await rows(judgement.pk) == [
        ("Melchior", 1, "approve"),
        ("Melchior", 2, "approve"),
        ("Balthasar", 1, "approve"),
        ("Casper", 1, "approve"),
    ]
    assert not fake_llm.requests_for("model-a", 3)


async def test_it_fails_at_once_on_401(fake_llm, make_judgement, runner):
    fake_llm.script("model-a", failures={1: ["401"]})
    judgement, events = await judge_with_events(make_judgement, runner)
    assert judgement.status == Status.ERROR
    assert "round 1" in judgement.error_message
    assert "HTTP 401" in judgement.error_message and "after 1 attempt)" in judgement.error_message
    assert len(fake_llm.requests_for("model-a")) == 1
    assert events[-1]["kind"] == Event.FAILED


async def test_it_ends_in_error_when_a_model_is_gone(fake_llm, make_judgement, runner, settings):
    judgement = await sync_to_async(make_judgement)()
    settings.MAGI_PROVIDERS["default"]["models"] = ["model-a", "model-b"]
    assert await runner.run_judgement(judgement.pk)
    judged = await reload(judgement.pk)
    assert judged.status == Status.ERROR
    assert "Agent 'Casper' failed in round 1: unknown model 'model-c'" in judged.error_message


async def test_it_resumes_from_the_stored_decisions(fake_llm, make_judgement, runner):
    judgement = await sync_to_async(make_judgement)()
    agents = [a async for a in judgement.agents.order_by("position")]
    for agent in agents:
        await RoundDecision.objects.acreate(agent=agent, round=1, decision="reject", reason="r1")
    await RoundDecision.objects.acreate(agent=agents[0], round=2, decision="reject", reason="r2")
    assert await runner.run_judgement(judgement.pk)
    judged = await reload(judgement.pk)
    # Round 1 and Melchior's round 2 are never asked again.
    assert not [r for r in fake_llm.requests if r.round == 1]
    assert not fake_llm.requests_for("model-a", 2)
    assert len(fake_llm.requests) == 2 + 3
    assert len(await rows(judged.pk)) == 9
    # Melchior: R R A = 0.5 approve; others R A A = 0.9 approve.
    assert [a.final_score_tenths for a in judged.agents.all()] == [5, 9, 9]
