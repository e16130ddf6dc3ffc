"""Contested verdicts held for a person, the review queue and confirmations
(judgements/outcome/reviews.py): through the API, its webhooks, the pages and `manage.py judge`.
Fail-closed throughout: only an approved verdict in force is a go."""

import asyncio
import io
import json

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from judgements.models import Confirmation, Judgement
from tests.support.api_client import serve_one_wake_up, token_client
from tests.support.cases import case_for, validated
from tests.support.commands import run_judge
from tests.support.webhooks import deliver, verify

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("empty_engine_channel"),
]

REASON = "Read the claim myself: the receipt is attached, the panel is right."


@pytest.fixture
def other_api(other_user):
    return token_client(other_user)


def split_votes(fake_llm) -> None:
    """2-1 for approve: contested (a split), the panel's verdict approved."""
    fake_llm.script("model-c", votes="RRR")


async def submit_and_run(api, **fields) -> dict:
    response = await api.post(
        "/api/judgements/", json.dumps(case_for(**fields)), content_type="application/json"
    )
    assert response.status_code == 201, response.json()
    assert await serve_one_wake_up()
    answer = await api.get(f"/api/judgements/{response.json()['id']}/")
    return answer.json()


async def review(client, judgement_id: int, action: str, body: dict) -> tuple[int, dict]:
    response = await client.post(
        f"/api/judgements/{judgement_id}/{action}",
        json.dumps(body),
        content_type="application/json",
    )
    return response.status_code, response.json()


# --- held through the API ----------------------------------------------------------------


async def test_a_contested_verdict_asked_to_be_held_is_held_until_confirmed(
    fake_llm, api, staff_api
):
    split_votes(fake_llm)
    result = await submit_and_run(api, hold_contested=True)
    assert (result["status"], result["panel_status"]) == ("held", "approved")
    assert result["contested"] is True
    assert result["contest_reasons"] == [
        "The panel split 2-1: Casper decided reject against the others' approve."
    ]
    status, confirmed = await review(staff_api, result["id"], "confirm", {"reason": REASON})
    assert status == 201
    assert (confirmed["status"], confirmed["panel_status"]) == ("approved", "approved")
    assert confirmed["confirmation"]["by"] == "ops"
    assert confirmed["confirmation"]["reason"] == REASON
    assert confirmed["confirmation"]["decision"] == "approve"


async def test_a_held_verdict_overridden_takes_the_override(fake_llm, api, staff_api):
    split_votes(fake_llm)
    result = await submit_and_run(api, hold_contested=True)
    status, overridden = await review(
        staff_api, result["id"], "override", {"decision": "reject", "reason": REASON}
    )
    assert status == 201
    assert (overridden["status"], overridden["panel_status"]) == ("rejected", "approved")
    # Reviewed: a confirmation after an override is refused.
    status, refused = await review(staff_api, result["id"], "confirm", {"reason": REASON})
    assert status == 409
    assert "already reviewed" in refused["error"]


async def test_without_hold_a_contested_verdict_is_in_force_and_marked(fake_llm, api):
    split_votes(fake_llm)
    result = await submit_and_run(api)
    assert (result["status"], result["contested"], result["hold_contested"]) == (
        "approved",
        True,
        False,
    )


async def test_an_uncontested_verdict_is_never_held(fake_llm, api):
    result = await submit_and_run(api, hold_contested=True)
    assert (result["status"], result["contested"]) == ("approved", False)


async def test_the_saved_panel_and_the_deployment_choose_when_the_case_does_not(
    fake_llm, api, make_panel, user, settings
):
    split_votes(fake_llm)
    panel = await sync_to_async(make_panel)("Desk", owner=user)
    panel.hold_contested = True
    await panel.asave()
    case: dict[str, object] = {"title": "Trip", "content": "Japan next week.", "panel": "Desk"}
    response = await api.post("/api/judgements/", json.dumps(case), content_type="application/json")
    assert await serve_one_wake_up()
    held = (await api.get(f"/api/judgements/{response.json()['id']}/")).json()
    assert held["status"] == "held"
    # The case's own false beats the panel's true.
    case["hold_contested"] = False
    response = await api.post("/api/judgements/", json.dumps(case), content_type="application/json")
    assert await serve_one_wake_up()
    assert (await api.get(f"/api/judgements/{response.json()['id']}/")).json()[
        "status"
    ] == "approved"
    # Neither says: the deployment's default.
    settings.MAGI_HOLD_CONTESTED = True
    assert (await submit_and_run(api))["status"] == "held"


@pytest.mark.parametrize("value", ["yes", 1, [], {}])
async def test_hold_contested_must_be_a_boolean(fake_llm, api, value):
    response = await api.post(
        "/api/judgements/",
        json.dumps(case_for(hold_contested=value, title="")),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "hold_contested": ["Must be true or false."],
        "title": ["This field is required."],
    }


