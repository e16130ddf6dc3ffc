from collections import Counter

import pytest
from asgiref.sync import async_to_sync
from django.urls import reverse
from django.utils.html import escape

from judgements.engine.runner import EngineRunner
from judgements.evaluations import runs, suites
from judgements.models import Judgement, LLMAttempt, Panel, RoundDecision
from tests.support.cases import case_for
from tests.support.stories import three_level_story

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def judged(fake_llm, make_judgement):
    fake_llm.script("model-b", failures={1: ["500"]}, reason="<b>bold</b> claim")
    judgement = make_judgement()
    async_to_sync(EngineRunner().run_judgement)(judgement.pk)
    return judgement


def test_the_history_lists_newest_first_with_short_columns(admin_client, judged, make_judgement):
    newer = make_judgement(title="Newer one")
    html = admin_client.get(reverse("admin:judgements_judgement_changelist")).content.decode()
    assert html.index("Newer one") < html.index("Trip to Japan")
    # The agents are on the change page; the list keeps to columns that fit at 1280 px.
    assert "Melchior (model-a)" not in html and "column-duration_display" in html
    newer_link = reverse("admin:judgements_judgement_change", args=[newer.pk])
    older_link = reverse("admin:judgements_judgement_change", args=[judged.pk])
    assert html.index(newer_link) < html.index(older_link)


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ("?status__exact=approved", True),
        ("?status__exact=error", False),
        ("?decision=approve", True),
        ("?decision=reject", False),
        ("?model=model-a", True),
        ("?model=gpt-other", False),
        ("?q=Japan", True),
        ("?q=Balthasar", True),
        ("?q=travel", True),
        ("?q=nothing-like-it", False),
    ],
)
def test_it_filters_and_searches(admin_client, judged, query, shown):
    html = admin_client.get(reverse("admin:judgements_judgement_changelist") + query).content
    assert (b"Trip to Japan" in html) is shown


def test_a_judgement_shows_agents_decisions_and_attempts_escaped(admin_client, judged):
    url = reverse("admin:judgements_judgement_change", args=[judged.pk])
    html = admin_client.get(url).content.decode()
    assert "Melchior" in html and "Casper" in html
    assert "&lt;b&gt;bold&lt;/b&gt; claim" in html and "<b>bold</b>" not in html
    assert "HTTP 500: scripted failure 500" in html  # the failed attempt is on record
    assert html.count("<tr><td>Balthasar</td>") == 3  # three round decisions


def test_an_attempt_reads_as_the_chat_it_was(admin_client, judged):
    attempt = LLMAttempt.objects.filter(agent__judgement=judged, outcome="ok").first()
    assert attempt is not None
    url = reverse("admin:judgements_llmattempt_change", args=[attempt.pk])
    html = admin_client.get(url).content.decode()
    system, user = attempt.request["messages"][0], attempt.request["messages"][1]
    assert '<span class="magi-role">system</span>' in html
    assert escape(system["content"]) in html and escape(user["content"]) in html
    assert "\\n" not in html  # not a dict dump with escaped line breaks
    assert escape(attempt.response_text) in html
    listing = admin_client.get(reverse("admin:judgements_llmattempt_changelist")).content
    assert b"Trip to Japan" in listing
    assert admin_client.post(url, {"round": "2"}).status_code == 403


def test_a_judgement_shows_its_tokens_with_the_cached_share(admin_client, judged):
    attempts = LLMAttempt.objects.filter(agent__judgement=judged, outcome="ok")
    cached = [a.cached_tokens for a in attempts]
    # Each model's first prompt repeats nothing it was sent; later ones repeat a prefix.
    for model in ("model-a", "model-c"):
        by_round = [a.cached_tokens for a in attempts.filter(model=model).order_by("round")]
        assert by_round[0] == 0 and all(c is not None and c > 0 for c in by_round[1:]), by_round
    decisions = RoundDecision.objects.filter(agent__judgement=judged)
    assert Counter(d.cached_tokens for d in decisions) == Counter(cached)
    url = reverse("admin:judgements_judgement_change", args=[judged.pk])
    html = admin_client.get(url).content.decode()
    total = sum(c for c in cached if c is not None)
    assert None not in cached  # every answer reported its cached tokens
    # Nine answered calls of 100 prompt tokens each (the failed attempt reported none).
    assert f"prompt 900, of which cached {total} ({total / 9:.0f} %); completion 180" in html


def test_audit_records_cannot_be_changed_or_deleted(admin_client, judged):
    judgement_url = reverse("admin:judgements_judgement_change", args=[judged.pk])
    response = admin_client.post(judgement_url, {"title": "rewritten", "status": "rejected"})
    assert response.status_code == 403
    delete_url = reverse("admin:judgements_judgement_delete", args=[judged.pk])
    assert admin_client.post(delete_url, {"post": "yes"}).status_code == 403
    decision = RoundDecision.objects.first()
    assert decision is not None
    decision_url = reverse("admin:judgements_rounddecision_change", args=[decision.pk])
    assert admin_client.post(decision_url, {"decision": "reject"}).status_code == 403
    assert admin_client.get(reverse("admin:judgements_judgement_add")).status_code == 403
    judged.refresh_from_db()
    assert judged.title == "Trip to Japan"
    assert RoundDecision.objects.count() == 9
    assert LLMAttempt.objects.count() == 10
    assert Judgement.objects.count() == 1


