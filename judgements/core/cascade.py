"""The certificate of an escalation cascade (docs/escalation.md): for each level, the rule
under which it keeps its verdict (the rest goes to the next level, and past the last to a
person), chosen and tested so that the verdicts the whole cascade keeps are at least
`target` accurate with confidence 1 - delta, on verdicts drawn like the labelled ones
("Trust or Escalate", Jung et al., ICLR 2025: cascaded selective evaluation).

Every level judged every labelled case (an evaluation run of each level's panel on the
same suites), so the cascade can be replayed on the cases: a case reaches level i when
no level before it kept its verdict. The discipline is the single panel's
(core/certificate.py), level by level:

1. **Split** the cases once, by a hash of their keys and a recorded seed, into a selection
   part and a test part; every level uses the same split.
2. **Choose on the selection part**, level by level in order: on the selection cases
   that reach the level (those the rules chosen for the levels before did not keep), the
   family (source, absent signals, thresholds strictest first) as the single panel's
   certificate chooses it.
3. **Test on the test part by fixed-sequence testing across levels**: level 1's family on
   every test case, from its strictest threshold to looser ones, each tested against
   "the kept verdicts are less than `target` accurate" at delta / L (L levels), stopping
   at the first that fails; the last that passed is level 1's rule (none passed: level 1
   keeps nothing). Then level 2's family on the test cases level 1's rule did not keep,
   and so on, in the order fixed before the test part was looked at.

Why it holds: the cascade's kept verdicts are a mixture of each level's kept verdicts, so
if every level's kept verdicts (among the cases that reach it) are at least `target`
accurate, so are the cascade's. Each level's fixed sequence errs with probability at most
delta / L, so by the union bound all of them hold at once with probability at least
1 - delta. Splitting delta across levels costs a little coverage against spending it
whole on each, and the simulation (tests/judgements/core/test_cascade.py,
bench/cascade_validity.py) measures how often a certified cascade misses its promise.

The report beside it, on the test part: per level, the cases that reached it, the share
it kept, the accuracy of what it kept with its two-sided interval, its cost in tokens and
seconds over the cases it judged, and the share left for people; and the strongest level
alone (every case, its own single-panel certificate) for comparison.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# typing_extensions: pydantic reads these as the answers (outcome/answers.py), on 3.11.
from typing_extensions import TypedDict

from judgements.core import certificate
from judgements.core.kept_verdicts import Evaluated, Rule, Sample, check_delta, interval

# Re-exported (the `as`, core/ being checked with no implicit re-export): a cascade's report
# names its levels' rules cascade.RuleFields (outcome/story_answers.py).
from judgements.core.kept_verdicts import RuleFields as RuleFields

METHOD = "cascade-split-fixed-sequence"


@dataclass(frozen=True)
class Cost:
    """What one level's judgement of one case cost: tokens (prompt and completion) and the
    seconds from its start to its end."""

    tokens: int = 0
    seconds: float = 0.0


class KeptFigures(TypedDict):
    """Verdicts kept and how right they were, with the interval at 1 - delta."""

    reached: int
    kept: int
    right: int
    share_kept: float | None  # of every test case
    accuracy: float | None
    low: float | None
    high: float | None
    tokens: int
    seconds: float


class LevelReport(TypedDict):
    level: int
    rule: RuleFields | None  # None: it keeps nothing
    rule_words: str
    tested: list[dict[str, object]]
    figures: KeptFigures
    passed_on_to: int  # test cases it did not keep


class CascadeReport(TypedDict):
    method: str
    target: float
    delta: float
    delta_per_level: float
    guarantee: float | None
    cases: int
    selection: list[str]
    test: list[str]
    levels: list[LevelReport]
    kept: KeptFigures
    people: int
    people_share: float | None
    strongest_alone: KeptFigures
    strongest_certified: KeptFigures


@dataclass(frozen=True)
class Outcome:
    """What `certify` found: each level's rule (None: it keeps nothing) and the report."""

    rules: list[Rule | None]
    report: CascadeReport = field(repr=False)

    @property
    def certified(self) -> bool:
        """The cascade keeps at least one verdict under its promise."""
        return any(rule is not None for rule in self.rules)


