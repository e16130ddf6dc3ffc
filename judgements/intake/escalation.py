"""Escalation (docs/escalation.md): a saved panel names the panel its unkept verdicts go
to before a person (Panel.escalate_to), and a chain of them is one judgement's story.
This module says which panels a chain holds, which a panel may escalate to, whether a
decided level keeps its verdict, and the case the next level is started from
(intake/start.py `escalate`, the story's narrow way in beside `submit`).

A panel may escalate only to a panel its own team may use: a team's panel to the same
team's panels and the examples; a panel outside a team to its owner's other panels
outside a team and the examples. The rule is checked when a panel is configured
(configuration/escalation_config.py), again for every level when a judgement is
submitted (a target moved to another team since is refused, naming `panel`), and once
more when a level escalates (a level whose next panel is no longer allowed is the last:
its verdict waits for a person as today).
"""

import hashlib
import json
from dataclasses import dataclass

from judgements.core import kept_verdicts
from judgements.core.errors import InvalidInput
from judgements.intake.case import Case, agents_of
from judgements.models.certificates import Certificate
from judgements.models.checks import checks_for
from judgements.models.choices import Trust
from judgements.models.judgements import Judgement
from judgements.models.panels import Panel
from judgements.outcome.marks import LevelRule
from judgements.panels import saved_panels, variant_setting

# A chain longer than this is refused: every level is a full judgement (nine calls), and a
# story that long is a configuration mistake, not a cascade.
MAX_LEVELS = 8


class CycleError(ValueError):
    """The chain of escalations comes back to a panel it already holds."""


def may_escalate(panel: Panel, target: Panel) -> bool:
    """Whether `panel` may name `target` as the panel it escalates to (the module's rule)."""
    if target.pk is not None and target.pk == panel.pk:
        return False
    example = target.owner_id is None and target.team_id is None
    if example:
        return True
    if panel.team_id is not None:
        return target.team_id == panel.team_id
    return target.team_id is None and target.owner_id == panel.owner_id


def refusal(panel: Panel, target: Panel) -> str:
    """Why `panel` may not escalate to `target`, in the words every surface shows."""
    if target.pk == panel.pk:
        return "A panel cannot escalate to itself."
    if panel.team_id is not None:
        team = panel.team.name if panel.team else str(panel.team_id)
        return (
            f"The team {team} may not use the panel {target.name!r}: escalate to one of "
            "the team's panels or an example."
        )
    return (
        f"The panel {target.name!r} is not one of the owner's own panels outside a team, "
        "nor an example: a panel may escalate only to a panel it may use."
    )


def chain_after(panel: Panel, target: Panel | None) -> list[Panel]:
    """The panels a story of `panel` would run after it, were it to escalate to `target`:
    `target`, then what `target` escalates to, and so on. CycleError when the chain comes
    back to a panel it holds (`panel` included), ValueError past MAX_LEVELS."""
    chain: list[Panel] = []
    seen = {panel.pk} if panel.pk is not None else set()
    current = target
    while current is not None:
        if current.pk in seen:
            raise CycleError(
                f"The escalation comes back to {current.name!r}: "
                + " → ".join([panel.name, *(p.name for p in chain), current.name])
                + "."
            )
        seen.add(current.pk)
        chain.append(current)
        if len(chain) >= MAX_LEVELS:
            raise ValueError(f"A story has at most {MAX_LEVELS} levels.")
        current = (
            Panel.objects.select_related("team", "owner").filter(pk=current.escalate_to_id).first()
            if current.escalate_to_id is not None
            else None
        )
    return chain


def target_errors(panel: Panel, target: Panel | None) -> list[str]:
    """What is wrong with `panel` escalating to `target` (empty: nothing): the access rule
    for every level of the chain, and no cycle."""
    if target is None:
        return []
    if not may_escalate(panel, target):
        return [refusal(panel, target)]
    try:
        chain = chain_after(panel, target)
    except ValueError as exc:
        return [str(exc)]
    for before, after in zip([panel, *chain], chain, strict=False):
        if not may_escalate(before, after):
            return [f"{before.name!r} escalates to {after.name!r}: {refusal(before, after)}"]
    return []


