"""The prompt variants of issue 42 (judgements/core/prompt_variants.py) in the engine: each
changes the rounds' prompts only for a judgement that asks for it, through the real SDK
and the suite's fake LLM server."""

import json

import pytest
from asgiref.sync import sync_to_async

from judgements.core import calibration
from judgements.models import (
    AttemptOutcome,
    Judgement,
    LLMAttempt,
    RoundDecision,
    Status,
    agents_fingerprint,
)
from tests.support.llm_server import RECHECK_MARKER

pytestmark = pytest.mark.django_db(transaction=True)


@sync_to_async
def made(make_judgement, variants: list[str], **kwargs) -> Judgement:
    judgement = make_judgement(**kwargs)
    Judgement.objects.filter(pk=judgement.pk).update(prompt_variants=variants)
    return judgement


async def run(runner, judgement: Judgement) -> Judgement:
    assert await runner.run_judgement(judgement.pk)
    return await Judgement.objects.aget(pk=judgement.pk)


def prompt_of(fake_llm, model: str, round_number: int) -> str:
    body = fake_llm.requests_for(model, round_number)[-1].body
    return "\n".join(message["content"] for message in body["messages"])


async def test_without_variants_later_rounds_show_the_reasons(fake_llm, make_judgement, runner):
    fake_llm.script("model-b", votes="RRR", reason="No budget stated for the trip.")
    await run(runner, await made(make_judgement, []))
    assert "No budget stated for the trip." in prompt_of(fake_llm, "model-a", 2)


async def test_decisions_only_shows_no_reason_in_later_rounds(fake_llm, make_judgement, runner):
    fake_llm.script("model-b", votes="RRR", reason="No budget stated for the trip.")
    await run(runner, await made(make_judgement, ["decisions_only"]))
    prompt = prompt_of(fake_llm, "model-a", 2)
    assert "No budget stated for the trip." not in prompt
    assert "earlier votes" in prompt


async def test_named_peers_names_each_peers_criterion(fake_llm, make_judgement, runner):
    judgement = await made(make_judgement, ["named_peers"])
    await run(runner, judgement)
    criteria = [a.criteria async for a in judgement.agents.order_by("position")]
    prompt = prompt_of(fake_llm, "model-a", 2)
    assert f"criterion {criteria[1]!r}".replace("'", '"') in prompt


async def test_decision_first_asks_its_schema(fake_llm, make_judgement, runner):
    await run(runner, await made(make_judgement, ["decision_first"]))
    body = fake_llm.requests_for("model-a", 1)[-1].body
    schema = body["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"])[:2] == ["criterion_met", "decision"]


async def test_a_quote_not_in_the_content_is_asked_again(fake_llm, make_judgement, runner):
    fake_llm.script("model-a", votes="RRR", quote="words the content never says")
    judgement = await run(runner, await made(make_judgement, ["quote"]))
    assert judgement.status in (Status.APPROVED, Status.REJECTED)
    again = [r for r in fake_llm.requests_for("model-a", 1) if RECHECK_MARKER in str(r.body)]
    assert again and "words the content never says" in str(again[0].body["messages"][-1])


async def test_the_same_quote_without_the_variant_is_not_checked(fake_llm, make_judgement, runner):
    fake_llm.script("model-a", votes="RRR", quote="words the content never says")
    await run(runner, await made(make_judgement, []))
    assert not [r for r in fake_llm.requests_for("model-a") if RECHECK_MARKER in str(r.body)]


async def test_worked_examples_come_before_round_one_alone(fake_llm, make_judgement, runner):
    fake_llm.script("model-a", votes="RRR")
    fake_llm.script("model-b", votes="AAA")
    fake_llm.script("model-c", votes="AAA")
    judgement = await run(runner, await made(make_judgement, ["worked_examples"]))
    first = fake_llm.requests_for("model-c", 1)[-1].body["messages"]
    assert [m["role"] for m in first] == ["user", "assistant"] * 4 + ["user"]
    later = fake_llm.requests_for("model-c", 2)[-1].body["messages"]
    assert [m["role"] for m in later] == ["system", "user"]
    # The examples' answers are not votes: the agents' own answers are, by the rule.
    assert await votes_of(judgement) == ["reject"] * 3 + ["approve"] * 6
    assert judgement.status == Status.APPROVED


