"""An honest history holding escalation stories of one, two and three levels (kept, held,
overridden) checks clean with `manage.py audit verify`, and each level's evidence checks
with the client alone (docs/escalation.md, docs/evidence.md)."""

import pytest

from judgements.audit import verification
from judgements.configuration import live_state, people
from judgements.models import Judgement
from judgements.outcome import overrides
from tests.support.audit_history import (
    REVIEW_REASON,
    UNANIMOUS,
    VOTES,
    escalating_panels,
    judge_story,
    placed,
)

pytestmark = pytest.mark.django_db(transaction=True)


def problems() -> list[str]:
    report = verification.verify(verification.trust_beside_the_data(), None, [live_state.differences])
    return [str(problem) for problem in report.problems]


@pytest.fixture
def stories(fake_llm, settings):
    """Stories of 1, 2 and 3 levels: kept at once; escalated once and kept; escalated
    twice and kept; escalated twice and contested at the last level, then overridden."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    staff = people.create_user(None, "ops", "ops@example.com", is_staff=True)
    maker = people.create_user(staff, "maker", "maker@example.com")
    two = escalating_panels(maker, 2, "Two")
    three = escalating_panels(maker, 3, "Three")
    made = {
        "one": judge_story("w1", maker, "Trip one.", two, [UNANIMOUS]),
        "two": judge_story("w1", maker, "Trip two.", two, [VOTES, UNANIMOUS]),
        "three": judge_story("w1", maker, "Trip three.", three, [VOTES, VOTES, UNANIMOUS]),
        "overridden": judge_story("w1", maker, "Trip four.", three, [VOTES, VOTES, VOTES]),
    }
    overrides.override(made["overridden"][-1], staff, "reject", REVIEW_REASON)
    placed()
    return made


def test_the_stories_are_as_their_votes_say(stories):
    assert [len(levels) for levels in stories.values()] == [1, 2, 3, 3]
    verdicts = [Judgement.objects.get(pk=levels[0]).verdict for levels in stories.values()]
    assert verdicts == ["approved", "approved", "approved", "rejected"]


def test_an_honest_history_of_escalated_stories_checks_clean(stories):
    found = problems()
    assert found == [], "\n".join(found)
