"""An escalation story made as the engine makes one (docs/escalation.md): a judgement of
the panel "Cheap" whose contested verdict escalated to "Strong", its level 2 started
through intake's `escalate` and still queued. Shared by the tests of the story's answers
and of its pages."""

from collections.abc import Callable

from django.contrib.auth.models import User

from judgements.intake import escalation, start
from judgements.models import Judgement, Panel, Status


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
    Judgement.objects.filter(pk=root.pk).update(
        status=Status.APPROVED, contested=True, trust="contested", escalated=True
    )
    root = Judgement.objects.select_related("panel").get(pk=root.pk)
    following = escalation.next_level(root, escalation.Outcome("contested", True))
    assert following is not None
    second = start.escalate(following)
    return Judgement.objects.get(pk=root.pk), second
