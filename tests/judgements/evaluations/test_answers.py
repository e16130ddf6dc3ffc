"""A suite and a run as every surface sends them (judgements/evaluations/answers.py): built
from the records by the pydantic models the API documents, so the API's answer and the
run page's JSON export are one shape."""

import pytest
from django.test import Client

from judgements.api.evaluation_endpoints import visible_run_result
from judgements.api.suite_endpoints import suite_listing
from judgements.evaluations import answers, runs, suites
from judgements.models import EvaluationRun
from tests.support.evaluations import SUITE, start

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(fake_llm, user, settings) -> EvaluationRun:
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    suite = suites.import_suite(name="Gate cases", description="", owner=user, data=SUITE)
    return start(suite, user)


def test_the_api_and_the_page_export_send_one_run_answer(run, user):
    expected = answers.EvaluationRun.from_record(run, runs.progress(run), None)
    assert visible_run_result(run.pk, user) == expected
    browser = Client()
    browser.force_login(user)
    exported = browser.get(f"/evaluations/{run.pk}.json")
    assert exported.json() == expected.model_dump(mode="json")
    assert exported.json()["progress"]["total"] == run.judgements.count()


def test_a_suite_is_listed_from_its_record(run, user):
    (listed,) = [suite for suite in suite_listing(user) if suite.id == run.suite_id]
    assert listed == answers.Suite.from_record(run.suite)
    assert listed.cases == run.suite.cases.count() and not listed.example


def test_a_run_answer_refuses_a_field_it_does_not_describe():
    with pytest.raises(ValueError, match="extra"):
        answers.RunSuite.model_validate({"id": 1, "name": "Gate", "owner": "someone"})
