"""When not to trust a verdict: the contested mark, a pure function of the panel's record.

The panel's verdict is the weighted 2-of-3 rule's (judgements/core/rules.py) and nothing here
changes it. Beside it, `assess` reads what the record shows about how the verdict came
about and names each sign of doubt in words. A judgement is *contested* when any of the
counted signals (COUNTED) fires; a person should look at it before anyone relies on it.

The signals, each read from the stored votes, reasons and attempts alone:

- SPLIT: the final decisions are 2-1, not unanimous.
- LATE_CHANGE: an agent's final decision differs from its round-1 vote: it was settled
  by a change of vote in round 2 or 3.
- CONFORMED: an agent changed its vote to the one both other agents had given in the
  round before.
- COPIED: a later-round reason repeats word for word a reason a peer gave earlier (a
  reason about another criterion), after the engine asked again once.
- STATED_ABSENCE: a reject whose `missing` names something the content states (every
  fact word of it stands in the content), after the engine asked again once.
- RECHECKED: an answer the engine had to ask again because of one of the two checks
  above, even though the second answer passed them.
- RETRIED: an answer that needed more than one attempt (a failed or invalid reply).
- OFF_CRITERION_CHANGE: an agent changed its vote in round 3 after giving the same vote
  in rounds 1 and 2, with a reason that does not speak of its own criterion
  (own_criterion.about_own_criterion): a change deliberation made without a fact about
  the agent's own question (issue 54).

And the signals of the checks beside the vote, each raised by its check's class
(judgements/core/checks.py, `Check.doubt`), in the order they were registered:

- SECOND_OPINION: the second opinion, one call reading the content against all three
  criteria (judgements/core/check_prompts.py), decided against the panel's verdict.
- INJECTION: the injection screen's model, asked to repeat a check word and ignore the
  content, did not: the content steers a model.

What a user may do with the verdict (`trust`): with no certificate for the panel's agents,
a contested verdict says so and any other says "Trust not measured for this panel"; with
one, the certified rule alone decides between "Not contested" (kept, within the stated
bound) and "Contested" (sent to a person), so the mark means what was measured.

Which of them count was chosen on the starter suite and confirmed on the red-team and
held-out suites (docs/contested.md has the measurements); `assess` reports all of them
either way, and the level (how many kinds fired) orders judgements for the report's
accuracy-against-coverage curve. Where the second opinion ran and decided, the record's
split, late change, copied reason and stated absence stop counting (YIELD_TO_OPINION):
measured on cases never reported, beside it they marked right verdicts as often as wrong
ones (issue 54: "the mark means something").
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from judgements.core import checks, rules
from judgements.core.kept_verdicts import Rule, Sample
from judgements.core.record_signals import AgentRecord as AgentRecord
from judgements.core.record_signals import Answer as Answer
from judgements.core.record_signals import Finding as Finding
from judgements.core.record_signals import Signal as Signal
from judgements.core.record_signals import (
    conformed,
    copied,
    finals,
    late_changes,
    off_criterion_changes,
    rechecked,
    retried,
    split,
    stated_absences,
)

# The signals of the panel's record that make a judgement contested when its panel holds
# no certificate; a check's signal counts where its class says (Check.counted). See the
# module's docstring and docs/contested.md for why these and not the others.
# OFF_CRITERION_CHANGE counts as issue 54 asks: a change after two rounds of the same vote
# without a reason about the agent's own criterion is a contest signal. A turn to approve
# (reject, reject, approve: round 3's 0.5 decides) also fires LATE_CHANGE; a turn to
# reject (approve, approve, reject: 0.1 + 0.4 keep the approve) fires nothing else, and
# now contests the verdict.
COUNTED_IN_RECORD = frozenset(
    {
        Signal.SPLIT,
        Signal.LATE_CHANGE,
        Signal.COPIED,
        Signal.STATED_ABSENCE,
        Signal.OFF_CRITERION_CHANGE,
    }
)


# The record's signals that stop counting where a check reading the content on its own
# decided (Check.independent: the second opinion). Measured on Qwen2.5-Coder-1.5B on cases
# that are never reported (docs/contested.md, "Where the second opinion decided"): where
# it decided, these fired on right verdicts as often as on wrong ones or more (a 2-1
# split is what right agents give when one criterion of three fails), while its own
# disagreement told wrong verdicts from right ones; counting them beside it marked
# nearly every verdict. Where it did not run they count as before.
YIELD_TO_OPINION = frozenset(
    {Signal.SPLIT, Signal.LATE_CHANGE, Signal.COPIED, Signal.STATED_ABSENCE}
)


def counted(independent: bool = False) -> frozenset[str]:
    """Every signal that contests a verdict under no certificate, the registered
    checks' included; `independent`: a check reading the content on its own decided, so
    the record's YIELD_TO_OPINION signals do not count."""
    found = {check.signal for check in checks.registered() if check.counted and check.signal}
    record = COUNTED_IN_RECORD - YIELD_TO_OPINION if independent else COUNTED_IN_RECORD
    return record | found