async def test_confirming_needs_the_permission_a_reason_and_a_decided_verdict(
    fake_llm, api, staff_api, user
):
    split_votes(fake_llm)
    result = await submit_and_run(api, hold_contested=True)
    status, refused = await review(api, result["id"], "confirm", {"reason": REASON})
    assert (status, refused["error"]) == (
        403,
        "You do not have the permission to review judgements.",
    )
    status, invalid = await review(staff_api, result["id"], "confirm", {"reason": " "})
    assert (status, invalid["errors"]) == (422, {"reason": ["A reason is required."]})
    status, invalid = await review(
        staff_api, result["id"], "confirm", {"reason": REASON, "decision": "approve"}
    )
    assert (status, invalid["errors"]) == (
        400,
        {"decision": ["Unknown field; the fields here are reason."]},
    )
    # The permission alone (no staff flag) lets ada review her own judgements.
    permission = await Permission.objects.aget(codename="override_judgement")
    await sync_to_async(user.user_permissions.add)(permission)
    status, _ = await review(api, result["id"], "confirm", {"reason": REASON})
    assert status == 201
    status, refused = await review(staff_api, result["id"], "confirm", {"reason": REASON})
    assert status == 409
    assert await Confirmation.objects.acount() == 1


async def test_an_error_cannot_be_confirmed(fake_llm, api, staff_api):
    fake_llm.script("model-c", failures={1: ["500"] * 10})
    result = await submit_and_run(api, hold_contested=True)
    assert (result["status"], result["contested"]) == ("error", None)
    status, refused = await review(staff_api, result["id"], "confirm", {"reason": REASON})
    assert status == 409
    assert "only an approved or rejected verdict can be confirmed" in refused["error"]


async def test_the_queue_lists_unreviewed_contested_judgements_newest_first(
    fake_llm, api, staff_api, other_api
):
    split_votes(fake_llm)
    first = await submit_and_run(api)
    second = await submit_and_run(api, hold_contested=True)
    fake_llm.script("model-c", votes="AAA")
    await submit_and_run(api)  # not contested
    split_votes(fake_llm)
    others = await submit_and_run(other_api)
    queue = (await staff_api.get("/api/reviews/")).json()["judgements"]
    assert [j["id"] for j in queue] == [others["id"], second["id"], first["id"]]
    await review(staff_api, second["id"], "confirm", {"reason": REASON})
    queue = (await staff_api.get("/api/reviews/")).json()["judgements"]
    assert [j["id"] for j in queue] == [others["id"], first["id"]]
    response = await api.get("/api/reviews/")
    assert response.status_code == 403


# --- webhooks ----------------------------------------------------------------------------


async def test_a_held_verdict_is_posted_held_then_again_when_confirmed(
    fake_llm,
    api,
    staff_api,
    receiver,
    secret,
):
    split_votes(fake_llm)
    response = await api.post(
        "/api/judgements/",
        json.dumps(case_for(hold_contested=True, callback_url=receiver.url)),
        content_type="application/json",
    )
    judgement_id = response.json()["id"]
    assert await serve_one_wake_up()
    assert await deliver("w1", 10) == 1
    status, _ = await review(staff_api, judgement_id, "confirm", {"reason": REASON})
    assert status == 201
    assert await deliver("w1", 10) == 1
    events = [verify(secret, request) for request in receiver.received]
    assert [(e["event"], e["status"], e["panel_status"], e["contested"]) for e in events] == [
        ("judgement.finished", "held", "approved", True),
        ("judgement.confirmed", "approved", "approved", True),
    ]
    assert events[1]["confirmation"]["by"] == "ops"


# --- the command line --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("votes_c", "hold", "code", "first_line"),
    [
        ("AAA", True, 0, "Approved"),
        ("RRR", True, 4, "Held for review"),
        ("RRR", False, 0, "Approved"),
    ],
)
def test_judge_exits_0_only_for_an_approval_in_force(
    fake_llm, tmp_path, votes_c, hold, code, first_line
):
    fake_llm.script("model-c", votes=votes_c)
    exit_code, out, _ = run_judge(tmp_path, case_for(hold_contested=hold))
    assert exit_code == code
    assert out.splitlines()[0] == first_line
    if votes_c == "RRR":
        assert "  contested:" in out
        assert "    - The panel split 2-1: Casper decided reject" in out


def test_judge_exits_3_for_a_rejection(fake_llm, tmp_path):
    fake_llm.script("model-a", votes="RRR")
    fake_llm.script("model-b", votes="RRR")
    exit_code, out, _ = run_judge(tmp_path, case_for())
    assert (exit_code, out.splitlines()[0]) == (3, "Rejected")


