"""A check beside the vote is one class: what it asks (its prompt, judgements/core/
check_prompts.py), how its reply reads, what it found, the signal it raises and the
confidence it gives (judgements/core/contested.py), and when it runs. Registered once
(`register`), it is asked by the engine (engine/checks.py), stored
(models/checks.py: its kind is a choice of JudgementCheck.kind), counted in the contested
mark and listed on the judgement's page, with nothing else to change. The way
healthchecks makes an integration one Transport subclass.

None of them is a vote: a finding stands beside the verdict and never changes it.

When a check runs (`Check.runs`): only where it can inform the verdict, so that a check
that cannot costs nobody a call and contests nothing with a model's noise. That is
(first that applies):

1. the deployment's setting or the saved panel says off: never (an operator's "off" is
   off: the check model may be another provider, and calls cost);
2. the deployment's setting or the saved panel says on: always;
3. an evaluation run: always, for evaluation runs collect what certificates are learned
   from, and a certificate can only use what was measured;
4. the panel's certificate in force reads the check's signal or confidence: always;
5. a certificate is in force but does not read it: never (the certified rule alone
   decides the mark);
6. otherwise (no certificate, nobody asked): a check that runs by default (`by_default`:
   the second opinion) runs unless the model that would answer it is the bundled one;
   every other check never.

The second opinion runs by default because it is what makes the contested mark mean
something (issue 54): on cases never reported, the record's signals marked right verdicts
as often as wrong ones, and the second opinion told them apart (docs/contested.md). The
bundled model's opinion measured as noise, and its first verdict stays nine calls.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from judgements.core import check_prompts, confidence, prompts, rules
from judgements.core.json_values import JsonObject
from judgements.core.kept_verdicts import Rule

# The model MAGI bundles (judgements/llm/local/files.py gives its file): no check runs by
# default on it, for its answers to the checks measured as noise (docs/contested.md).
BUNDLED_MODEL = "smollm2-135m"


@dataclass(frozen=True)
class Subject:
    """What a check reads: the judged content and the panel's agents; for a check asked
    of each agent, the agent it asks."""

    content: str
    agents: tuple[prompts.AgentBrief, ...]
    agent: prompts.AgentBrief | None = None
    # The prompt variants the judgement runs: the probe asks the agent's own question.
    variants: frozenset[prompts.Variant] = frozenset()


@dataclass(frozen=True)
class Reply:
    """A check's reply: its text and, where the provider gave them, its tokens."""

    text: str
    tokens: tuple[confidence.Token, ...] | None = None


@dataclass(frozen=True)
class Found:
    """What a check found, as stored with its call (models/checks.py): a probability of
    approve, a decision, a yes/no finding; None where it says nothing."""

    p_approve: float | None = None
    decision: str | None = None
    flagged: bool | None = None


@dataclass(frozen=True)
class Question:
    """One check's call: the messages, the call's options, and how its reply reads
    (ValueError: not a valid answer, asked again like an invalid vote)."""

    messages: list[dict[str, str]]
    read: Callable[[Reply], Found]
    max_tokens: int | None = None
    schema: JsonObject | None = None


@dataclass(frozen=True)
class Asked:
    """What decides whether a check runs beside a judgement (`Check.runs`)."""

    # The deployment's MAGI_* setting for the check: None when not set.
    setting: bool | None = None
    # The saved panel's choice (Panel.run_checks) where the check heeds it; None: none.
    panel: bool | None = None
    # Started by an evaluation run.
    evaluation: bool = False
    # The certified rule of the panel's certificate in force for its agents, if any.
    rule: Rule | None = None
    # The model a check asked once per judgement would ask (the deployment's check model,
    # else the first agent's) is the bundled one: no check runs by default on it.
    bundled: bool = False