def levels_after(panel: Panel | None) -> list[Panel]:
    """The panels a judgement started from `panel` may escalate to, in order; InvalidInput
    naming `panel` when the stored chain breaks the rule (a cycle, or a level the team
    may no longer use)."""
    if panel is None or panel.escalate_to_id is None:
        return []
    target = Panel.objects.select_related("team", "owner").get(pk=panel.escalate_to_id)
    errors = target_errors(panel, target)
    if errors:
        raise InvalidInput({"panel": [f"The panel's escalation is refused: {errors[0]}"]})
    return chain_after(panel, target)


def keeps(trust: str | None, contested: bool | None, hold_unmeasured: bool) -> bool:
    """Whether a decided level keeps its verdict: not contested (which, under a
    certificate, includes a verdict outside its rule), and not an unmeasured verdict the
    deployment holds for a person. What a level does not keep goes to the next level."""
    if contested:
        return False
    return not (trust == Trust.UNMEASURED and hold_unmeasured)


@dataclass(frozen=True)
class Outcome:
    """What a level's decision stored beside its verdict, as `keeps` reads it."""

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
    if keeps(outcome.trust, outcome.contested, judgement.hold_unmeasured):
        return None
    target_id = judgement.panel.escalate_to_id
    if target_id is None:
        return None
    target = Panel.objects.select_related("team", "owner").filter(pk=target_id).first()
    if target is None or target_errors(judgement.panel, target):
        return None
    started = Case(
        title=judgement.title,
        content=judgement.content,
        agents=agents_of(saved_panels.agents_of(target)),
        panel=target,
        hold_unmeasured=judgement.hold_unmeasured,
    )
    return NextLevel(started, judgement, target)


# --- the cascade's certificate in force -----------------------------------------------


def chain_fingerprint(panels: list[Panel]) -> str:
    """What a cascade's certificate holds for: each level's agents and prompt variants
    (variant_setting.fingerprint_of), in order. Any level changed, and it holds no more."""
    levels = [variant_setting.fingerprint_of(panel) for panel in panels]
    return hashlib.sha256(json.dumps(["cascade", levels]).encode()).hexdigest()


def cascade_in_force(judgement: Judgement) -> LevelRule | None:
    """The cascade certificate its story's first panel holds for the chain as it stands
    now, with this level's rule (None: the level keeps nothing), if one is in force and
    this level is in it; else None (the level's own panel certificate decides)."""
    if judgement.evaluation_run_id is not None:
        return None
    root = judgement if judgement.root_id is None else judgement.root
    if root is None or root.panel_id is None:
        return None
    first = Panel.objects.filter(pk=root.panel_id).first()
    return level_rule(first, judgement.level, judgement.panel_id)


def level_rule(first: Panel | None, level: int, panel_id: int | None) -> LevelRule | None:
    """The cascade certificate in force for the chain `first` starts, and the rule of its
    `level` (whose panel must be `panel_id`); None when there is none."""
    if first is None or first.escalate_to_id is None:
        return None
    try:
        panels = [first, *levels_after(first)]
    except InvalidInput:
        return None
    if len(panels) < level or panels[level - 1].pk != panel_id:
        return None
    found = (
        Certificate.objects.filter(panel=first, levels__isnull=False)
        .in_force(chain_fingerprint(panels))
        .first()
    )
    if found is None:
        return None
    entries = (found.levels or {}).get("panels", [])
    if len(entries) < level:
        return None
    rule = entries[level - 1].get("rule")
    return LevelRule(found, None if rule is None else kept_verdicts.Rule.from_dict(rule))


def checks_asked(case: Case, first: Panel | None, level: int) -> list[str] | None:
    """The checks a story's level asks when the cascade's certificate in force reads them
    (its level's rule: a probe's confidence, a check's signal), else None (as any
    judgement: intake/rows.py)."""
    found = level_rule(first, level, None if case.panel is None else case.panel.pk)
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
