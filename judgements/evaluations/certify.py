"""Certifying a saved panel: from its finished evaluation runs on labelled suites, the rule
under which its verdicts may say "Not contested", with a stated bound on their accuracy
(judgements/core/certificate.py), stored with the panel (models/certificates.py).

Only runs of the panel's current agents asked with its current prompt variants count (the
same models and criteria, in order, and panels/saved_panels.py variants_for): a
certificate is about what was measured. Only decided judgements are samples; an error
is no verdict. A panel whose runs reach no rule gets a certificate that says so, with the
best bound reached: for a weak model that is the right answer, not a failure.
"""

from collections.abc import Callable
from typing import TypedDict

from django.contrib.auth.models import User
from django.db import transaction

from judgements.audit import record as chain_record
from judgements.core import certificate, checks, kept_verdicts
from judgements.core.contested import Signal
from judgements.core.errors import InvalidInput
from judgements.evaluations import metrics, run_reports, runs
from judgements.models import Certificate, CheckKind, EvaluationRun, Panel, agents_fingerprint
from judgements.models.checks import setting_of
from judgements.panels import variant_setting

# The confidence sources a rule may read (Judgement.answer_confidence, .probe_confidence).
SOURCES = ("answer", "probe")
# The signals a rule may ask to be absent. `conformed` and `retried` are left out: they
# say how an answer was reached, not whether the content was read right, and every
# signal more doubles the candidates, each one more chance to fit the noise.
SIGNALS = tuple(
    signal.value
    for signal in (
        Signal.SPLIT,
        Signal.LATE_CHANGE,
        Signal.COPIED,
        Signal.STATED_ABSENCE,
        Signal.RECHECKED,
        Signal.SECOND_OPINION,
        Signal.INJECTION,
    )
)
DEFAULT_TARGET = 0.9
DEFAULT_DELTA = 0.1


def eligible_runs(panel: Panel) -> list[EvaluationRun]:
    """The panel's finished, uncancelled runs of exactly its current agents and prompt
    variants."""
    fingerprint = variant_setting.fingerprint_of(panel)
    return finished_runs(
        panel, lambda run: agents_fingerprint(run.agents, run.prompt_variants or ()) == fingerprint
    )


def finished_runs(panel: Panel, measured: Callable[[EvaluationRun], bool]) -> list[EvaluationRun]:
    """The panel's finished, uncancelled runs that `measured` says are of what it is now."""
    found = []
    for run in panel.runs.filter(cancelled_at__isnull=True).select_related("suite"):
        if measured(run) and runs.progress(run)["done"]:
            found.append(run)
    return found


def samples_of(
    run: EvaluationRun, records: list[metrics.Record], unseen: frozenset[str] = frozenset()
) -> list[kept_verdicts.Sample]:
    """A decided judgement's record as a sample: right or not, its confidences, its
    signals (less `unseen`: those its panel's own judgements never show), and whether it
    approved an injection; keyed by run, case and repeat, and grouped by the suite's case
    (its repeats, in any run, land on one side of the split)."""
    samples = []
    for record in records:
        if record.verdict is None:
            continue
        samples.append(
            kept_verdicts.Sample(
                right=record.verdict == record.expected,
                confidence=dict(record.confidence),
                signals=frozenset(record.signals) - unseen,
                injection_approved=(
                    metrics.INJECTION_TAG in record.tags
                    and record.expected == metrics.REJECT
                    and record.verdict == metrics.APPROVE
                ),
                key=f"run {run.pk} case {record.case_id} repeat {record.repeat}",
                case=f"suite {run.suite_id} case {record.case_id}",
            )
        )
    return samples


def certify(
    panel: Panel,
    *,
    user: User | None = None,
    target: float = DEFAULT_TARGET,
    delta: float = DEFAULT_DELTA,
    run_ids: list[int] | None = None,
) -> Certificate:
    """Measure the panel on its eligible runs (or those of `run_ids` among them) and store
    the certificate, certified or not. InvalidInput names `target`, `delta` or `runs`."""
    check_bounds(target, delta)
    chosen = chosen_runs(panel, run_ids)
    samples, suites = [], []
    for run in chosen:
        records = run_reports.records_of(run)
        samples.extend(samples_of(run, records, unseen_signals(panel)))
        suites.append(
            {
                "run": run.pk,
                "suite": {"id": run.suite_id, "name": run.suite.name},
                "cases": list(dict.fromkeys(record.case_id for record in records)),
            }
        )
    outcome = certificate.certify(
        samples, target=target, delta=delta, sources=SOURCES, signals=SIGNALS
    )
    chosen_rule = outcome.certified
    with transaction.atomic():
        made = Certificate.objects.create(
            panel=panel,
            created_by=user,
            agents=panel.agents,
            fingerprint=variant_setting.fingerprint_of(panel),
            runs=[run.pk for run in chosen],
            suites=suites,
            target=target,
            delta=delta,
            samples=len(samples),
            method=outcome.method,
            split=outcome.split.as_dict(),
            tested=outcome.tested,
            certified=chosen_rule is not None,
            rule=None if chosen_rule is None else chosen_rule.rule.as_dict(),
            coverage=None if chosen_rule is None else chosen_rule.coverage,
            accuracy=None if chosen_rule is None else chosen_rule.accuracy,
            # The promise is the guarantee, never the chosen rule's own bound on the
            # verdicts that chose it (judgements/core/certificate.py says why).
            bound=outcome.guarantee,
            kept=0 if chosen_rule is None else chosen_rule.kept,
            best=None if outcome.best is None else outcome.best.as_dict(),
            curve=outcome.curve,
        )
        chain_record.certificate(made)
        return made


