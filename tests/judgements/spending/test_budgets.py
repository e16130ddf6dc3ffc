"""Spending limits (judgements/spending/budgets.py): counted from the stored calls, checked
before anything is stored or called, named with their reset in the refusal."""

import email.message
import io
import json
import urllib.error
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from judgements.intake.start import Submission, submit
from judgements.models import (
    Agent,
    AuditEntry,
    AuditSubject,
    Budget,
    Judgement,
    LLMAttempt,
    Status,
)
from judgements.spending import budgets
from magi_client import gate
from magi_client.http import OverBudget, refusal
from tests.support.cases import case_for, json_case
from tests.support.evaluations import SUITE, start

pytestmark = pytest.mark.django_db

NINE_CALLS = 9


@pytest.fixture(autouse=True)
def no_rate_limits(settings, fake_llm):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    settings.MAGI_LLM_MAX_TOKENS = 100


def spend(judgement: Judgement, tokens: int, *, when=None) -> None:
    """A stored call of `tokens` prompt tokens, as the engine stores one."""
    agent = Agent.objects.filter(judgement=judgement).earliest("position")
    LLMAttempt.objects.create(
        agent=agent, round=1, attempt=1, model=agent.model, provider="default", request={},
        outcome="ok", prompt_tokens=tokens, completion_tokens=0,
        started_at=when or timezone.now(),
    )  # fmt: skip


def test_no_history_is_estimated_at_nine_calls_of_the_maximum(user):
    assert budgets.estimate(None, ["model-a", "model-b", "model-c"]).tokens == NINE_CALLS * 100


def test_it_refuses_what_the_budget_cannot_cover_and_names_it_with_its_reset(user):
    Budget.objects.create(user=user, period="day", limit_tokens=2_000)
    first = submit([json_case()], Submission(creator=user)).judgement
    spend(first, 1_500)
    with pytest.raises(budgets.BudgetExceeded) as refused:
        submit([json_case()], Submission(creator=user))
    message = refused.value.message
    assert "the budget of 2,000 tokens a day for the user ada" in message
    tomorrow = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%d") + " 00:00 UTC"
    assert tomorrow in message
    assert Judgement.objects.filter(creator=user).count() == 1  # nothing stored


def test_the_next_period_accepts_it(user):
    Budget.objects.create(user=user, period="day", limit_tokens=2_000)
    first = submit([json_case()], Submission(creator=user)).judgement
    spend(first, 1_500, when=timezone.now() - timedelta(days=1))
    assert submit([json_case()], Submission(creator=user)).judgement.pk


def test_a_run_is_refused_as_a_whole(user):
    from judgements.evaluations import suites

    suite = suites.import_suite(name="Gate cases", description="", owner=user, data=SUITE)
    cases = suite.cases.count()
    Budget.objects.create(user=user, period="month", limit_tokens=NINE_CALLS * 100 * cases - 1)
    with pytest.raises(budgets.BudgetExceeded):
        start(suite, user)
    assert not Judgement.objects.filter(evaluation_run__isnull=False).exists()


def test_a_usd_budget_counts_with_prices_and_refuses_without_them(user, settings):
    settings.MAGI_MODEL_PRICES = {
        m: {"prompt": 10.0, "completion": 10.0} for m in ("model-a", "model-b", "model-c")
    }
    budget = Budget.objects.create(user=user, period="month", limit_usd=Decimal("0.02"))
    # Nine calls of 100 tokens at 10 USD a million: 0.009 USD estimated.
    first = submit([json_case()], Submission(creator=user)).judgement
    spend(first, 1_200)  # 0.012 USD
    assert budgets.state_of(budget).spent.usd == pytest.approx(0.012)
    with pytest.raises(budgets.BudgetExceeded):
        submit([json_case()], Submission(creator=user))  # 0.012 + 0.009 > 0.02
    # Without a price for the models, a budget in money cannot vouch for a start.
    settings.MAGI_MODEL_PRICES = {}
    with pytest.raises(budgets.BudgetExceeded):
        submit([json_case()], Submission(creator=user))