async def test_continued_chat_asks_a_later_round_as_the_agents_own_chat_going_on(
    fake_llm, make_judgement, runner
):
    fake_llm.script("model-a", votes="RRR", missing=["a signed quote"])
    fake_llm.script("model-b", votes="AAA")
    fake_llm.script("model-c", votes="AAA")
    judgement = await run(runner, await made(make_judgement, ["continued_chat"]))
    second = fake_llm.requests_for("model-a", 2)[-1].body["messages"]
    third = fake_llm.requests_for("model-a", 3)[-1].body["messages"]
    assert [m["role"] for m in third] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    # Round 2's chat is round 3's beginning, and round 1's answer is shown as it was
    # asked, with what it said is missing, as stored.
    assert third[:4] == second
    assert json.loads(third[2]["content"])["missing"] == ["a signed quote"]
    assert "missing" not in json.loads(third[4]["content"])
    assert await votes_of(judgement) == ["reject"] * 3 + ["approve"] * 6
    assert judgement.status == Status.APPROVED


@sync_to_async
def calibrate(panel, offsets) -> None:
    learned = calibration.PanelCalibration(
        agents_fingerprint(panel.agents), tuple(offsets), (24, 24, 24)
    )
    panel.calibration = learned.as_dict()
    panel.save(update_fields=["calibration"])


@sync_to_async
def votes_of(judgement: Judgement) -> list[str]:
    return list(
        RoundDecision.objects.filter(agent__judgement=judgement)
        .order_by("agent__position", "round")
        .values_list("decision", flat=True)
    )


async def test_a_learned_offset_turns_a_leaning_reject_into_an_approve(
    fake_llm, make_judgement, make_panel, runner
):
    # P(approve) 0.1 on every answer: a model leaning to reject.
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.script(model, votes="RRR", confidence=0.9)
    panel = await sync_to_async(make_panel)()
    await calibrate(panel, [3.0, None, 3.0])
    judgement = await made(make_judgement, ["calibrated"], agents=None, panel=panel.name)
    judgement = await run(runner, judgement)
    # Agents 1 and 3 were learned: logit(0.1) + 3 > 0. Agent 2 keeps its own rejects.
    assert await votes_of(judgement) == ["approve"] * 3 + ["reject"] * 3 + ["approve"] * 3
    assert judgement.status == Status.APPROVED


async def test_a_calibration_of_other_agents_changes_nothing(
    fake_llm, make_judgement, make_panel, runner
):
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.script(model, votes="RRR", confidence=0.9)
    panel = await sync_to_async(make_panel)()
    panel.calibration = calibration.PanelCalibration(
        "other agents", (3.0,) * 3, (24,) * 3
    ).as_dict()
    await sync_to_async(panel.save)()
    judgement = await made(make_judgement, ["calibrated"], agents=None, panel=panel.name)
    judgement = await run(runner, judgement)
    assert await votes_of(judgement) == ["reject"] * 9


async def test_an_offset_without_the_variant_changes_nothing(
    fake_llm, make_judgement, make_panel, runner
):
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.script(model, votes="RRR", confidence=0.9)
    panel = await sync_to_async(make_panel)()
    await calibrate(panel, [3.0, 3.0, 3.0])
    judgement = await run(runner, await made(make_judgement, [], agents=None, panel=panel.name))
    assert await votes_of(judgement) == ["reject"] * 9


