"""An escalation story as every surface reports it (judgements/outcome/story_answers.py):
none for a judgement of a panel that does not escalate, told from the start for one that
does; while the next level runs nothing is decided and the status in force is not an
approval; once a level keeps its verdict, that level is the one in force, and the
answer's top-level fields are that level's while each level's own stand beside them; a
level that fails ends the story in error."""

import pytest

from judgements.models import Judgement, Panel, Status
from judgements.outcome import answers
from judgements.outcome.story_answers import Escalation, story_levels
from tests.support.states import bring
from tests.support.stories import escalated_story

pytestmark = pytest.mark.django_db


@pytest.fixture
def story(make_panel, make_judgement):
    """A judgement of Cheap whose contested verdict escalated to Strong's level 2."""
    return escalated_story(make_panel, make_judgement)


def answer_of(judgement: Judgement) -> answers.Judgement:
    return answers.Judgement.from_record(Judgement.objects.with_results().get(pk=judgement.pk))


def test_a_judgement_that_never_escalated_has_no_story(make_judgement):
    assert answer_of(make_judgement()).escalation is None


def test_a_judgement_of_a_panel_that_escalates_tells_its_story_from_the_start(
    make_panel, make_judgement
):
    """The 201 of a judgement of a panel that escalates says so: its story, one level so
    far, in force and undecided."""
    strong, cheap = make_panel(name="Strong"), make_panel(name="Cheap")
    Panel.objects.filter(pk=cheap.pk).update(escalate_to=strong)
    found = answer_of(make_judgement(panel="Cheap", agents=None)).escalation
    assert found is not None and (found.level, found.in_force, found.decided_by) == (1, 1, None)
    assert [(lv.level, lv.in_force, lv.escalated) for lv in found.levels] == [(1, True, False)]


def test_while_the_next_level_runs_nothing_is_decided(story):
    root, second = story
    found = answer_of(root)
    # The top is the level in force, still queued: nothing of level 1's stands there.
    assert found.status == Status.IDLE and found.panel_status == Status.IDLE
    assert (found.trust, found.contested, found.receipt) == (None, None, None)
    assert found.escalation is not None and found.escalation.decided_by is None
    assert found.escalation.in_force == 2
    first = found.escalation.levels[0]
    assert (first.panel_status, first.trust, first.escalated, first.in_force) == (
        Status.APPROVED,
        "contested",
        True,
        False,
    )
    assert [(lv.level, lv.panel and lv.panel.name) for lv in found.escalation.levels] == [
        (1, "Cheap"),
        (2, "Strong"),
    ]
    assert (second.level, second.root_id, second.escalated_from_id) == (2, root.pk, root.pk)


def test_the_level_that_keeps_its_verdict_is_in_force(story):
    root, second = story
    bring(
        Judgement.objects.filter(pk=second.pk), Status.REJECTED, contested=False, trust="unmeasured"
    )
    found = answer_of(root)
    assert found.status == Status.REJECTED and found.escalation is not None
    assert found.escalation.decided_by == 2
    # Its mark, panel and agents are level 2's, as its status is: not level 1's
    # "Contested" beside level 2's verdict.
    assert (found.panel_status, found.trust, found.contested) == (
        Status.REJECTED,
        "unmeasured",
        False,
    )
    assert found.trust_words is not None and found.trust_words.startswith("Trust not measured")
    assert found.panel is not None and found.panel.name == "Strong"
    level_two = answer_of(second)
    assert [a.name for a in found.agents] == [a.name for a in level_two.agents]
    assert found.escalation.levels[1].agents == level_two.agents
    first, kept = found.escalation.levels
    assert (first.trust, first.trust_words, first.in_force) == ("contested", "Contested", False)
    assert (kept.trust, kept.in_force) == ("unmeasured", True)
    from_level = answer_of(second).escalation
    assert from_level is not None and (from_level.level, from_level.root) == (2, root.pk)


def test_a_level_that_fails_ends_the_story_in_error(story):
    root, second = story
    bring(Judgement.objects.filter(pk=second.pk), Status.ERROR, error_message="boom")
    found = answer_of(root)
    assert found.status == Status.ERROR and found.escalation is not None
    assert found.escalation.decided_by is None


def test_the_levels_are_listed_once_in_order(story):
    root, second = story
    levels = story_levels(second)
    assert [level.pk for level in levels] == [root.pk, second.pk]
    assert Escalation.of(root, levels) is not None


def test_a_level_that_escalated_is_not_reviewed(story, django_user_model):
    from judgements.outcome import overrides, reviews

    root, second = story
    reviewer = django_user_model.objects.create_user("rita", is_staff=True)
    with pytest.raises(overrides.OverrideConflict, match=f"judgement {second.pk}"):
        overrides.override(root.pk, reviewer, "reject", "I say so.")
    with pytest.raises(overrides.OverrideConflict, match="escalated to level 2"):
        reviews.confirm(root.pk, reviewer, "Fine.")
