"""One judgement's evidence pack, from the API and the judgement's page, checks offline
field by field and fails, naming what, when any field, prompt, reply, entry or proof in
it is changed or left out (judgements/audit/evidence.py, magi_client/packs.py)."""

import copy
import re

import pytest
from django.test import Client

from judgements.models import ApiToken
from judgements.outcome import overrides, reviews
from magi_client.packs import check_pack
from magi_client.receipts import NotValid
from tests.support.audit_history import REVIEW_REASON, judge_one, placed
from tests.support.evidence import published_keys, served_pack

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pack(fake_llm, user, staff, settings):
    """A judgement of ada's, confirmed by staff, placed in the log, as its pack from the API."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    judgement = judge_one("w1", user, "I am going to travel to <b>Japan</b> next week.")
    reviews.confirm(judgement, staff, REVIEW_REASON)
    placed()
    return served_pack(judgement, user)


def test_the_pack_checks_offline_and_holds_every_prompt_and_reply(pack):
    checked = check_pack(pack, published_keys())
    receipt = checked.receipt.body
    assert receipt["verdict"] == "approved" and receipt["review"]["kind"] == "confirmation"
    assert receipt["event"] == "confirmation"
    attempts = [a for agent in pack["agents"] for a in agent["attempts"]]
    assert len(attempts) == 9
    assert all(a["request"] and a["response_text"] for a in attempts)
    kinds = [e["leaf"]["kind"] for e in pack["entries"]]
    assert kinds == ["submitted"] + ["decision"] * 9 + ["verdict", "confirmation"]
    assert checked.entries == checked.proven == 12
    assert checked.receipt.checkpoint is not None


@pytest.mark.parametrize(
    "change, failure",
    [
        (lambda p: p.update(content=p["content"] + " "), "not the content that was judged"),
        (lambda p: p.update(title="Another title"), "the pack's title is not what its signed"),
        (lambda p: p.update(verdict="rejected"), "the pack's verdict at level 1 is 'rejected'"),
        (lambda p: p.update(status="rejected"), "the pack's status is not what its signed"),
        (
            lambda p: p["mark"].update(contested=not p["mark"]["contested"]),
            "the pack's mark is not what its signed",
        ),
        (lambda p: p["agents"][2].update(score_tenths=10), "scores is not what its signed"),
        (
            lambda p: p["agents"][1]["decisions"][2].update(reason="It is safe."),
            "the pack's decisions is not what its signed receipt says",
        ),
        (lambda p: p["review"].update(reason="Looks fine."), "the pack's review is not what"),
        (
            lambda p: p["agents"][0].update(criteria="Anything goes."),
            "the pack's agents is not what its signed receipt says",
        ),
        (
            lambda p: p["agents"][0]["attempts"][1].update(response_text='{"decision": "reject"}'),
            "agent 1's call in round 2 (attempt 1) is not what the log holds",
        ),
        (
            lambda p: p["agents"][2]["attempts"][0]["request"].update(model="another-model"),
            "agent 3's call in round 1 (attempt 1) is not what the log holds",
        ),
        (
            lambda p: p["agents"][0]["attempts"].pop(),
            "a call of this judgement that the pack leaves",
        ),
        (
            lambda p: p["entries"][3]["leaf"]["payload"].update(decision="maybe"),
            "entry 4 of the pack: its leaf hash does not match its leaf",
        ),
        (lambda p: p["entries"].pop(2), "not those the receipt counted: one was left out"),
        (
            lambda p: p["entries"][5].update(proof=p["entries"][6]["proof"]),
            "entry 6 of the pack is not in the log's checkpoint",
        ),
        (
            lambda p: p["receipt"]["inclusion"].update(
                index=p["receipt"]["inclusion"]["index"] - 1
            ),
            "the inclusion proof does not hold",
        ),
        (
            lambda p: p.update(checkpoint=p["checkpoint"].replace("\n", "\n1", 1)),
            "the pack's checkpoint",
        ),
    ],
)
def test_a_changed_pack_fails_naming_what(pack, change, failure):
    changed = copy.deepcopy(pack)
    change(changed)
    with pytest.raises(NotValid, match=re.escape(failure)):
        check_pack(changed, published_keys())


def test_the_judgements_page_links_its_pack(pack, user):
    browser = Client()
    browser.force_login(user)
    page = browser.get(f"/judgements/{pack['judgement']}/").content.decode()
    link = f'href="/judgements/{pack["judgement"]}.evidence.json" download>Evidence pack</a>'
    assert link in page
    assert "<b>Japan</b>" not in page  # the content stays data
    download = browser.get(f"/judgements/{pack['judgement']}.evidence.json")
    assert download["Content-Disposition"].endswith('.evidence.json"')
    assert download.json() == pack
    check_pack(download.json(), published_keys())


def test_another_users_pack_is_not_found(pack, other_user):
    token = ApiToken.issue(other_user, "tests")[1]
    response = Client().get(
        f"/api/judgements/{pack['judgement']}/evidence",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 404


@pytest.fixture
def reviewed_twice(fake_llm, user, staff, settings):
    """A judgement's pack served once it was approved and placed, then overridden and
    placed: the first pack, the second, and the approval's receipt as first served."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    judgement = judge_one("w1", user, "I am going to travel to Japan next week.")
    placed()
    token = ApiToken.issue(user, "tests")[1]
    headers = {"Authorization": f"Bearer {token}"}
    first = Client().get(f"/api/judgements/{judgement}/evidence", headers=headers).json()
    overrides.override(judgement, staff, "reject", REVIEW_REASON)
    placed()
    second = Client().get(f"/api/judgements/{judgement}/evidence", headers=headers).json()
    return first, second


def test_a_pack_served_before_an_override_checks_at_its_own_checkpoint(reviewed_twice):
    first, second = reviewed_twice
    assert check_pack(first, published_keys()).verdict == "approved"
    assert check_pack(second, published_keys()).verdict == "rejected"


def test_a_pack_cut_short_of_its_override_is_refused_as_stale(reviewed_twice):
    """The attacker drops the override's entry from the newest pack and puts back the
    approval's receipt as first served, or proven in the newest checkpoint."""
    first, second = reviewed_twice
    cut = copy.deepcopy(second)
    cut["entries"].pop()
    cut.update(verdict="approved", review=None, receipt=first["receipt"])
    with pytest.raises(NotValid, match="stale: the pack's receipt is proven in the log at size"):
        check_pack(cut, published_keys())
    cut["receipt"] = copy.deepcopy(first["receipt"]) | {"current": second["receipt"]["current"]}
    verdict = second["entries"][-2]  # the approval's entry, proven in the newest checkpoint
    cut["receipt"]["inclusion"] = {
        "checkpoint": second["checkpoint"], "index": verdict["index"], "proof": verdict["proof"],
    }  # fmt: skip
    with pytest.raises(NotValid, match="stale: by the log at size"):
        check_pack(cut, published_keys())