async def test_offsets_learned_under_other_variants_change_nothing(
    fake_llm, make_judgement, make_panel, runner
):
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.script(model, votes="RRR", confidence=0.9)
    panel = await sync_to_async(make_panel)()
    panel.calibration = calibration.PanelCalibration(
        agents_fingerprint(panel.agents), (3.0,) * 3, (24,) * 3, (), ("decision_first",)
    ).as_dict()
    await sync_to_async(panel.save)()
    other = await made(make_judgement, ["quote", "calibrated"], agents=None, panel=panel.name)
    assert await votes_of(await run(runner, other)) == ["reject"] * 9
    same = await made(
        make_judgement, ["decision_first", "calibrated"], agents=None, panel=panel.name
    )
    assert await votes_of(await run(runner, same)) == ["approve"] * 9


@sync_to_async
def rechecked_rounds(judgement: Judgement, model: str) -> list[int]:
    return list(
        LLMAttempt.objects.filter(
            agent__judgement=judgement, model=model, outcome=AttemptOutcome.RECHECKED
        ).values_list("round", flat=True)
    )


async def test_a_turned_vote_is_asked_again_and_the_answer_again_stands(
    fake_llm, make_judgement, runner
):
    # Casper approves, then rejects in round 2; asked again it approves: its vote stands
    # as approve, and the note names the turn. Round 3's reject turns that approve again.
    fake_llm.script("model-c", votes="ARR", recheck_votes="AAA")
    judgement = await run(runner, await made(make_judgement, ["change_check"]))
    assert await votes_of(judgement) == ["approve"] * 9
    assert sorted(await rechecked_rounds(judgement, "model-c")) == [2, 3]
    note = fake_llm.requests_for("model-c", 2)[-1].body["messages"][-1]["content"]
    assert note.startswith(RECHECK_MARKER)
    assert 'you voted "approve" in round 1 and "reject" now' in note


async def test_a_turn_kept_when_asked_again_is_the_vote(fake_llm, make_judgement, runner):
    fake_llm.script("model-c", votes="AAR", recheck_keeps=True)
    judgement = await run(runner, await made(make_judgement, ["change_check"]))
    assert (await votes_of(judgement))[6:] == ["approve", "approve", "reject"]
    assert await rechecked_rounds(judgement, "model-c") == [3]


async def test_without_the_variant_a_turned_vote_is_not_asked_again(
    fake_llm, make_judgement, runner
):
    fake_llm.script("model-c", votes="ARR", recheck_votes="AAA")
    judgement = await run(runner, await made(make_judgement, []))
    assert (await votes_of(judgement))[6:] == ["approve", "reject", "reject"]
    assert await rechecked_rounds(judgement, "model-c") == []


DEPLOY_AGENTS = [
    {"name": name, "model": model, "criteria": criteria}
    for name, model, criteria in (
        ("Melchior", "model-a", "Approve when the test suite passed on the exact commit."),
        ("Balthasar", "model-b", "Approve when someone other than the author reviewed it."),
        ("Casper", "model-c", "Approve a deploy scheduled Monday to Thursday."),
    )
]
ON_TUESDAY = "Scheduled on Tuesday."
NO_REVIEW = "Nobody other than the author reviewed it."


@sync_to_async
def rounds_of(judgement: Judgement, name: str) -> list[tuple[str, str]]:
    return list(
        RoundDecision.objects.filter(agent__judgement=judgement, agent__name=name)
        .order_by("round")
        .values_list("decision", "reason")
    )


async def casper_rounds(judgement: Judgement) -> list[tuple[str, str]]:
    return await rounds_of(judgement, "Casper")


async def test_a_turn_on_a_peers_criterion_leaves_the_vote_as_it_was(
    fake_llm, make_judgement, runner
):
    # Casper (timing) turns to reject in round 2 on Balthasar's criterion: its approve
    # stands, with its round-1 reason; the reply as sent is kept with its attempt.
    fake_llm.script("model-c", votes="ARR", reasons={1: ON_TUESDAY, 2: NO_REVIEW, 3: NO_REVIEW})
    judgement = await run(
        runner, await made(make_judgement, ["turn_needs_reason"], agents=DEPLOY_AGENTS)
    )
    assert await casper_rounds(judgement) == [("approve", ON_TUESDAY)] * 3
    replies = LLMAttempt.objects.filter(agent__judgement=judgement, model="model-c", round=2)
    assert [NO_REVIEW in reply.response_text async for reply in replies] == [True]
    assert judgement.decision == "approve"


