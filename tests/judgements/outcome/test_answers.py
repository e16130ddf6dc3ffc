"""What every surface reports (judgements/outcome/answers.py): built from the records by
the pydantic models the API documents, so the API, the JSON export, a webhook and the
MCP tools send one shape."""

import pytest
from django.test import Client
from django.urls import reverse

from judgements.models import Judgement, WebhookDelivery
from judgements.outcome import answers, webhooks
from judgements.outcome.results import result_of

pytestmark = pytest.mark.django_db


def test_the_api_the_export_and_a_webhook_send_one_answer(make_judgement, user):
    judgement = make_judgement(creator=user)
    Judgement.objects.filter(pk=judgement.pk).update(callback_url="https://example.com/hook")
    expected = answers.Judgement.from_record(Judgement.objects.with_results().get(pk=judgement.pk))
    # What the API's views answer (and the MCP tools send as JSON).
    assert result_of(judgement.pk) == expected
    browser = Client()
    browser.force_login(user)
    exported = browser.get(reverse("judgement-export-json", args=[judgement.pk]))
    assert exported.json() == expected.as_json()
    webhooks.enqueue(judgement.pk, webhooks.EVENTS[0])
    payload = WebhookDelivery.objects.get(judgement=judgement).payload
    assert payload == {"event": webhooks.EVENTS[0], **expected.as_json()}


def test_an_answer_refuses_a_field_it_does_not_describe():
    with pytest.raises(ValueError, match="extra"):
        answers.PanelLink.model_validate({"id": 1, "name": "Desk", "owner": "someone"})