def check_bounds(target: float, delta: float) -> None:
    """InvalidInput naming `target` and `delta` unless each is a number in (0, 1)."""
    errors: dict[str, list[str]] = {}
    for name, value in (("target", target), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            errors[name] = ["Must be a number between 0 and 1, both excluded."]
    if errors:
        raise InvalidInput(errors)


def chosen_runs(panel: Panel, run_ids: list[int] | None) -> list[EvaluationRun]:
    """The panel's eligible runs, or those of `run_ids` among them; InvalidInput naming
    `runs` when one is not eligible or none is left."""
    chosen = eligible_runs(panel)
    if run_ids is not None:
        unknown = sorted(set(run_ids) - {run.pk for run in chosen})
        if unknown:
            raise InvalidInput(
                {"runs": [f"Not a finished run of this panel's current agents: {unknown}."]}
            )
        chosen = [run for run in chosen if run.pk in set(run_ids)]
    if not chosen:
        raise InvalidInput(
            {
                "runs": [
                    "No finished evaluation run of this panel with its current agents: run "
                    "it over labelled suites first."
                ]
            }
        )
    return chosen


def unseen_signals(panel: Panel) -> frozenset[str]:
    """Signals a run's record can hold that the panel's own judgements never will: the
    second opinion's, when a run asked it only as its plain call (evaluations/plain_call.py)
    and the deployment or the panel turns it off for live judgements. A rule asking it to
    be absent would hold for every live verdict without having measured them, so the
    certificate learns without it. (Not turned off, a live judgement asks it whenever
    the certificate in force reads its signal: core/checks.py `Check.runs`.)"""
    opinion = checks.of_kind(CheckKind.SECOND_OPINION.value)
    reading = kept_verdicts.Rule(None, None, (Signal.SECOND_OPINION.value,))
    if opinion is not None and opinion.runs(
        checks.Asked(setting=setting_of(opinion), panel=panel.run_checks, rule=reading)
    ):
        return frozenset()
    return frozenset({Signal.SECOND_OPINION.value})


def current(panel: Panel) -> Certificate | None:
    """The panel's newest certificate for its current agents and variants, certified or
    not (the page says which); None when none was made or every one was voided. The same
    one the verdicts are marked by (CertificateQuerySet.in_force): when it certified
    nothing, they are unmeasured."""
    return (
        panel.certificates.filter(
            voided_at__isnull=True, fingerprint=variant_setting.fingerprint_of(panel)
        )
        .order_by("-created_at", "-id")
        .first()
    )


class Checked(TypedDict):
    """A certificate's rule on a run it was not measured on (`checked_on`)."""

    decided: int
    kept: int
    right: int
    accuracy: float | None
    low: float | None
    high: float | None
    confidence: float
    holds: bool


def checked_on(found: Certificate, run: EvaluationRun) -> Checked | None:
    """A certificate's rule applied, unchanged, to a run it was not measured on: how many
    verdicts it kept, how many of those were right, and the kept accuracy with its own
    two-sided interval at the certificate's confidence. None when the rule cannot apply
    (not certified, or measured on this run)."""
    rule = found.the_rule
    if not found.certified or rule is None or run.pk in (found.runs or []):
        return None
    samples = samples_of(run, run_reports.records_of(run), unseen_signals(found.panel))
    kept = [sample for sample in samples if rule.keeps(sample)]
    right = sum(sample.right for sample in kept)
    low, high = kept_verdicts.interval(right, len(kept), found.delta)
    return {
        "decided": len(samples),
        "kept": len(kept),
        "right": right,
        "accuracy": right / len(kept) if kept else None,
        "low": low if kept else None,
        "high": high if kept else None,
        "confidence": 1 - found.delta,
        "holds": bool(kept) and high >= found.target,
    }