async def test_a_turn_on_a_reason_of_its_own_criterion_stands(fake_llm, make_judgement, runner):
    saturday = "It is scheduled on Saturday, not Monday to Thursday."
    fake_llm.script("model-c", votes="ARR", reasons={1: ON_TUESDAY, 2: saturday, 3: saturday})
    judgement = await run(
        runner, await made(make_judgement, ["turn_needs_reason"], agents=DEPLOY_AGENTS)
    )
    votes = [vote for vote, _ in await casper_rounds(judgement)]
    assert votes == ["approve", "reject", "reject"]


async def test_a_turn_on_the_reason_given_for_the_other_vote_leaves_the_vote(
    fake_llm, make_judgement, runner
):
    fake_llm.script("model-c", votes="ARR", reason=ON_TUESDAY)
    judgement = await run(
        runner, await made(make_judgement, ["turn_needs_reason"], agents=DEPLOY_AGENTS)
    )
    assert [vote for vote, _ in await casper_rounds(judgement)] == ["approve"] * 3


async def test_without_turn_needs_reason_any_turn_is_the_vote(fake_llm, make_judgement, runner):
    fake_llm.script("model-c", votes="ARR", reasons={1: ON_TUESDAY, 2: NO_REVIEW, 3: NO_REVIEW})
    judgement = await run(runner, await made(make_judgement, [], agents=DEPLOY_AGENTS))
    assert await casper_rounds(judgement) == [
        ("approve", ON_TUESDAY),
        ("reject", NO_REVIEW),
        ("reject", NO_REVIEW),
    ]


REVIEWED = "Priya Nair reviewed commit 4f2a before the deploy."
DEPLOY_REQUEST = "Deploy commit 4f2a on Tuesday. Reviewed by Priya Nair; tests green."
NOTHING_READ = "The content does not mention a review by someone other than the author."


async def balthasar_judged(make_judgement, runner, variants: list[str]):
    """The deploy request judged under `variants`: the judgement, and Balthasar's (review)
    decisions and reasons, round by round."""
    judgement = await run(
        runner,
        await made(make_judgement, variants, agents=DEPLOY_AGENTS, content=DEPLOY_REQUEST),
    )
    return judgement, await rounds_of(judgement, "Balthasar")


async def test_a_turn_to_reject_naming_nothing_of_the_content_leaves_the_approve(
    fake_llm, make_judgement, runner
):
    # Balthasar (review) approved on what the content says, then calls the review absent
    # in its criterion's words alone: its approve stands, the reply kept with its attempt.
    fake_llm.script("model-b", votes="ARR", reasons={1: REVIEWED, 2: NOTHING_READ, 3: NOTHING_READ})
    judgement, rounds = await balthasar_judged(
        make_judgement, runner, ["turn_to_reject_names_content"]
    )
    assert rounds == [("approve", REVIEWED)] * 3
    replies = LLMAttempt.objects.filter(agent__judgement=judgement, model="model-b", round=2)
    assert [NOTHING_READ in reply.response_text async for reply in replies] == [True]


async def test_a_turn_to_reject_naming_the_content_stands(fake_llm, make_judgement, runner):
    author = "Priya Nair wrote commit 4f2a herself, so nobody else reviewed it."
    fake_llm.script("model-b", votes="ARR", reasons={1: REVIEWED, 2: author, 3: author})
    _, rounds = await balthasar_judged(make_judgement, runner, ["turn_to_reject_names_content"])
    assert [vote for vote, _ in rounds] == ["approve", "reject", "reject"]


async def test_without_the_content_rule_a_bare_turn_to_reject_is_the_vote(
    fake_llm, make_judgement, runner
):
    fake_llm.script("model-b", votes="ARR", reasons={1: REVIEWED, 2: NOTHING_READ, 3: NOTHING_READ})
    _, rounds = await balthasar_judged(make_judgement, runner, [])
    assert [vote for vote, _ in rounds] == ["approve", "reject", "reject"]
