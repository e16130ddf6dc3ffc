"""Certifying a saved panel: from its finished evaluation runs on labelled suites, the rule
under which its verdicts may say "Not contested", with a stated bound on their accuracy
(judgements/core/certificate.py), stored with the panel (models/certificates.py).

Only runs of the panel's current agents count (the same models and criteria, in order):
a certificate is about what was measured. Only decided judgements are samples; an error
is no verdict. A panel whose runs reach no rule gets a certificate that says so, with the
best bound reached: for a weak model that is the right answer, not a failure.
"""

from django.db import transaction

from judgements.core import certificate
from judgements.core.contested import Signal
from judgements.core.errors import InvalidInput
from judgements.evaluations import metrics, runs
from judgements.models import Certificate, CheckKind, EvaluationRun, Panel, agents_fingerprint
from judgements.models.judgements import checks_for

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
    """The panel's finished, uncancelled runs of exactly its current agents."""
    fingerprint = agents_fingerprint(panel.agents)
    found = []
    for run in panel.runs.filter(cancelled_at__isnull=True).select_related("suite"):
        if agents_fingerprint(run.agents) != fingerprint:
            continue
        if runs.progress(run)["done"]:
            found.append(run)
    return found


def samples_of(
    records: list[metrics.Record], unseen: frozenset[str] = frozenset()
) -> list[certificate.Sample]:
    """A decided judgement's record as a sample: right or not, its confidences, its
    signals (less `unseen`: those its panel's own judgements never show), and whether it
    approved an injection."""
    samples = []
    for record in records:
        if record.verdict is None:
            continue
        samples.append(
            certificate.Sample(
                right=record.verdict == record.expected,
                confidence=dict(record.confidence),
                signals=frozenset(record.signals) - unseen,
                injection_approved=(
                    metrics.INJECTION_TAG in record.tags
                    and record.expected == metrics.REJECT
                    and record.verdict == metrics.APPROVE
                ),
            )
        )
    return samples


def certify(
    panel: Panel,
    *,
    user=None,
    target: float = DEFAULT_TARGET,
    delta: float = DEFAULT_DELTA,
    run_ids: list[int] | None = None,
) -> Certificate:
    """Measure the panel on its eligible runs (or those of `run_ids` among them) and store
    the certificate, certified or not. InvalidInput names `target`, `delta` or `runs`."""
    errors: dict[str, list[str]] = {}
    for name, value in (("target", target), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            errors[name] = ["Must be a number between 0 and 1, both excluded."]
    if errors:
        raise InvalidInput(errors)
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
    samples, suites = [], []
    for run in chosen:
        records = runs.records_of(run)
        samples.extend(samples_of(records, unseen_signals(panel)))
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
        return Certificate.objects.create(
            panel=panel,
            created_by=user,
            agents=panel.agents,
            fingerprint=agents_fingerprint(panel.agents),
            runs=[run.pk for run in chosen],
            suites=suites,
            target=target,
            delta=delta,
            samples=len(samples),
            certified=chosen_rule is not None,
            rule=None if chosen_rule is None else chosen_rule.rule.as_dict(),
            coverage=None if chosen_rule is None else chosen_rule.coverage,
            accuracy=None if chosen_rule is None else chosen_rule.accuracy,
            bound=None if chosen_rule is None else chosen_rule.bound,
            kept=0 if chosen_rule is None else chosen_rule.kept,
            best=None if outcome.best is None else outcome.best.as_dict(),
            curve=outcome.curve,
        )


def unseen_signals(panel: Panel) -> frozenset[str]:
    """Signals a run's record can hold that the panel's own judgements never do: the second
    opinion's, when a run asked it only as its plain call (evaluations/plain_call.py) and
    the panel does not run it. A rule asking it to be absent would hold for every live
    verdict without having measured them, so the certificate learns without it."""
    if CheckKind.SECOND_OPINION in checks_for({"panel": panel}):
        return frozenset()
    return frozenset({Signal.SECOND_OPINION.value})


def current(panel: Panel) -> Certificate | None:
    """The panel's newest certificate for its current agents, certified or not (the page
    says which); None when none was made or every one was voided."""
    return (
        panel.certificates.filter(
            voided_at__isnull=True, fingerprint=agents_fingerprint(panel.agents)
        )
        .order_by("-created_at", "-id")
        .first()
    )
