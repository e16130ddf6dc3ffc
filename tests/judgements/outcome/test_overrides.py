"""A human's verdict over the panel's: API, live page, list and admin, with its audit
(judgements/outcome/overrides.py)."""

import json

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from judgements.configuration import teams
from judgements.intake.start import Submission, submit
from judgements.models import ApiToken, Confirmation, Judgement, Override, Panel, Status, Team
from tests.support.api_client import token_client
from tests.support.cases import case_for, validated
from tests.support.states import bring

pytestmark = pytest.mark.django_db(transaction=True)

REASON = "The panel misread the itinerary; ops checked it by hand."


@pytest.fixture
def finished(make_judgement, user):
    """A judgement of ada's the panel rejected."""
    judgement = make_judgement(creator=user)
    bring(Judgement.objects.filter(pk=judgement.pk), Status.REJECTED, finished_at=timezone.now())
    return judgement


async def override_via_api(client, judgement_id, body):
    response = await client.post(
        f"/api/judgements/{judgement_id}/override",
        json.dumps(body),
        content_type="application/json",
    )
    return response.status_code, response.json()


# --- API ------------------------------------------------------------------------------


async def test_staff_override_through_the_api_keeps_the_panels_verdict(fake_llm, finished, staff):
    client = await sync(token_client)(staff)
    status, body = await override_via_api(
        client, finished.pk, {"decision": "approve", "reason": REASON}
    )
    assert status == 201
    assert (body["status"], body["panel_status"]) == ("approved", "rejected")
    assert body["override"]["by"] == "ops"
    assert body["override"]["decision"] == "approve"
    assert body["override"]["reason"] == REASON
    read = (await client.get(f"/api/judgements/{finished.pk}/")).json()
    assert read == body
    audit = await Override.objects.select_related("by").aget(judgement_id=finished.pk)
    assert (audit.by.username, audit.panel_status, audit.decision) == ("ops", "rejected", "approve")
    # The panel's verdict is untouched.
    assert (await Judgement.objects.aget(pk=finished.pk)).status == Status.REJECTED


async def test_a_second_override_is_refused(fake_llm, finished, staff):
    client = await sync(token_client)(staff)
    await override_via_api(client, finished.pk, {"decision": "approve", "reason": REASON})
    status, body = await override_via_api(
        client, finished.pk, {"decision": "reject", "reason": "changed my mind"}
    )
    assert status == 409 and "already overridden" in body["error"]
    audit = await Override.objects.aget(judgement_id=finished.pk)
    assert (audit.decision, audit.reason) == ("approve", REASON)


async def test_an_unfinished_judgement_cannot_be_overridden(fake_llm, make_judgement, staff):
    judgement = await sync(make_judgement)()
    client = await sync(token_client)(staff)
    status, body = await override_via_api(
        client, judgement.pk, {"decision": "approve", "reason": REASON}
    )
    assert status == 409 and "only a finished judgement" in body["error"]
    assert await Override.objects.acount() == 0


@pytest.mark.parametrize(
    ("body", "code", "fields"),
    [
        # Schema-valid (a non-empty string), blank by the reason's rule: 422.
        ({"decision": "approve", "reason": "   "}, 422, ["reason"]),
        ({"decision": "approve"}, 400, ["reason"]),
        ({"decision": "maybe", "reason": REASON}, 400, ["decision"]),
        ({"reason": REASON, "decision": "approve", "by": "mallory"}, 400, ["by"]),
        ([], 400, ["body"]),
    ],
)
async def test_it_names_the_invalid_override_fields(fake_llm, finished, staff, body, code, fields):
    client = await sync(token_client)(staff)
    status, answer = await override_via_api(client, finished.pk, body)
    assert status == code and sorted(answer["errors"]) == fields
    assert await Override.objects.acount() == 0


async def test_overriding_needs_the_permission(fake_llm, finished, user):
    client = await sync(token_client)(user)
    status, body = await override_via_api(
        client, finished.pk, {"decision": "approve", "reason": REASON}
    )
    assert status == 403 and "permission" in body["error"]
    permission = await Permission.objects.aget(codename="override_judgement")
    await sync(user.user_permissions.add)(permission)
    status, body = await override_via_api(
        client, finished.pk, {"decision": "approve", "reason": REASON}
    )
    assert status == 201 and body["override"]["by"] == "ada"


