"""Learning a saved panel's calibration (judgements/core/calibration.py) from its finished
evaluation runs on labelled suites, the way a certificate is learned
(judgements/evaluations/certify.py): the same runs of exactly its current agents, stored
with the panel, void for other agents.

Each agent's offset is fitted to its round-1 P(approve) against the cases'
`expected_agents`, over the runs whose judgements ran `variants` (the CALIBRATED variant
aside): an answer's P(approve) depends on how it was asked (with `decision_first` it is
read before any reason), so the offset is learned under the prompts it will correct.
Held-out suites must not be among the runs (docs/panel-quality.md).
"""

from collections.abc import Iterable

from judgements.core import calibration, prompt_variants
from judgements.core.errors import InvalidInput
from judgements.evaluations import certify
from judgements.models import Panel, RoundDecision, agents_fingerprint

DEFAULT_VARIANTS = (prompt_variants.Variant.DECISION_FIRST.value,)


def learn(
    panel: Panel,
    *,
    variants: Iterable[str] = DEFAULT_VARIANTS,
    run_ids: list[int] | None = None,
) -> calibration.PanelCalibration:
    """Fit and store the panel's offsets; InvalidInput naming `runs` or `variants`."""
    try:
        wanted = prompt_variants.parse(variants) - {prompt_variants.Variant.CALIBRATED}
    except ValueError as exc:
        raise InvalidInput({"variants": [str(exc)]}) from None
    chosen = [
        run
        for run in certify.eligible_runs(panel)
        if prompt_variants.parse(run.prompt_variants or ()) - {prompt_variants.Variant.CALIBRATED}
        == wanted
        and (run_ids is None or run.pk in run_ids)
    ]
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
    learned = calibration.learn(
        agents_fingerprint(panel.agents), per_agent, [run.pk for run in chosen]
    )
    panel.calibration = learned.as_dict()
    panel.save(update_fields=["calibration"])
    return learned
