"""An escalation story made as the engine makes one (docs/escalation.md): a judgement of
the panel "Cheap" whose contested verdict escalated to "Strong", its level 2 started
through intake's `escalate` and still queued. Shared by the tests of the story's answers
and of its pages."""

from collections.abc import Callable

from django.contrib.auth.models import User

from judgements.intake import escalation, start
from judgements.models import Judgement, Panel, Status
from tests.support.states import bring


def escalated_story(
    make_panel: Callable[..., Panel],
    make_judgement: Callable[..., Judgement],
    creator: User | None = None,
) -> tuple[Judgement, Judgement]:
    """The story's first judgement (decided Approved, contested, escalated), started by
    `creator` (None: the operator), and its level 2."""
    cheap, strong = make_panel(name="Cheap"), make_panel(name="Strong")
    Panel.objects.filter(pk=cheap.pk).update(escalate_to=strong)
    root = make_judgement(panel="Cheap", agents=None, creator=creator)
    bring(
        Judgement.objects.filter(pk=root.pk),
        Status.APPROVED,
        contested=True,
        trust="contested",
        escalated=True,
    )
    root = Judgement.objects.select_related("panel").get(pk=root.pk)
    following = escalation.next_level(root, escalation.Outcome("contested", True))
    assert following is not None
    second = start.escalate(following)
    return Judgement.objects.get(pk=root.pk), second


def three_level_story(
    make_panel: Callable[..., Panel],
    make_judgement: Callable[..., Judgement],
    creator: User | None = None,
) -> tuple[Judgement, Judgement, Judgement]:
    """A story of three levels, Cheap → Middle → Strong: level 1 decided Rejected and
    level 2 Approved, each contested and escalated; level 3 decided Rejected and kept it
    (trust not measured), the verdict in force."""
    cheap, middle, strong = (make_panel(name=name) for name in ("Cheap", "Middle", "Strong"))
    Panel.objects.filter(pk=cheap.pk).update(escalate_to=middle)
    Panel.objects.filter(pk=middle.pk).update(escalate_to=strong)
    levels = [make_judgement(panel="Cheap", agents=None, creator=creator)]
    for decided in (Status.REJECTED, Status.APPROVED):
        level = levels[-1]
        bring(
            Judgement.objects.filter(pk=level.pk),
            decided,
            contested=True,
            trust="contested",
            escalated=True,
        )
        level = Judgement.objects.select_related("panel", "root").get(pk=level.pk)
        following = escalation.next_level(level, escalation.Outcome("contested", True))
        assert following is not None
        levels.append(start.escalate(following))
    bring(
        Judgement.objects.filter(pk=levels[-1].pk),
        Status.REJECTED,
        contested=False,
        trust="unmeasured",
    )
    first, second, third = (Judgement.objects.get(pk=level.pk) for level in levels)
    return first, second, third
