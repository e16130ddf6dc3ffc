"""A story's next level (docs/escalation.md), as intake starts it: when a decided level
does not keep its verdict and its panel names an allowed next panel, the case the next
level is started from (intake/start.py `escalate`, the story's narrow way in beside
`submit`), and the checks a level asks under the cascade's certificate in force. The
chain's rules (which panel a panel may escalate to, what a level keeps, the certificate
in force) are the saved panels' (panels/escalation_chain.py); what is here builds an
intake Case, so it lives with intake.
"""

from dataclasses import dataclass

from judgements.intake.case import Case, agents_of
from judgements.models.checks import checks_for
from judgements.models.judgements import Judgement
from judgements.models.panels import Panel
from judgements.panels import escalation_chain, saved_panels


@dataclass(frozen=True)
class Outcome:
    """What a level's decision stored beside its verdict, as `escalation_chain.keeps` reads it."""

    trust: str | None
    contested: bool | None


@dataclass(frozen=True)
class NextLevel:
    """What the next level of a story is started from, and what it continues."""

    case: Case
    level_of: Judgement
    panel: Panel


def next_level(judgement: Judgement, outcome: Outcome) -> NextLevel | None:
    """The level after `judgement`, when its verdict is not kept and its panel names an
    allowed next panel; None otherwise (an evaluation run's judgement never escalates:
    runs measure each panel on every case)."""
    if judgement.evaluation_run_id is not None or judgement.panel is None:
        return None
    if escalation_chain.keeps(outcome.trust, outcome.contested, judgement.hold_unmeasured):
        return None
    target_id = judgement.panel.escalate_to_id
    if target_id is None:
        return None
    target = Panel.objects.select_related("team", "owner").filter(pk=target_id).first()
    if target is None or escalation_chain.target_errors(judgement.panel, target):
        return None
    started = Case(
        title=judgement.title,
        content=judgement.content,
        agents=agents_of(saved_panels.agents_of(target)),
        panel=target,
        hold_unmeasured=judgement.hold_unmeasured,
    )
    return NextLevel(started, judgement, target)


def checks_asked(case: Case, first: Panel | None, level: int) -> list[str] | None:
    """The checks a story's level asks when the cascade's certificate in force reads them
    (its level's rule: a probe's confidence, a check's signal), else None (as any
    judgement: intake/rows.py)."""
    found = escalation_chain.level_rule(first, level, None if case.panel is None else case.panel.pk)
    if found is None or found.rule is None:
        return None
    return checks_for(
        case.panel,
        [agent.stored() for agent in case.agents],
        evaluation=False,
        variants=case.prompt_variants or (),
        plain_call=case.plain_call,
        rule=found.rule,
    )