# Transactional: the engine and the API reach the database from their own threads.
@pytest.mark.django_db(transaction=True)
def test_a_running_judgement_is_never_cut_off(user, runner):
    from asgiref.sync import async_to_sync

    Budget.objects.create(user=user, period="day", limit_tokens=1_000)
    judgement = submit([json_case()], Submission(creator=user)).judgement
    spend(judgement, 5_000)  # over, while it waits to run
    assert async_to_sync(runner.run_judgement)(judgement.pk)
    judgement.refresh_from_db()
    assert judgement.status in (Status.APPROVED, Status.REJECTED)


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_402_with_the_budget_and_its_reset(user, settings):
    from judgements.models import ApiToken

    budget = Budget.objects.create(user=user, period="day", limit_tokens=10)
    key = ApiToken.issue(user, "ci")[1]
    client = Client(headers={"Authorization": f"Bearer {key}"})
    answer = client.post("/api/judgements/", case_for(), content_type="application/json")
    assert answer.status_code == 402
    body = answer.json()
    assert body["budget"] == budget.pk and "10 tokens a day" in body["error"]
    assert int(answer["Retry-After"]) == body["retry_after"] >= 1
    assert body["resets_at"].endswith("T00:00:00+00:00")


def test_the_page_says_so_next_to_the_form(logged_in, user):
    Budget.objects.create(user=user, period="day", limit_tokens=10)
    from tests.support.forms import form_data

    page = logged_in.post("/", form_data(case_for()))
    assert page.status_code == 402
    assert b"Over budget: the budget of 10 tokens a day for the user ada" in page.content


def test_magi_gate_exits_7_on_a_402():
    answer = json.dumps({"error": "Over budget: the budget of 10 tokens a day"}).encode()
    http_error = urllib.error.HTTPError(
        "http://magi",
        402,
        "Payment Required",
        email.message.Message(),
        io.BytesIO(answer),
    )
    failed = refusal(http_error)
    assert isinstance(failed, OverBudget)
    assert gate.failure_of(failed).status == gate.EXIT_OVER_BUDGET == 7


def test_budget_changes_are_audited_in_the_admin(user, client):
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(root)
    made = client.post(
        "/admin/judgements/budget/add/",
        {"user": user.pk, "period": "day", "limit_tokens": "5000"},
    )
    assert made.status_code == 302
    budget = Budget.objects.get()
    client.post(
        f"/admin/judgements/budget/{budget.pk}/change/",
        {"user": user.pk, "period": "month", "limit_tokens": "9000"},
    )
    first, second = AuditEntry.objects.filter(subject=AuditSubject.BUDGET).order_by("pk")
    assert first.before is None and first.after == {
        "id": budget.pk, "for": "the user ada", "period": "day", "limit_usd": None,
        "limit_tokens": 5000,
    }  # fmt: skip
    assert second.by == root
    assert second.before == first.after
    assert second.after == {**first.after, "period": "month", "limit_tokens": 9000}
    refused = client.post("/admin/judgements/budget/add/", {"period": "day"})
    assert refused.status_code == 200
    assert b"Name exactly one of a team, a user or a panel." in refused.content


def test_the_spend_shows_on_the_tokens_page_and_in_metrics(logged_in, user):
    from judgements.monitoring.collector import spending

    budget = Budget.objects.create(user=user, period="day", limit_tokens=5_000)
    spend(submit([json_case()], Submission(creator=user)).judgement, 1_234)
    page = logged_in.get("/tokens/")
    row = page.content.decode().split(f'id="budget-{budget.pk}"')[1].split("</tr>")[0]
    assert "the user ada" in row and "1234 tokens" in row and "3766 tokens" in row
    spent, left = spending()
    assert [(s.labels, s.value) for s in spent.samples] == [
        ({"budget": str(budget.pk), "applies_to": "user"}, 1234.0)
    ]
    assert [s.value for s in left.samples] == [3766.0]
