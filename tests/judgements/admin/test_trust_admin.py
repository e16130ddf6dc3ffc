"""The verdict's mark in the admin (issue 34): a judgement's trust, confidences, certificate
and checks; each round decision's P(approve); the read-only certificates, reached from
their panel."""

import re
from datetime import UTC, datetime

import pytest
from asgiref.sync import async_to_sync
from django.urls import reverse
from django.utils.html import escape

from judgements.engine.runner import EngineRunner
from judgements.models import Certificate, Judgement, JudgementCheck, Trust, agents_fingerprint
from judgements.outcome.answers import trust_words
from tests.support.states import bring

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def checked(fake_llm, make_judgement, settings):
    """A judgement run with every check beside the vote; the second opinion disagrees."""
    settings.MAGI_CONFIDENCE_PROBE = True
    settings.MAGI_SECOND_OPINION = True
    settings.MAGI_INJECTION_SCREEN = True
    fake_llm.script("model-a", confidence=0.8, opinion="reject")
    judgement = make_judgement(title="Checked trip")
    assert async_to_sync(EngineRunner().run_judgement)(judgement.pk)
    return Judgement.objects.get(pk=judgement.pk)


def certificate_of(panel, **fields) -> Certificate:
    values = {
        "panel": panel,
        "agents": panel.agents,
        "fingerprint": agents_fingerprint(panel.agents),
        "target": 0.9,
        "delta": 0.1,
        "samples": 28,
        "certified": True,
        "rule": {"source": "answer", "threshold": 0.95, "absent": []},
        "coverage": 25 / 28,
        "accuracy": 1.0,
        "bound": 0.912,
        "kept": 25,
        "runs": [7],
        "created_at": datetime(2026, 5, 4, 9, 30, tzinfo=UTC),
    }
    return Certificate.objects.create(**(values | fields))


def test_a_judgement_shows_its_trust_confidences_and_checks(admin_client, checked):
    url = reverse("admin:judgements_judgement_change", args=[checked.pk])
    html = admin_client.get(url).content.decode()
    assert checked.trust == Trust.CONTESTED
    assert escape(trust_words(checked) or "") in html
    assert "from the answers 80 %; from the probes 80 %" in html
    # Each check as the call it was: its finding, and its chat folded under it.
    rows = re.findall(
        r"<tr>\s*<td>(Confidence probe|Second opinion|Injection screen)</td>"
        r"<td>([^<]*)</td><td>(\d)</td>\s*<td>([^<]*)</td>",
        html,
    )
    assert sorted(rows) == sorted(
        [
            ("Confidence probe", "Melchior", "1", "P(approve) 0.800"),
            ("Confidence probe", "Balthasar", "1", "P(approve) 0.900"),
            ("Confidence probe", "Casper", "1", "P(approve) 0.900"),
            ("Second opinion", "—", "1", "decided Reject; P(approve) 0.200"),
            ("Injection screen", "—", "1", "not steered"),
        ]
    )
    screen = JudgementCheck.objects.get(judgement=checked, kind="screen")
    assert escape(screen.request["messages"][0]["content"]) in html
    # Each round decision's own P(approve).
    assert "<th>P(approve)</th>" in html
    assert html.count("<td>0.800</td>") == 3
    listing = admin_client.get(reverse("admin:judgements_judgement_changelist")).content.decode()
    assert '<td class="field-trust_display">contested</td>' in listing
    filtered = admin_client.get(
        reverse("admin:judgements_judgement_changelist") + "?trust__exact=unmeasured"
    )
    assert b"Checked trip" not in filtered.content


def test_a_judgement_links_the_certificate_its_mark_was_read_against(
    admin_client, make_judgement, make_panel
):
    panel = make_panel()
    certificate = certificate_of(panel)
    judgement = make_judgement()
    bring(
        Judgement.objects.filter(pk=judgement.pk),
        "approved",
        trust=Trust.NOT_CONTESTED,
        contested=False,
        certificate=certificate,
    )
    html = admin_client.get(
        reverse("admin:judgements_judgement_change", args=[judgement.pk])
    ).content.decode()
    assert reverse("admin:judgements_certificate_change", args=[certificate.pk]) in html
    assert "Not contested. Accuracy at least 91.2%" in html
    assert "from the answers unknown; from the probes unknown" in html
    assert "No checks: none was asked for this judgement." in html


def test_certificates_are_listed_read_only_and_reached_from_their_panel(admin_client, make_panel):
    panel = make_panel(name="<i>Gate</i>")
    other = make_panel(name="Other desk")
    certificate_of(panel)
    voided = certificate_of(
        panel,
        certified=False,
        rule=None,
        bound=None,
        coverage=None,
        best={"bound": 0.81, "coverage": 1.0, "description": "every verdict"},
        voided_at=datetime(2026, 5, 6, tzinfo=UTC),
        void_reason="An agent's model or criteria changed after it was measured.",
    )
    certificate_of(other)
    panel_page = admin_client.get(
        reverse("admin:judgements_panel_change", args=[panel.pk])
    ).content.decode()
    link = reverse("admin:judgements_certificate_changelist") + f"?panel__id__exact={panel.pk}"
    assert f'<a href="{escape(link)}">2 certificates</a>' in panel_page
    listing = admin_client.get(link)
    assert listing.status_code == 200
    html = listing.content.decode()
    assert html.count("&lt;i&gt;Gate&lt;/i&gt;") == 2 and "Other desk" not in html
    assert "<i>Gate</i>" not in html
    assert '<td class="field-bound_display">91.2 %</td>' in html
    assert '<td class="field-coverage_display">89.3 %</td>' in html
    page = admin_client.get(reverse("admin:judgements_certificate_change", args=[voided.pk]))
    text = page.content.decode()
    assert page.status_code == 200
    assert "No rule reaches 90% accuracy at confidence 90% on 28 labelled verdicts" in text
    assert escape("An agent's model or criteria changed after it was measured.") in text
    url = reverse("admin:judgements_certificate_change", args=[voided.pk])
    assert admin_client.post(url, {"certified": "on"}).status_code == 403
    delete = reverse("admin:judgements_certificate_delete", args=[voided.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert admin_client.get(reverse("admin:judgements_certificate_add")).status_code == 403
    assert Certificate.objects.count() == 3
