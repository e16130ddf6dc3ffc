"""A saved panel's escalation chain (docs/escalation.md): the panel its unkept verdicts go
to before a person (Panel.escalate_to), followed to the chain's end. Its rules: which
panel a panel may escalate to, the chain a panel starts, whether a decided level keeps
its verdict, what a cascade's certificate holds for, and the cascade certificate in
force for a level. Here, with the saved panels, because every area that handles a panel
asks them: configuration when a panel is saved (configuration/escalation_config.py),
intake when a judgement is submitted and a level escalates (intake/start.py,
intake/escalation.py), the engine when a level is decided, evaluations when a chain is
certified (evaluations/cascade.py). They need only the models.

A panel may escalate only to a panel its own team may use: a team's panel to the same
team's panels and the examples; a panel outside a team to its owner's other panels
outside a team and the examples. The rule is checked when a panel is configured, again
for every level when a judgement is submitted (a target moved to another team since is
refused, naming `panel`), and once more when a level escalates (a level whose next panel
is no longer allowed is the last: its verdict waits for a person as today).
"""

import hashlib
import json
from dataclasses import dataclass

from judgements.core import kept_verdicts
from judgements.core.errors import InvalidInput
from judgements.models.certificates import Certificate
from judgements.models.choices import Trust
from judgements.models.judgements import Judgement
from judgements.models.panels import Panel
from judgements.panels import variant_setting

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


# --- the cascade's certificate in force -----------------------------------------------


@dataclass(frozen=True)
class LevelRule:
    """A cascade's certificate in force for a level of an escalation story, and the rule
    that level keeps its verdicts by (None: it keeps none; each one goes to the next
    level). outcome/marks.py reads the level's verdict against it."""

    certificate: Certificate
    rule: kept_verdicts.Rule | None


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
