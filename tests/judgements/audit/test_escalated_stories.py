"""An honest history holding escalation stories of one, two and three levels (kept, held,
overridden) checks clean with `manage.py audit verify`, and each level's evidence checks
with the client alone (docs/escalation.md, docs/evidence.md)."""

import json
import re

import pytest
from django.test import Client

from judgements.audit import verification
from judgements.configuration import live_state
from judgements.models import Judgement
from magi_client.packs import check_pack
from magi_client.receipts import NotValid
from tests.support.audit_history import make_stories
from tests.support.evidence import published_keys, served_pack
from tests.support.magi_client import run_magi

pytestmark = pytest.mark.django_db(transaction=True)


def problems() -> list[str]:
    trust = verification.trust_beside_the_data()
    report = verification.verify(trust, None, [live_state.differences])
    return [str(problem) for problem in report.problems]


@pytest.fixture
def stories(fake_llm, settings):
    """Stories of 1, 2 and 3 levels: kept at once; escalated once and kept; escalated
    twice and kept; escalated twice and contested at the last level, then overridden;
    escalated twice and held for a person at the last level."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    return make_stories("w1")


def test_the_stories_are_as_their_votes_say(stories):
    assert [len(levels) for levels in stories.values()] == [1, 2, 3, 3, 3]
    verdicts = [Judgement.objects.get(pk=levels[0]).verdict for levels in stories.values()]
    assert verdicts == ["approved", "approved", "approved", "rejected", "held"]


def test_an_honest_history_of_escalated_stories_checks_clean(stories):
    found = problems()
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("escalated", [False, True])
def test_a_level_made_to_keep_or_pass_on_its_verdict_is_named(stories, escalated):
    """The attacker who turns a story's level 1 into the verdict in force (or a kept
    verdict into one that went on): its receipt and its verdict entry disagree."""
    level = stories["two"][0] if not escalated else stories["one"][0]
    Judgement.objects.filter(pk=level).update(escalated=escalated)
    found = problems()
    signed, now = ("'judging'", "'approved'") if not escalated else ("'approved'", "'judging'")
    assert (
        f"judgement {level}: its receipt says 'approved' (in force {signed}), the database "
        f"'approved' (in force {now})" in found
    ), found
    assert any(f"verdict of judgement {level}: escalated is {escalated}" in p for p in found)


@pytest.mark.parametrize(
    "story, verdict", [("one", "approved"), ("two", "approved"), ("three", "approved"),
                       ("overridden", "rejected"), ("held", "held")]
)  # fmt: skip
def test_every_levels_pack_checks_its_whole_story_offline(stories, story, verdict):
    levels = stories[story]
    maker = Judgement.objects.get(pk=levels[0]).creator
    for judgement_id in levels:
        pack = served_pack(judgement_id, maker)
        checked = check_pack(pack, published_keys())
        assert (checked.verdict, checked.levels) == (verdict, len(levels))
        assert [p["level"] for p in pack["levels"]] == [
            n for n in range(1, len(levels) + 1) if n != pack["level"]
        ]


def test_an_escalated_levels_receipt_says_its_story_went_on(stories):
    first = served_pack(stories["three"][0], Judgement.objects.get(pk=stories["three"][0]).creator)
    body = check_pack(first, published_keys()).receipt.body
    assert (body["panel_verdict"], body["verdict"], first["escalated"]) == (
        "approved", "judging", True,
    )  # fmt: skip


def story_pack(stories, story: str = "three") -> dict:
    first = stories[story][0]
    return served_pack(first, Judgement.objects.get(pk=first).creator)


def swap_in_another_story(stories):
    """Level 3 of the overridden story (rejected) put in place of the kept story's."""
    pack = story_pack(stories)
    other = story_pack(stories, "overridden")
    pack["levels"][1] = next(p for p in other["levels"] if p["level"] == 3)
    pack["levels"][1]["verdict"] = "approved"
    return pack


@pytest.mark.parametrize(
    "change, failure",
    [
        (lambda p: p["levels"].pop(), "the pack's verdict at level 1 is 'approved', its story's "
         "signed receipts say 'judging' (level 2's)"),
        (lambda p: p["levels"].pop(0), "levels 1 to 2, each once"),
        (lambda p: p["levels"].reverse(), "the pack's levels are not in order"),
        (lambda p: p.update(verdict="rejected"), "the pack's verdict at level 1 is 'rejected'"),
        (lambda p: p["levels"][1].update(verdict="rejected"), "at level 3 is 'rejected'"),
        (lambda p: p.update(escalated=False), "the pack's escalated is not what its receipt"),
        (lambda p: p.update(note="approved by hand"), "holds note, which no pack has"),
        (lambda p: p.pop("escalated"), "has no escalated"),
        (lambda p: p["levels"][0]["levels"].append({}), "level 2 of the pack holds levels"),
        (lambda p: p["levels"][1].update(level=5), "levels 1 to 3, each once"),
        (lambda p: p["entries"].reverse(), "not in the order the log placed them"),
        (lambda p: p["levels"][0]["agents"][0].update(criteria="x"), "level 2 of the pack: the "
         "pack's agents is not what its signed receipt says"),
    ],
)  # fmt: skip
def test_a_changed_story_pack_is_refused_naming_what(stories, change, failure):
    pack = story_pack(stories)
    change(pack)
    with pytest.raises(NotValid, match=re.escape(failure)):
        check_pack(pack, published_keys())


def test_a_level_of_another_story_is_refused_by_its_log_entries(stories):
    with pytest.raises(NotValid, match="does not continue judgement"):
        check_pack(swap_in_another_story(stories), published_keys())


def test_the_installed_client_checks_a_story_and_refuses_one_cut_short(stories, tmp_path):
    pack = story_pack(stories)
    jwks = Client().get("/.well-known/magi-keys.json").content.decode()
    (tmp_path / "keys.json").write_text(jwks)
    (tmp_path / "pack.json").write_text(json.dumps(pack))
    done = run_magi("verify", str(tmp_path / "pack.json"), "--keys", str(tmp_path / "keys.json"),
                    env={})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "story: 3 levels, each checked; the verdict in force is level 3's" in done.stdout
    assert f"valid: judgement {pack['judgement']} approved" in done.stdout
    pack["levels"].pop()
    (tmp_path / "pack.json").write_text(json.dumps(pack))
    done = run_magi("verify", str(tmp_path / "pack.json"), "--keys", str(tmp_path / "keys.json"),
                    env={})  # fmt: skip
    assert done.returncode == 1 and "its story's signed receipts say 'judging'" in done.stderr
    # Level 1's receipt alone checks, and says the level went on rather than a verdict.
    (tmp_path / "receipt.json").write_text(json.dumps(pack["receipt"]))
    done = run_magi("verify", str(tmp_path / "receipt.json"), "--keys",
                    str(tmp_path / "keys.json"), env={})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        f"valid: judgement {pack['judgement']} escalated (its panel: approved; the story's "
        "next level decides: verify the story's pack)" in done.stdout
    )
