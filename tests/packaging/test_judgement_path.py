"""One judgement reads top to bottom (docs/architecture.md): its path from claim to push,
followed by its id through every call (tests/support/judgement_path.py), crosses at most
8 files and enters none more than twice."""

import pytest
from asgiref.sync import sync_to_async

from judgements.models import Judgement, Status
from tests.support import judgement_path
from tests.support.cases import case_for

pytestmark = pytest.mark.django_db(transaction=True)


@sync_to_async
def stored_judgement() -> int:
    from judgements.intake.json_cases import validate_case

    return judgement_path.store_judgement(validate_case(case_for(), None))


async def test_one_judgement_crosses_few_files_and_enters_each_at_most_twice(fake_llm, runner):
    walk = await judgement_path.follow(runner, await stored_judgement())
    judgement = await Judgement.objects.aget(pk=judgement_path.JUDGEMENT_ID)
    assert judgement.status in (Status.APPROVED, Status.REJECTED)
    entries = walk.entries()
    assert len(entries) <= judgement_path.MAX_FILES, walk.visits()
    assert max(entries.values()) <= judgement_path.MAX_VISITS_PER_FILE, walk.visits()
    # The walk starts at the runner and ends with the verdict's webhook.
    assert walk.visits()[0] == "engine/runner.py"
    assert walk.visits()[-1] == "outcome/webhooks.py", walk.stops


async def test_the_walk_leaves_out_the_lease_s_upkeep(fake_llm, runner, settings):
    """Renewals fall when the clock says: with one due every few milliseconds the walk is
    still within its limits, and names no renewal."""
    settings.MAGI_LEASE_SECONDS = 0.01
    walk = await judgement_path.follow(runner, await stored_judgement())
    assert not [stop for stop in walk.stops if "renew" in stop[1]], walk.stops
    assert max(walk.entries().values()) <= judgement_path.MAX_VISITS_PER_FILE, walk.visits()
