"""A panel's certificate over the HTTP API (judgements/api/evaluation_endpoints.py): read it,
certify from finished runs, each refusal naming its field. Every answer is checked
against /api/schema.json."""

import io
import json

import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command

from judgements.configuration import saving
from judgements.core import certificate, kept_verdicts
from judgements.models import Certificate, EvaluationRun
from tests.support.openapi import body_allowed, check

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("empty_engine_channel"),
]

PATH = "/api/panels/{panel_id}/certificate"
# 45 right and sure, 2 wrong and unsure: a third choose the rule, and the sure ones among
# the other two thirds (about 30, all right) pass 90 % (0.1 ** (1/22) would do).
SURE, UNSURE = 0.95, 0.6
CASES = [
    {"id": f"ok-{n}", "content": f"marker-ok {n}: a laptop.", "expected": "approve"}
    for n in range(45)
] + [
    {"id": f"bad-{n}", "content": f"marker-bad {n}: a yacht.", "expected": "reject"} for n in (1, 2)
]


def measure(fake_llm, make_panel, user, tmp_path, cases: list[dict]):
    """The user's panel with one finished run over `cases`."""
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.script(model, confidence=SURE, confidence_when={"marker-bad": UNSURE})
    panel = make_panel(name="Expense desk", owner=user)
    suite = tmp_path / "labelled.jsonl"
    suite.write_text("".join(json.dumps(case) + "\n" for case in cases))
    with pytest.raises(SystemExit):
        call_command("evaluate", str(suite), "--panel", str(panel.pk), stdout=io.StringIO())
    return panel


@pytest.fixture
def measured(fake_llm, make_panel, user, tmp_path):
    """The user's panel with one finished run over the labelled cases."""
    return measure(fake_llm, make_panel, user, tmp_path, CASES)


@pytest.fixture
def measured_briefly(fake_llm, make_panel, user, tmp_path):
    """The same panel measured on four cases: enough for a valid body to be answered
    (and a certificate, certified or not, stored), so a refused body storing nothing
    means something, at a tenth of the judgements (each is a whole three-round panel)."""
    return measure(fake_llm, make_panel, user, tmp_path, CASES[:3] + CASES[-1:])


def url(panel_id: int) -> str:
    return PATH.replace("{panel_id}", str(panel_id))


async def test_it_certifies_a_panel_and_reads_the_certificate_back(api, document, measured):
    assert check(document, PATH, "get", await api.get(url(measured.pk))).get("error")
    made = check(document, PATH, "post", await api.post(url(measured.pk), {}, "application/json"))
    assert made["certified"] is True and made["panel"] == measured.pk
    assert made["rule"] == {"source": "answer", "threshold": SURE, "absent": []}
    # The promise is the target; the rule's own bound on what tested it is reported.
    assert made["bound"] == 0.9 and made["method"] == certificate.METHOD
    kept = made["kept"]
    assert kept == sum("case ok-" in key for key in made["split"]["test"])
    assert made["samples"] == 47 and len(made["split"]["test"]) == 31
    assert made["tested"][0]["bound"] == pytest.approx(
        kept_verdicts.clopper_pearson_lower(kept, kept, 0.1)
    )
    assert made["words"].startswith("Accuracy at least 90.0% (confidence 90%) on verdicts drawn")
    read = check(document, PATH, "get", await api.get(url(measured.pk)))
    assert read == made


async def test_it_says_when_no_rule_reaches_the_target(api, document, measured):
    answer = await api.post(url(measured.pk), {"target": 0.99, "delta": 0.05}, "application/json")
    made = check(document, PATH, "post", answer)
    assert answer.status_code == 201 and made["certified"] is False
    assert made["rule"] is None and made["best"]["bound"] < 0.99
    assert made["words"].startswith("No rule reaches 99% accuracy")


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"target": 1}, 400, "target"),
        ({"delta": 0}, 400, "delta"),
        ({"target": "0.9"}, 400, "target"),
        ({"runs": [999999]}, 422, "runs"),
        ({"rule": "mine"}, 400, "rule"),
        # Told what this body takes, though GET names the path for Django (api/site.py).
        ([], 400, "body"),
    ],
)
async def test_it_refuses_bad_input_naming_the_field(
    api, document, measured_briefly, body, status, field
):
    answer = await api.post(url(measured_briefly.pk), body, "application/json")
    found = check(document, PATH, "post", answer)
    assert answer.status_code == status, found
    assert field in found["errors"], found
    assert body_allowed(document, PATH, "post", body) == (status != 400)
    assert not await sync_to_async(Certificate.objects.exists)()


async def test_a_briefly_measured_panel_answers_a_valid_body_and_stores_it(
    api, document, measured_briefly
):
    # What makes the refusals above mean something: the same panel, the same path, a
    # valid body, and a certificate (here: no rule reaches the target) is stored.
    answer = await api.post(url(measured_briefly.pk), {}, "application/json")
    assert answer.status_code == 201, check(document, PATH, "post", answer)
    assert await sync_to_async(Certificate.objects.count)() == 1


async def test_it_needs_finished_runs_of_the_current_agents(api, document, measured_briefly):
    panel = measured_briefly

    def change_a_model() -> None:
        agents = [{**agent, "model": "model-b"} for agent in panel.agents]
        form, formset = saving.bind_json(panel.owner, panel, panel.name, "", agents, None)
        assert formset.is_valid() and form.is_valid()
        saving.store(form, formset, panel)

    await sync_to_async(change_a_model)()
    answer = await api.post(url(panel.pk), {}, "application/json")
    assert answer.status_code == 422
    assert (
        "No finished evaluation run" in check(document, PATH, "post", answer)["errors"]["runs"][0]
    )
    assert await sync_to_async(EvaluationRun.objects.count)() == 1


async def test_another_users_panel_is_not_found_and_an_example_is_refused(
    api, document, make_panel, fake_llm
):
    other = await sync_to_async(make_panel)(name="Not mine")
    answer = await api.post(url(other.pk), {}, "application/json")
    # An example panel: everyone may read it, only staff may certify it.
    assert answer.status_code == 403
    assert check(document, PATH, "post", answer)["error"]
    missing = await api.get(url(987654))
    assert missing.status_code == 404 and check(document, PATH, "get", missing)["error"]