def test_judge_names_a_bad_hold_contested(fake_llm, tmp_path):
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case_for(hold_contested="maybe")))
    err = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("judge", str(path), stdout=io.StringIO(), stderr=err)
    assert exited.value.code == 2
    assert "invalid input: hold_contested: Must be true or false." in err.getvalue()


# --- pages -------------------------------------------------------------------------------


@pytest.fixture
def held(make_judgement, user, fake_llm, runner):
    from asgiref.sync import async_to_sync

    from judgements.intake.start import Submission, submit

    split_votes(fake_llm)
    case = {**case_for(), "hold_contested": True}
    judgement = submit([validated(case)], Submission(creator=user)).judgement
    async_to_sync(runner.run_judgement)(judgement.pk)
    return Judgement.objects.get(pk=judgement.pk)


def test_the_live_page_shows_the_mark_and_why(held, user):
    client = Client()
    client.force_login(user)
    page = client.get(held.get_absolute_url()).content.decode()
    assert 'data-status="held"' in page
    assert "Contested: held for a person" in page
    assert "The panel split 2-1: Casper decided reject against the others&#x27; approve." in page
    assert "Confirm the panel" not in page  # ada may not review


def test_a_reviewer_confirms_from_the_queue_page(held, staff):
    client = Client()
    client.force_login(staff)
    queue = client.get(reverse("review-queue")).content.decode()
    assert held.get_absolute_url() in queue
    page = client.get(held.get_absolute_url()).content.decode()
    assert "Confirm the panel's verdict (Approved)" in page
    response = client.post(reverse("judgement-confirm", args=[held.pk]), {"confirm-reason": " "})
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()
    response = client.post(reverse("judgement-confirm", args=[held.pk]), {"confirm-reason": REASON})
    assert response.status_code == 302
    page = client.get(held.get_absolute_url()).content.decode()
    assert "Confirmed: Approve" in page
    assert 'data-status="approved"' in page
    assert held.get_absolute_url() not in client.get(reverse("review-queue")).content.decode()


def test_the_queue_page_needs_the_permission(held, user):
    client = Client()
    client.force_login(user)
    assert client.get(reverse("review-queue")).status_code == 403
    assert "Review queue" not in client.get(reverse("judgement-list")).content.decode()


def test_the_history_filters_by_the_mark(held, make_judgement, user, fake_llm):
    from asgiref.sync import async_to_sync

    from judgements.engine.runner import EngineRunner

    fake_llm.script("model-c", votes="AAA")
    calm = make_judgement(creator=user, title="Calm trip")
    # A runner of its own: the fixture's belongs to the event loop that ran `held`.
    async_to_sync(EngineRunner().run_judgement)(calm.pk)
    client = Client()
    client.force_login(user)
    contested = client.get(reverse("judgement-list"), {"contested": "yes"}).content.decode()
    assert held.get_absolute_url() in contested and calm.get_absolute_url() not in contested
    # No certificate holds for the panel: the calm verdict is unmeasured, never "no".
    unmeasured = client.get(reverse("judgement-list"), {"contested": "unmeasured"})
    assert held.get_absolute_url() not in unmeasured.content.decode()
    assert calm.get_absolute_url() in unmeasured.content.decode()
    uncontested = client.get(reverse("judgement-list"), {"contested": "no"}).content.decode()
    assert calm.get_absolute_url() not in uncontested
    everything = client.get(reverse("judgement-list"), {"contested": "bogus"}).content.decode()
    assert held.get_absolute_url() in everything and calm.get_absolute_url() in everything


# --- live pages --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "body"),
    [("confirm", {"reason": REASON}), ("override", {"decision": "reject", "reason": REASON})],
)
async def test_a_review_is_announced_to_open_live_pages(fake_llm, api, staff_api, action, body):
    from channels.layers import get_channel_layer

    from judgements.infrastructure.events import group_name_for

    split_votes(fake_llm)
    result = await submit_and_run(api, hold_contested=True)
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group_name_for(result["id"]), channel)
    status, _ = await review(staff_api, result["id"], action, body)
    assert status == 201
    async with asyncio.timeout(10):  # a bound on failure, not an ordering
        event = await layer.receive(channel)
    assert (event["kind"], event["judgement_id"]) == ("reviewed", result["id"])


def test_the_admin_filters_by_the_mark_and_shows_why(held, admin_client):
    listing = admin_client.get("/admin/judgements/judgement/", {"contested__exact": "1"})
    assert held.title in listing.content.decode()
    listing = admin_client.get("/admin/judgements/judgement/", {"contested__exact": "0"})
    assert f"/admin/judgements/judgement/{held.pk}/change/" not in listing.content.decode()
    page = admin_client.get(f"/admin/judgements/judgement/{held.pk}/change/").content.decode()
    assert "The panel split 2-1: Casper decided reject against the others&#x27; approve." in page