def certify(
    levels: Sequence[Mapping[str, Sample]],
    *,
    target: float = 0.9,
    delta: float = 0.1,
    sources: Sequence[str] = ("answer", "probe"),
    signals: Sequence[str] = (),
    costs: Sequence[Mapping[str, Cost]] = (),
    selection_share: float = certificate.DEFAULT_SELECTION,
    seed: int = certificate.DEFAULT_SEED,
) -> Outcome:
    """Each level's verdicts by case (the same cases for every level: those some level
    lacks are left out), certified as the module says. `costs`: each level's cost by case,
    for the report."""
    if not levels:
        raise ValueError("a cascade has at least one level")
    if not (isinstance(target, int | float) and 0.0 < target < 1.0):
        raise ValueError(f"target must lie strictly between 0 and 1, got {target!r}")
    check_delta(delta)
    shared = sorted(set.intersection(*(set(level) for level in levels)))
    firsts = [Sample(right=True, confidence={}, key=case, case=case) for case in shared]
    parts = certificate.split(firsts, selection_share, seed)
    chosen_cases = [s.case for s in parts.selection]
    test_cases = [s.case for s in parts.test]
    per_level = delta / len(levels)
    families = choose_families(levels, chosen_cases, target, per_level, sources, signals)
    rules, reports, reaching = tested_levels(
        levels, families, test_cases, target, per_level, delta, costs
    )
    report = CascadeReport(
        method=METHOD,
        target=target,
        delta=delta,
        delta_per_level=per_level,
        guarantee=target if any(rule is not None for rule in rules) else None,
        cases=len(shared),
        selection=chosen_cases,
        test=test_cases,
        levels=reports,
        kept=overall(levels, rules, test_cases, delta, costs),
        people=len(reaching),
        people_share=len(reaching) / len(test_cases) if test_cases else None,
        strongest_alone=strongest_alone(levels[-1], test_cases, delta, costs),
        strongest_certified=strongest_certified(
            levels[-1], chosen_cases, test_cases, target, delta, sources, signals
        ),
    )
    return Outcome(rules, report)


def tested_levels(
    levels: Sequence[Mapping[str, Sample]],
    families: Sequence[certificate.Family | None],
    test_cases: Sequence[str],
    target: float,
    per_level: float,
    delta: float,
    costs: Sequence[Mapping[str, Cost]],
) -> tuple[list[Rule | None], list[LevelReport], list[str]]:
    """Step 3: each level's family by fixed sequence on the test cases that reach it, in
    order; each level's rule (None: none passed), its report, and the cases left for
    people."""
    rules: list[Rule | None] = []
    reports: list[LevelReport] = []
    reaching = list(test_cases)
    for number, (level, family) in enumerate(zip(levels, families, strict=True), start=1):
        samples = [level[case] for case in reaching]
        steps = (
            [] if family is None else certificate.fixed_sequence(family, samples, target, per_level)
        )
        passed = [step for step, ok in steps if ok]
        rule = passed[-1].rule if passed else None
        kept = [c for c in reaching if rule is not None and rule.keeps(level[c])]
        cost = costs[number - 1] if len(costs) >= number else {}
        reports.append(
            LevelReport(
                level=number,
                rule=None if rule is None else rule_fields(rule),
                rule_words="keeps nothing" if rule is None else rule.describe(),
                tested=[{**step.as_dict(), "passed": ok} for step, ok in steps],
                figures=figures(level, reaching, kept, len(test_cases), delta, cost),
                passed_on_to=len(reaching) - len(kept),
            )
        )
        rules.append(rule)
        kept_set = set(kept)
        reaching = [case for case in reaching if case not in kept_set]
    return rules, reports, reaching