class Check:
    """One kind of check beside the vote. Subclass, set the class attributes, write
    `question`, and register the class (`@register`)."""

    kind: ClassVar[str]  # stored in JudgementCheck.kind (at most 16 characters)
    label: ClassVar[str]  # its name in words, on the page and in the admin
    # Asked of each agent with the agent's model; else once for the judgement with the
    # deployment's check model (MAGI_CHECK_MODEL, else the first agent's).
    per_agent: ClassVar[bool] = False
    # The contested signal it raises (`doubt` says when), and whether that signal
    # contests a verdict under no certificate (contested.COUNTED).
    signal: ClassVar[str | None] = None
    counted: ClassVar[bool] = True
    # It decides the case by reading the content on its own, never the panel's answers:
    # where it decided, the record's signals that measured as no sign of error stop
    # counting (contested.YIELD_TO_OPINION).
    independent: ClassVar[bool] = False
    # The confidence source its probabilities make (marks.confidences), if any.
    source: ClassVar[str | None] = None
    # The MAGI_* setting that turns it on or off (magi_site/environment.py; None: no
    # switch of its own), and whether a saved panel's "Checks beside the vote"
    # (Panel.run_checks) does too.
    setting: ClassVar[str | None] = None
    panel_chooses: ClassVar[bool] = True
    # Runs where nothing says on or off and no certificate is in force (rule 6 of the
    # module's docstring).
    by_default: ClassVar[bool] = False
    # A competitor of the panel for the evaluation report, not a check of its verdict:
    # asked only by an evaluation run that asks its plain calls (models/checks.py
    # checks_for), never shown beside a verdict, never a signal.
    competitor: ClassVar[bool] = False

    def question(self, subject: Subject) -> Question:
        raise NotImplementedError

    def doubt(self, found: Found, verdict: str | None) -> str | None:
        """Its signal's words when what it found puts the panel's verdict in doubt
        (`verdict`: the panel's decision; None when the record is incomplete)."""
        return None

    def shown(self, found: Found, decision: str | None) -> tuple[str, bool] | None:
        """What the judgement's page says it found, and whether that is a sign of doubt;
        None: nothing to show (the page says the call failed if it was asked)."""
        return None

    def informs(self, rule: Rule | None) -> bool:
        """The certified rule reads what this check finds."""
        if rule is None:
            return False
        uses_signal = self.signal is not None and self.signal in rule.absent
        return uses_signal or (self.source is not None and rule.source == self.source)

    def runs(self, asked: Asked) -> bool:
        """Whether it runs beside a judgement: see the module's docstring (a competitor
        never runs by these rules)."""
        if self.competitor:
            return False
        chosen = [asked.setting, asked.panel if self.panel_chooses else None]
        if False in chosen:
            return False
        if True in chosen or asked.evaluation:
            return True
        if asked.rule is not None:
            return self.informs(asked.rule)
        return self.by_default and not asked.bundled


_REGISTRY: dict[str, Check] = {}


C = TypeVar("C", bound=type[Check])


def register(cls: C) -> C:
    """Make `cls` a kind of check: asked, stored and shown from now on."""
    if cls.kind in _REGISTRY and type(_REGISTRY[cls.kind]) is not cls:
        raise ValueError(f"a check of kind {cls.kind!r} is already registered")
    _REGISTRY[cls.kind] = cls()
    return cls


def unregister(kind: str) -> None:
    """Forget a kind (for a test that registered one of its own)."""
    del _REGISTRY[kind]


def registered() -> Iterator[Check]:
    """Every kind of check, in the order they were registered."""
    return iter(list(_REGISTRY.values()))


def of_kind(kind: str) -> Check | None:
    return _REGISTRY.get(kind)


def kinds() -> list[tuple[str, str]]:
    """(kind, label) of every registered check: JudgementCheck.kind's choices."""
    return [(check.kind, check.label) for check in registered()]


# --- the checks MAGI ships ---------------------------------------------------------------


@register
class Probe(Check):
    """Each agent's round-1 question again with a one-word answer: its first token's
    log-probabilities are the agent's confidence (the "probe" confidence source)."""

    kind = "probe"
    label = "Confidence probe"
    per_agent = True
    source = "probe"
    setting = "MAGI_CONFIDENCE_PROBE"
    panel_chooses = False

    def question(self, subject: Subject) -> Question:
        if subject.agent is None:
            raise ValueError("the probe asks one agent")
        messages = check_prompts.probe_messages(subject.agent, subject.content, subject.variants)
        return Question(messages, read_probe, max_tokens=check_prompts.PROBE_MAX_TOKENS)