async def test_another_users_judgement_is_not_found_to_override(fake_llm, finished, other_user):
    permission = await Permission.objects.aget(codename="override_judgement")
    await sync(other_user.user_permissions.add)(permission)
    client = await sync(token_client)(other_user)
    status, _ = await override_via_api(
        client, finished.pk, {"decision": "approve", "reason": REASON}
    )
    assert status == 404


# --- the live page and the list --------------------------------------------------------


def logged_in(user, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def test_the_page_shows_the_form_only_to_permitted_users_once_finished(
    finished, make_judgement, staff, user
):
    url = finished.get_absolute_url()
    assert 'name="reason"' in logged_in(staff).get(url).content.decode()
    assert 'name="reason"' not in logged_in(user).get(url).content.decode()
    queued = make_judgement(creator=user)
    assert 'name="reason"' not in logged_in(staff).get(queued.get_absolute_url()).content.decode()


def test_the_page_override_shows_both_verdicts_and_refuses_a_second(finished, staff):
    client = logged_in(staff)
    url = reverse("judgement-override", args=[finished.pk])
    response = client.post(url, {"decision": "approve", "reason": REASON})
    assert response.status_code == 302 and response["Location"] == finished.get_absolute_url()
    page = client.get(finished.get_absolute_url()).content.decode()
    assert 'data-status="approved"' in page and 'data-panel-status="rejected"' in page
    assert "Overridden: Approve" in page and "panel's verdict was <strong>Rejected" in page
    assert "The panel misread the itinerary" in page
    assert 'name="reason"' not in page
    listed = client.get(reverse("judgement-list")).content.decode()
    assert "overridden by ops; panel: Rejected" in listed
    again = client.post(url, {"decision": "reject", "reason": "no"})
    assert again.status_code == 409
    assert "already overridden" in again.content.decode()
    assert Override.objects.get().decision == "approve"


def test_the_page_puts_errors_next_to_the_fields_and_keeps_the_input(finished, staff):
    client = logged_in(staff)
    url = reverse("judgement-override", args=[finished.pk])
    response = client.post(url, {"decision": "approve", "reason": "  \n "})
    page = response.content.decode()
    assert response.status_code == 400
    assert 'data-field="reason"' in page
    assert 'id="id_reason_error"' in page and "This field is required" in page
    response = client.post(url, {"decision": "", "reason": "<b>kept</b>"})
    page = response.content.decode()
    assert response.status_code == 400 and 'id="id_decision_error"' in page
    assert "&lt;b&gt;kept&lt;/b&gt;</textarea>" in page
    assert Override.objects.count() == 0


def test_the_page_override_needs_csrf_and_the_permission(finished, staff, user):
    url = reverse("judgement-override", args=[finished.pk])
    body = {"decision": "approve", "reason": REASON}
    assert logged_in(staff, csrf=True).post(url, body).status_code == 403
    assert logged_in(user).post(url, body).status_code == 403
    assert Override.objects.count() == 0


# --- four eyes ------------------------------------------------------------------------

# Written by a user, so the page must escape it.
PANEL_NAME = 'Refunds <b>"EU"</b>'


@pytest.fixture
def own_on_four_eyes(fake_llm, settings, user, other_user):
    """ada's own contested judgement, of a panel with four eyes that ada and bob review."""
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [user, other_user], None)
    panel = Panel.objects.create(
        name=PANEL_NAME, owner=user, team=team, agents=case_for()["agents"]
    )
    teams.set_reviewing(panel, None, reviewers=[user, other_user], four_eyes=True)
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    case = {key: value for key, value in case_for().items() if key != "agents"}
    judgement = submit([validated({**case, "panel": panel.pk})], Submission(creator=user)).judgement
    bring(
        Judgement.objects.filter(pk=judgement.pk),
        Status.APPROVED,
        contested=True,
        finished_at=timezone.now(),
    )
    return Judgement.objects.get(pk=judgement.pk)


def four_eyes_message(judgement: Judgement) -> str:
    return (
        f'Four eyes: you started judgement {judgement.pk}, and its panel "{PANEL_NAME}" lets '
        "nobody confirm or override a judgement they started. Another of its reviewers "
        "(bob) or staff may review it."
    )