def test_it_lists_panels_suites_and_runs_escaped(admin_client, fake_llm, user):
    agents = case_for()["agents"]
    Panel.objects.create(name="<i>Gate</i>", owner=user, agents=agents)
    suite = suites.import_suite(
        name="<b>Cases</b>",
        description="",
        owner=user,
        data='{"id": "c1", "content": "<script>x</script>", "expected": "approve"}\n',
    )
    run = runs.start_run(
        panel=None, agents=agents, panel_name="Typed", suite=suite, repeats=1, creator=user
    )
    panels = admin_client.get(reverse("admin:judgements_panel_changelist")).content.decode()
    assert "&lt;i&gt;Gate&lt;/i&gt;" in panels and "<i>Gate" not in panels
    suite_page = admin_client.get(reverse("admin:judgements_suite_change", args=[suite.pk]))
    assert "c1" in suite_page.content.decode()
    assert "<script>x" not in suite_page.content.decode()
    page = admin_client.get(reverse("admin:judgements_evaluationrun_changelist"))
    assert "Typed" in page.content.decode()
    change_url = reverse("admin:judgements_evaluationrun_change", args=[run.pk])
    assert admin_client.post(change_url, {"repeats": 5}).status_code == 403


def test_the_audit_chain_is_shown_to_superusers_only_and_never_changed(
    admin_client, judged, client, django_user_model
):
    from judgements.models import ChainEntry

    listed = admin_client.get(reverse("admin:judgements_chainentry_changelist"))
    assert listed.status_code == 200
    assert f"judgement {judged.pk}" in listed.content.decode()
    verdict = ChainEntry.objects.get(judgement_id=judged.pk, kind="verdict")
    change = reverse("admin:judgements_chainentry_change", args=[verdict.pk])
    assert admin_client.post(change, {"payload": "{}"}).status_code == 403
    delete = reverse("admin:judgements_chainentry_delete", args=[verdict.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert ChainEntry.objects.get(pk=verdict.pk).payload == verdict.payload
    staff = django_user_model.objects.create_user("ops", password="pw", is_staff=True)
    client.force_login(staff)
    assert client.get(reverse("admin:judgements_chainentry_changelist")).status_code == 403


def test_deleting_a_user_in_the_admin_audits_the_user_their_budget_and_their_token(
    admin_client, django_user_model
):
    """Issue 55: deletions through the admin leave audit rows (and log entries), for what
    the deletion takes along too (configuration/deletions.py)."""
    from judgements.models import ApiToken, AuditEntry, Budget, ChainEntry

    gone = django_user_model.objects.create_user("leaving")
    budget = Budget.objects.create(user=gone, period="day", limit_tokens=5)
    token, _ = ApiToken.issue(gone, "ci")
    url = reverse("admin:auth_user_delete", args=[gone.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    deleted = AuditEntry.objects.filter(after__isnull=True).order_by("pk")
    assert sorted(deleted.values_list("target", flat=True)) == sorted(
        [f"user {gone.pk}", f"budget {budget.pk}", f"token {token.pk}"]
    )
    audited = ChainEntry.objects.filter(kind="configuration").values_list("subject", flat=True)
    assert f"token {token.pk}" in list(audited)


def test_deleting_selected_panels_in_the_admin_audits_each(admin_client, user):
    from judgements.models import AuditEntry

    made = [Panel.objects.create(name=f"p{n}", owner=user, agents=[]) for n in range(2)]
    url = reverse("admin:judgements_panel_changelist")
    answer = admin_client.post(
        url, {"action": "delete_selected", "_selected_action": [p.pk for p in made], "post": "yes"}
    )
    assert answer.status_code == 302
    targets = set(AuditEntry.objects.filter(after__isnull=True).values_list("target", flat=True))
    assert targets == {f"panel {p.pk}" for p in made}


def test_a_user_made_staff_in_the_admin_is_audited(admin_client):
    """Issue 55: the admin's user form is audited as people.py audits a user, so `audit
    verify` (configuration/live_state.py compares the staff role) finds it in the log."""
    from judgements.audit import verification
    from judgements.configuration import live_state, people
    from judgements.models import AuditEntry, AuditSubject
    from tests.support.audit_history import placed

    maker = people.create_user(None, "maker", "maker@example.com")
    form = {"username": "maker", "email": "maker@example.com", "is_active": "on"}
    form |= {"is_staff": "on", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    url = reverse("admin:auth_user_change", args=[maker.pk])
    assert admin_client.post(url, form).status_code == 302
    last = AuditEntry.objects.filter(subject=AuditSubject.USER).order_by("pk").last()
    assert last is not None and last.after == people.state(maker.__class__.objects.get(pk=maker.pk))
    assert last.after["is_staff"] is True
    placed()
    report = verification.verify(
        verification.trust_beside_the_data(), None, [live_state.differences]
    )
    assert report.clean, report.problems


def test_each_level_s_row_says_its_own_decision_and_whether_it_escalated(
    admin_client, make_panel, make_judgement
):
    """Issue 70: the admin showed the story's verdict and "contested" on levels that need
    no person. Levels 1 (Rejected) and 2 (Approved) escalated; level 3's Rejected is in
    force."""
    first, second, third = three_level_story(make_panel, make_judgement)
    html = admin_client.get(reverse("admin:judgements_judgement_changelist")).content.decode()

    def row(level: Judgement) -> str:
        link = reverse("admin:judgements_judgement_change", args=[level.pk])
        return html.split(f'href="{link}"', 1)[1].split("</tr>", 1)[0]

    assert "Rejected, escalated to level 2 (the story&#x27;s verdict: Rejected)" in row(first)
    assert "Approved, escalated to level 3 (the story&#x27;s verdict: Rejected)" in row(second)
    for escalated in (first, second):
        assert '<td class="field-trust_display">escalated</td>' in row(escalated)
    assert '<td class="field-verdict_display">Rejected</td>' in row(third)
    assert '<td class="field-trust_display">not measured</td>' in row(third)