def choose_families(
    levels: Sequence[Mapping[str, Sample]],
    cases: Sequence[str],
    target: float,
    delta: float,
    sources: Sequence[str],
    signals: Sequence[str],
) -> list[certificate.Family | None]:
    """Each level's family, chosen on the selection cases that reach it: those the rules
    the selection part would pass for the levels before did not keep."""
    families: list[certificate.Family | None] = []
    reaching = list(cases)
    for level in levels:
        samples = [level[case] for case in reaching]
        family = certificate.choose(
            samples, target=target, delta=delta, sources=sources, signals=signals
        )
        families.append(family)
        rule = None
        if family is not None:
            steps = certificate.fixed_sequence(family, samples, target, delta)
            passed = [step.rule for step, ok in steps if ok]
            rule = passed[-1] if passed else None
        if rule is not None:
            reaching = [case for case in reaching if not rule.keeps(level[case])]
    return families


def figures(
    level: Mapping[str, Sample],
    reached: Sequence[str],
    kept: Sequence[str],
    total: int,
    delta: float,
    cost: Mapping[str, Cost],
) -> KeptFigures:
    right = sum(level[case].right for case in kept)
    low, high = interval(right, len(kept), delta) if kept else (None, None)
    return KeptFigures(
        reached=len(reached),
        kept=len(kept),
        right=right,
        share_kept=len(kept) / total if total else None,
        accuracy=right / len(kept) if kept else None,
        low=low,
        high=high,
        tokens=sum(cost.get(case, Cost()).tokens for case in reached),
        seconds=sum(cost.get(case, Cost()).seconds for case in reached),
    )


def overall(
    levels: Sequence[Mapping[str, Sample]],
    rules: Sequence[Rule | None],
    cases: Sequence[str],
    delta: float,
    costs: Sequence[Mapping[str, Cost]],
) -> KeptFigures:
    """The whole cascade on the test cases: what it kept, how right, what it cost."""
    kept = right = tokens = 0
    seconds = 0.0
    for case in cases:
        for number, (level, rule) in enumerate(zip(levels, rules, strict=True)):
            cost = costs[number].get(case, Cost()) if len(costs) > number else Cost()
            tokens += cost.tokens
            seconds += cost.seconds
            if rule is not None and rule.keeps(level[case]):
                kept += 1
                right += level[case].right
                break
    low, high = interval(right, kept, delta) if kept else (None, None)
    return KeptFigures(
        reached=len(cases),
        kept=kept,
        right=right,
        share_kept=kept / len(cases) if cases else None,
        accuracy=right / kept if kept else None,
        low=low,
        high=high,
        tokens=tokens,
        seconds=seconds,
    )


def strongest_alone(
    level: Mapping[str, Sample],
    cases: Sequence[str],
    delta: float,
    costs: Sequence[Mapping[str, Cost]],
) -> KeptFigures:
    """The last level on every test case, every verdict in force."""
    cost = costs[-1] if costs else {}
    return figures(level, cases, cases, len(cases), delta, cost)


def strongest_certified(
    level: Mapping[str, Sample],
    selection: Sequence[str],
    test: Sequence[str],
    target: float,
    delta: float,
    sources: Sequence[str],
    signals: Sequence[str],
) -> KeptFigures:
    """The last level alone under a single-panel certificate on the same split (its whole
    delta): how much it would keep at the same promise without the cheaper levels."""
    family = certificate.choose(
        [level[case] for case in selection],
        target=target,
        delta=delta,
        sources=sources,
        signals=signals,
    )
    samples = [level[case] for case in test]
    steps = [] if family is None else certificate.fixed_sequence(family, samples, target, delta)
    passed: list[Evaluated] = [step for step, ok in steps if ok]
    rule = passed[-1].rule if passed else None
    kept = [case for case in test if rule is not None and rule.keeps(level[case])]
    return figures(level, test, kept, len(test), delta, {})


def rule_fields(rule: Rule) -> RuleFields:
    return rule.as_dict()