# The counted signals of the checks MAGI ships, as a constant for the benches and tests.
COUNTED = counted()


def signal_order() -> list[str]:
    """Every signal in the order a contest lists them: the record's, then the checks'
    in the order they were registered."""
    order = [signal.value for signal in Signal]
    return order + [
        check.signal
        for check in checks.registered()
        if check.signal is not None and check.signal not in order
    ]


class Trust(StrEnum):
    CONTESTED = "contested"
    NOT_CONTESTED = "not_contested"
    UNMEASURED = "unmeasured"


@dataclass(frozen=True)
class Checked:
    """What one check beside the vote found (judgements/core/checks.py), by kind. A check
    that did not run or failed has none."""

    kind: str
    found: checks.Found


@dataclass(frozen=True)
class Contest:
    findings: tuple[Finding, ...]
    # A check that reads the content on its own (Check.independent) decided: the record's
    # YIELD_TO_OPINION signals are reported but do not count.
    independent: bool = False

    @property
    def contested(self) -> bool:
        return bool(self.reasons)

    @property
    def reasons(self) -> list[str]:
        """Why it is contested, in words; empty when it is not."""
        counts = counted(self.independent)
        return [f.words for f in self.findings if f.signal in counts]

    @property
    def signals(self) -> list[str]:
        """Every kind of signal that fired, counted or not, in `signal_order`."""
        fired = {finding.signal for finding in self.findings}
        return [signal for signal in signal_order() if signal in fired]

    @property
    def level(self) -> int:
        """How many kinds of signal fired: 0 for a clean record."""
        return len(self.signals)


def assess(content: str, agents: Sequence[AgentRecord], checked: Sequence[Checked] = ()) -> Contest:
    """The signals in a finished panel's record (three agents, three answers each) and
    in what the checks beside it found."""
    findings = [
        *split(agents),
        *late_changes(agents),
        *conformed(agents),
        *copied(agents),
        *stated_absences(content, agents),
        *rechecked(agents),
        *retried(agents),
        *off_criterion_changes(agents),
        *doubts(agents, checked),
    ]
    return Contest(tuple(findings), independent=decided_on_its_own(checked))


def decided_on_its_own(checked: Sequence[Checked]) -> bool:
    """Whether a check that reads the content on its own (the second opinion) gave a
    decision: one that did not run, or failed, gave none."""
    kinds = {check.kind for check in checks.registered() if check.independent}
    return any(c.kind in kinds and c.found.decision is not None for c in checked)


@dataclass(frozen=True)
class Mark:
    trust: Trust
    reasons: tuple[str, ...]

    @property
    def contested(self) -> bool:
        return self.trust is Trust.CONTESTED


def mark(contest: Contest, confidence: Mapping[str, float | None], rule: Rule | None) -> Mark:
    """What a user may do with the verdict. `rule`: the certified rule of the panel's
    certificate for exactly these agents, or None; `confidence`: the verdict's
    confidence per source (judgements/core/confidence.py)."""
    if rule is None:
        if contest.contested:
            return Mark(Trust.CONTESTED, tuple(contest.reasons))
        return Mark(Trust.UNMEASURED, ())
    sample = Sample(right=True, confidence=confidence, signals=frozenset(contest.signals))
    if rule.keeps(sample):
        return Mark(Trust.NOT_CONTESTED, ())
    return Mark(Trust.CONTESTED, tuple(rule_failures(contest, confidence, rule)))


def rule_failures(
    contest: Contest, confidence: Mapping[str, float | None], rule: Rule
) -> list[str]:
    """Why the certified rule does not keep the verdict, in words."""
    found = []
    if rule.source is not None and rule.threshold is not None:
        value = confidence.get(rule.source)
        if value is None:
            found.append(f"The panel's {rule.source} confidence is unknown.")
        elif value < rule.threshold:
            found.append(
                f"The panel's {rule.source} confidence {value:.2f} is below the certified "
                f"{rule.threshold:.2f}."
            )
    found.extend(f.words for f in contest.findings if f.signal in rule.absent)
    return found


def doubts(agents: Sequence[AgentRecord], checked: Sequence[Checked]) -> list[Finding]:
    """The signals the checks raise against the panel's verdict, in the order the checks
    were registered. A check asked once a judgement counts its last finding; one asked of
    each agent, every agent's."""
    complete = bool(agents) and all(a.answers for a in agents)
    verdict = rules.panel_decision(finals(agents)).value if complete else None
    found = []
    for check in checks.registered():
        if check.signal is None:
            continue
        mine = [c for c in checked if c.kind == check.kind]
        for item in mine if check.per_agent else mine[-1:]:
            words = check.doubt(item.found, verdict)
            if words is not None:
                found.append(Finding(check.signal, words))
    return found
