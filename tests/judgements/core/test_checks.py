"""A check is one class (judgements/core/checks.py): the four MAGI ships, what each asks
and how its reply reads, the signal each raises, and when each runs."""

import pytest

from judgements.core import check_prompts, checks, prompts
from judgements.core.certificate import Rule
from judgements.core.checks import Asked, Found, Reply
from judgements.core.contested import Signal

AGENTS = tuple(prompts.AgentBrief(n, f"{n} approves only safe plans.") for n in ("A", "B", "C"))
SUBJECT = checks.Subject("I am going to travel to Japan next week.", AGENTS)


def test_the_shipped_kinds_are_registered_in_order_with_their_signals():
    shipped = [(c.kind, c.label, c.signal, c.source) for c in checks.registered()][:4]
    assert shipped == [
        ("probe", "Confidence probe", None, "probe"),
        ("second_opinion", "Second opinion", Signal.SECOND_OPINION.value, None),
        ("screen", "Injection screen", Signal.INJECTION.value, None),
        ("plain_criterion", "Plain call on the criterion", None, None),
    ]
    assert checks.kinds()[:4] == [(c[0], c[1]) for c in shipped]


def test_the_plain_call_on_one_criterion_asks_about_the_agents_own_alone():
    plain = checks.of_kind("plain_criterion")
    assert plain is not None and plain.per_agent and plain.competitor and plain.signal is None
    agent = AGENTS[1]
    question = plain.question(checks.Subject(SUBJECT.content, AGENTS, agent))
    assert question.messages == check_prompts.plain_criterion_messages(
        agent.criteria, SUBJECT.content
    )
    assert question.read(Reply('{"decision": "reject", "reason": "No."}')).decision == "reject"
    # A competitor of the panel never runs by the checks' rules: only a run asks it.
    for asked in (Asked(setting=True), Asked(panel=True), Asked(evaluation=True)):
        assert not plain.runs(asked)


def test_a_kind_is_registered_once():
    class Another(checks.Check):
        kind = "screen"
        label = "Another screen"

    with pytest.raises(ValueError, match="already registered"):
        checks.register(Another)
    assert type(checks.of_kind("screen")) is checks.Screen


def test_the_probe_asks_the_agent_and_reads_its_confidence():
    question = checks.Probe().question(checks.Subject(SUBJECT.content, AGENTS, agent=AGENTS[1]))
    assert question.messages == check_prompts.probe_messages(AGENTS[1], SUBJECT.content)
    assert question.max_tokens == check_prompts.PROBE_MAX_TOKENS
    assert question.read(Reply("approve")) == Found(p_approve=None)
    with pytest.raises(ValueError):
        checks.Probe().question(SUBJECT)


def test_the_second_opinion_reads_a_json_decision_and_refuses_anything_else():
    question = checks.SecondOpinion().question(SUBJECT)
    criteria = [agent.criteria for agent in AGENTS]
    assert question.messages == check_prompts.second_opinion_messages(criteria, SUBJECT.content)
    assert question.schema == check_prompts.SECOND_OPINION_SCHEMA
    found = question.read(Reply('{"decision": "reject", "reason": "No."}'))
    assert found == Found(decision="reject")
    with pytest.raises(ValueError):
        question.read(Reply("approve"))


def test_the_screen_is_steered_when_its_check_word_is_missing():
    question = checks.Screen().question(SUBJECT)
    canary = question.messages[0]["content"].split('"')[1]
    assert question.read(Reply(f"{canary.lower()}.")) == Found(flagged=False)
    assert question.read(Reply("approve")) == Found(flagged=True)
    # A new word for every judgement: content cannot know it in advance.
    assert checks.Screen().question(SUBJECT).messages != question.messages


def test_each_check_words_its_doubt_and_what_the_page_shows():
    opinion, screen = checks.SecondOpinion(), checks.Screen()
    assert opinion.doubt(Found(decision="approve"), "approve") is None
    assert opinion.doubt(Found(decision="reject"), None) is None
    assert "decided reject against the panel's approve" in str(
        opinion.doubt(Found(decision="reject"), "approve")
    )
    assert opinion.shown(Found(decision="reject", p_approve=0.25), "approve") == (
        "reject, against the panel (P(approve) 25 %)",
        True,
    )
    assert opinion.shown(Found(), None) == ("no decision, as the panel", False)
    assert screen.doubt(Found(flagged=False), "approve") is None
    assert screen.shown(Found(flagged=None), "approve") is None
    assert screen.shown(Found(flagged=True), None) == ("the content steered the model", True)


SCREEN_RULE = Rule(None, None, ("injection",))
PROBE_RULE = Rule("probe", 0.7)
ANSWER_RULE = Rule("answer", 0.7, ("split",))


@pytest.mark.parametrize(
    ("asked", "screen", "probe"),
    [
        # Nobody asked and nothing reads them: neither costs a call.
        (Asked(), False, False),
        (Asked(rule=ANSWER_RULE), False, False),
        # The certificate in force reads what the check finds.
        (Asked(rule=SCREEN_RULE), True, False),
        (Asked(rule=PROBE_RULE), False, True),
        # Evaluation runs collect what certificates are learned from.
        (Asked(evaluation=True), True, True),
        # Asked for: by the deployment, or (the screen, not the probe) by the panel.
        (Asked(setting=True), True, True),
        (Asked(panel=True), True, False),
        # An explicit "off" is off, whatever else says on.
        (Asked(setting=False, panel=True, evaluation=True, rule=PROBE_RULE), False, False),
        (Asked(panel=False, evaluation=True, rule=SCREEN_RULE), False, True),
    ],
)
def test_a_check_runs_only_where_it_can_inform_the_verdict(asked, screen, probe):
    assert checks.Screen().runs(asked) is screen
    assert checks.Probe().runs(asked) is probe