def test_the_api_tells_a_reviewer_their_own_judgement_is_four_eyes(
    own_on_four_eyes, user, other_user
):
    def post(by, action: str, body: dict):
        client = Client(headers={"Authorization": f"Bearer {ApiToken.issue(by, 'ci')[1]}"})
        url = f"/api/judgements/{own_on_four_eyes.pk}/{action}"
        return client.post(url, json.dumps(body), content_type="application/json")

    for action, body in [
        ("confirm", {"reason": REASON}),
        ("override", {"decision": "reject", "reason": REASON}),
    ]:
        refused = post(user, action, body)
        assert refused.status_code == 403
        assert refused.json()["error"] == four_eyes_message(own_on_four_eyes)
    assert not Confirmation.objects.exists() and not Override.objects.exists()
    # The reviewer it names may.
    assert post(other_user, "confirm", {"reason": REASON}).status_code == 201


def test_the_page_tells_a_reviewer_their_own_judgement_is_four_eyes(own_on_four_eyes, user):
    client = logged_in(user)
    said = escape(four_eyes_message(own_on_four_eyes))
    assert "&lt;b&gt;" in said
    # The live page says why there is no form, and who reviews instead.
    page = client.get(own_on_four_eyes.get_absolute_url()).content.decode()
    assert 'name="reason"' not in page
    assert f'<p class="four-eyes" role="note">{said}</p>' in page
    # A form posted anyway: the page again, in the site's layout, saying why.
    for name, body in [
        ("judgement-confirm", {"reason": REASON}),
        ("judgement-override", {"decision": "reject", "reason": REASON}),
    ]:
        refused = client.post(reverse(name, args=[own_on_four_eyes.pk]), body)
        page = refused.content.decode()
        assert refused.status_code == 403
        assert "<title>" in page and 'id="judgement-override"' in page
        assert f'<p class="field-error override-refusal" role="alert">{said}</p>' in page
        assert PANEL_NAME not in page
    assert not Confirmation.objects.exists() and not Override.objects.exists()


def test_a_user_who_does_not_review_is_told_so_in_a_page(finished, user):
    response = logged_in(user).post(
        reverse("judgement-confirm", args=[finished.pk]), {"reason": REASON}
    )
    assert response.status_code == 403
    page = response.content.decode()
    assert "<title>" in page
    assert "You do not have the permission to review judgements." in page
    assert not Confirmation.objects.exists()


# --- the admin ------------------------------------------------------------------------


def test_the_admin_overrides_and_shows_the_audit_read_only(admin_client, finished):
    change = reverse("admin:judgements_judgement_change", args=[finished.pk])
    assert "Override the panel" in admin_client.get(change).content.decode()
    url = reverse("admin:judgements_judgement_override", args=[finished.pk])
    assert admin_client.get(url).status_code == 200
    empty = admin_client.post(url, {"decision": "approve", "reason": ""})
    assert empty.status_code == 400 and "This field is required." in empty.content.decode()
    done = admin_client.post(url, {"decision": "approve", "reason": REASON})
    assert done.status_code == 302
    page = admin_client.get(change).content.decode()
    assert "overridden by admin" in page or "by admin" in page
    assert "the panel's verdict: Rejected" in page
    listed = admin_client.get(reverse("admin:judgements_judgement_changelist")).content
    assert b"Approved (overridden by admin)" in listed
    again = admin_client.post(url, {"decision": "reject", "reason": "no"})
    assert again.status_code == 409 and "already overridden" in again.content.decode()
    audit = Override.objects.get()
    audit_change = reverse("admin:judgements_override_change", args=[audit.pk])
    assert admin_client.get(audit_change).status_code == 200
    assert admin_client.post(audit_change, {"reason": "edited"}).status_code == 403
    delete = reverse("admin:judgements_override_delete", args=[audit.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert Override.objects.get().reason == REASON


def sync(func):
    from asgiref.sync import sync_to_async

    return sync_to_async(func)


def test_the_page_offers_only_the_decision_not_in_force(finished, staff):
    client = logged_in(staff)
    page = client.get(finished.get_absolute_url()).content.decode()
    # Rejected: the form offers Approve alone, already chosen.
    assert 'value="approve"' in page and 'value="reject"' not in page
    url = reverse("judgement-override", args=[finished.pk])
    same = client.post(url, {"decision": "reject", "reason": REASON})
    assert same.status_code == 400
    assert "Select a valid choice. reject is not one of the available choices." in (
        same.content.decode()
    )
    assert Override.objects.count() == 0
