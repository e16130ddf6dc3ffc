"""Learning a saved panel's calibration (judgements/core/calibration.py) from its finished
evaluation runs on labelled suites, the way a certificate is learned
(judgements/evaluations/certify.py): the runs of exactly its current agents, stored with
the panel with the variants it was learned under, void for other agents or other prompt
variants (core/calibration.py offsets_for). `manage.py calibrate PANEL` calls it.

Each agent's offset is fitted to its round-1 P(approve) against the cases'
`expected_agents`, over the runs whose judgements ran `variants` (the CALIBRATED variant
aside; by default the panel's own, panels/saved_panels.py variants_for): an answer's
P(approve) depends on how it was asked (with `decision_first` it is read before any
reason), so the offset is learned under the prompts it will correct. Held-out suites
must not be among the runs (docs/panel-quality.md).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction

from judgements.audit import record as chain_record
from judgements.core import calibration, prompt_variants
from judgements.core.errors import InvalidInput
from judgements.evaluations import certify
from judgements.models import Certificate, EvaluationRun, Panel, RoundDecision, agents_fingerprint
from judgements.models.certificates import RECALIBRATED_REASON
from judgements.panels import variant_setting

CALIBRATED = prompt_variants.Variant.CALIBRATED


@dataclass(frozen=True)
class Learned:
    calibration: calibration.PanelCalibration
    # The panel's certificates this calibration voided: measured on decisions the old
    # offsets made, which the new ones would make otherwise.
    voided: list[int] = field(default_factory=list)


def learn(
    panel: Panel,
    *,
    variants: Iterable[str] | None = None,
    run_ids: list[int] | None = None,
) -> Learned:
    """Fit the panel's offsets and store them, unless no agent learned one (too few
    labels: a calibration learned before is then kept); InvalidInput naming `runs` or
    `variants`. A changed calibration of a panel whose judgements read it (the calibrated
    variant) voids its certificates, as a change of its agents or variants does."""
    try:
        named = variant_setting.variants_for(panel) if variants is None else variants
        wanted = prompt_variants.parse(named) - {CALIBRATED}
    except ValueError as exc:
        raise InvalidInput({"variants": [str(exc)]}) from None
    fingerprint = agents_fingerprint(panel.agents)
    chosen = learned_from(panel, wanted, run_ids)
    if not chosen:
        raise InvalidInput(
            {
                "runs": [
                    "No finished evaluation run of this panel's current agents with these "
                    f"prompt variants ({prompt_variants.label(wanted)})."
                ]
            }
        )
    per_agent: list[list[tuple[float, str]]] = [[] for _ in panel.agents]
    firsts = RoundDecision.objects.filter(
        agent__judgement__evaluation_run__in=chosen, round=1, p_approve__isnull=False
    ).values_list("agent__position", "p_approve", "agent__judgement__suite_case__expected_agents")
    for position, p_approve, expected in firsts:
        # Only cases that say what each agent should decide teach its lean.
        if p_approve is not None and expected and 0 < position <= len(expected):
            per_agent[position - 1].append((p_approve, expected[position - 1]))
    learned = calibration.learn(fingerprint, per_agent, [run.pk for run in chosen], wanted)
    if all(offset is None for offset in learned.offsets):
        return Learned(learned)
    return Learned(learned, store(panel, learned))


def store(panel: Panel, learned: calibration.PanelCalibration) -> list[int]:
    """Keep the calibration with the panel; the ids of the certificates it voided."""
    changed = panel.calibration != learned.as_dict()
    read = CALIBRATED in variant_setting.variants_for(panel)
    with transaction.atomic():
        panel.calibration = learned.as_dict()
        panel.save(update_fields=["calibration"])
        if not (changed and read):
            return []
        voided = Certificate.objects.filter(panel=panel).void(RECALIBRATED_REASON)
        chain_record.certificates_voided(voided)
    return voided


def learned_from(
    panel: Panel, wanted: frozenset[prompt_variants.Variant], run_ids: list[int] | None
) -> list[EvaluationRun]:
    """The panel's finished runs of its current agents asked with `wanted` (`calibrated`
    aside), among `run_ids` when given."""
    fingerprint = agents_fingerprint(panel.agents)

    def measured(run: EvaluationRun) -> bool:
        variants = prompt_variants.parse(run.prompt_variants or ()) - {CALIBRATED}
        same = agents_fingerprint(run.agents) == fingerprint and variants == wanted
        return same and (run_ids is None or run.pk in run_ids)

    return certify.finished_runs(panel, measured)


def holds(panel: Panel) -> bool:
    """Whether the panel's stored calibration is for its agents and variants now (a
    change of either voids it, as it voids a certificate)."""
    if not panel.calibration:
        return False
    stored = calibration.PanelCalibration.from_dict(panel.calibration)
    fingerprint = agents_fingerprint(panel.agents)
    return stored.offsets_for(fingerprint, variant_setting.variants_for(panel)) is not None