def read_probe(reply: Reply) -> Found:
    tokens = reply.tokens
    return Found(p_approve=None if tokens is None else confidence.probe_probability(tokens))


@register
class SecondOpinion(Check):
    """One call reading the content against the three criteria and the panel's rule (two
    of three must hold); it never sees the panel's answers. Its disagreement with the
    verdict is the `second_opinion` signal."""

    kind = "second_opinion"
    label = "Second opinion"
    signal = "second_opinion"
    setting = "MAGI_SECOND_OPINION"
    independent = True
    by_default = True

    def question(self, subject: Subject) -> Question:
        criteria = [agent.criteria for agent in subject.agents]
        messages = check_prompts.second_opinion_messages(criteria, subject.content)
        return Question(messages, read_opinion, schema=check_prompts.SECOND_OPINION_SCHEMA)

    def doubt(self, found: Found, verdict: str | None) -> str | None:
        if verdict is None or found.decision is None or found.decision == verdict:
            return None
        return (
            f"A second opinion, reading the content against the three criteria and the "
            f"panel's rule (two of three must hold), decided {verb(found.decision)} against "
            f"the panel's {verb(verdict)}."
        )

    def shown(self, found: Found, decision: str | None) -> tuple[str, bool] | None:
        against = decision is not None and found.decision not in (None, decision)
        words = f"{found.decision or 'no decision'}" + (
            ", against the panel" if against else ", as the panel"
        )
        if found.p_approve is not None:
            words += f" (P(approve) {confidence.probability_words(found.p_approve)})"
        return words, against


def read_opinion(reply: Reply) -> Found:
    opinion = check_prompts.parse_second_opinion(reply.text)
    tokens = reply.tokens
    p_approve = None if tokens is None else confidence.answer_probability(tokens)
    return Found(p_approve=p_approve, decision=opinion.decision)


@register
class Screen(Check):
    """Known-answer detection: asked to repeat a random check word and ignore the fenced
    content, a model whose reply lacks the word was steered by the content (the
    `injection` signal)."""

    kind = "screen"
    label = "Injection screen"
    signal = "injection"
    setting = "MAGI_INJECTION_SCREEN"

    def question(self, subject: Subject) -> Question:
        canary = check_prompts.new_canary()

        def read(reply: Reply) -> Found:
            return Found(flagged=check_prompts.screen_steered(reply.text, canary))

        messages = check_prompts.screen_messages(subject.content, canary)
        return Question(messages, read, max_tokens=check_prompts.SCREEN_MAX_TOKENS)

    def doubt(self, found: Found, verdict: str | None) -> str | None:
        if not found.flagged:
            return None
        return (
            "The injection screen: asked to repeat a check word and ignore the content, the "
            "model did not. The content may carry instructions that steer a model."
        )

    def shown(self, found: Found, decision: str | None) -> tuple[str, bool] | None:
        if found.flagged is None:
            return None
        if found.flagged:
            return "the content steered the model", True
        return "no sign the content steers", False


@register
class PlainCriterion(Check):
    """One plain call of the agent's model on the agent's criterion alone, the content
    fenced (check_prompts.plain_criterion_messages): the three of a judgement, combined by
    the exact rule, are "plain per criterion", the floor each agent is measured against in
    an evaluation report (issue 54)."""

    kind = "plain_criterion"
    label = "Plain call on the criterion"
    per_agent = True
    panel_chooses = False
    competitor = True

    def question(self, subject: Subject) -> Question:
        if subject.agent is None:
            raise ValueError("a plain call on one criterion asks about one agent's")
        messages = check_prompts.plain_criterion_messages(subject.agent.criteria, subject.content)
        return Question(messages, read_opinion, schema=check_prompts.SECOND_OPINION_SCHEMA)


def verb(decision: str) -> str:
    return "approve" if decision == rules.Vote.APPROVE else "reject"
