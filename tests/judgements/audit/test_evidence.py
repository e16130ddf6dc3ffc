"""One judgement's evidence pack, from the API and the judgement's page, checks offline
and fails when its content, a reason, a review or a signed head is changed
(judgements/audit/evidence.py, magi_client/receipts.py's check_pack)."""

import copy

import pytest
from django.test import Client

from judgements.models import ApiToken
from judgements.outcome import reviews
from magi_client.receipts import NotValid, check_pack, keys_of
from tests.support.audit_history import REVIEW_REASON, judge_one

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pack(fake_llm, user, staff, settings):
    """A judgement of ada's, confirmed by staff, as its pack from the API."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    judgement = judge_one("w1", user, "I am going to travel to <b>Japan</b> next week.")
    reviews.confirm(judgement, staff, REVIEW_REASON)
    token = ApiToken.issue(user, "tests")[1]
    response = Client().get(
        f"/api/judgements/{judgement}/evidence", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200, response.content
    return response.json()


def keys() -> dict:
    return keys_of(Client().get("/.well-known/magi-keys.json").json())


def test_the_pack_checks_offline_and_holds_every_prompt_and_reply(pack):
    receipt = check_pack(pack, keys())
    assert receipt["verdict"] == "approved" and receipt["review"]["kind"] == "confirmation"
    attempts = [a for agent in pack["agents"] for a in agent["attempts"]]
    assert len(attempts) == 9
    assert all(a["request"] and a["response_text"] for a in attempts)
    assert [e["kind"] for e in pack["entries"]] == ["submitted"] + ["decision"] * 9 + [
        "verdict",
        "confirmation",
    ]
    assert [h["seq"] for h in pack["head_signatures"]] == [e["seq"] for e in pack["entries"][-2:]]


@pytest.mark.parametrize(
    "change, failure",
    [
        (lambda p: p.update(content=p["content"] + " "), "not the content that was judged"),
        (
            lambda p: p["agents"][1]["decisions"][2].update(reason="It is safe."),
            "agent 2's round 3 in the pack is not what its chain entry hashed",
        ),
        (lambda p: p["review"].update(reason="Looks fine."), "the pack's review is not the one"),
        (
            lambda p: p["agents"][0].update(criteria="Anything goes."),
            "criteria are not those its submitted entry hashed",
        ),
        (
            lambda p: p["entries"][3]["payload"].update(decision="maybe"),
            "its sha256 does not match its fields",
        ),
        (
            lambda p: p["head_signatures"][0].update(value=p["head_signatures"][1]["value"]),
            "the head's signature does not match its contents",
        ),
    ],
)
def test_a_changed_pack_fails_naming_what(pack, change, failure):
    changed = copy.deepcopy(pack)
    change(changed)
    with pytest.raises(NotValid, match=failure):
        check_pack(changed, keys())


def test_the_judgements_page_links_its_pack(pack, user):
    browser = Client()
    browser.force_login(user)
    page = browser.get(f"/judgements/{pack['judgement']}/").content.decode()
    link = f'href="/judgements/{pack["judgement"]}.evidence.json" download>Evidence pack</a>'
    assert link in page
    assert "<b>Japan</b>" not in page  # the content stays data
    download = browser.get(f"/judgements/{pack['judgement']}.evidence.json")
    assert download["Content-Disposition"].endswith('.evidence.json"')
    check_pack(download.json(), keys())


def test_another_users_pack_is_not_found(pack, other_user):
    token = ApiToken.issue(other_user, "tests")[1]
    response = Client().get(
        f"/api/judgements/{pack['judgement']}/evidence",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 404
