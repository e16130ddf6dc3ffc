"""Certifying an escalation chain end to end (judgements/evaluations/cascade.py): each
level's evaluation run through the engine and the suite's OpenAI-compatible server,
`manage.py certify_cascade`, the certificate stored on the first panel with every
level's rule and the report, and the marks it gives a story's levels later."""

import json

import pytest
from asgiref.sync import async_to_sync
from django.urls import reverse

from judgements.core import cascade as core_cascade
from judgements.engine.runner import EngineRunner
from judgements.models import Judgement, Panel, Status, Trust
from tests.support.commands import run_command

pytestmark = pytest.mark.django_db(transaction=True)

STRONG = ("strong-a", "strong-b", "strong-c")
SURE, UNSURE = 0.95, 0.6
# 30 easy cases both levels get right and sure; 30 hard ones the cheap level gets wrong
# (it rejects, unsure) and the strong one right and sure. At target 0.8 and delta 0.1
# split over two levels, some 20 held-out cases of each kind pass 0.05 ** (1 / 20) = 0.86.
CASES = [
    {"id": f"easy-{n}", "content": f"marker-easy case {n}: a laptop.", "expected": "approve"}
    for n in range(30)
] + [
    {"id": f"hard-{n}", "content": f"marker-hard case {n}: a laptop.", "expected": "approve"}
    for n in range(30)
]


@pytest.fixture
def chain(fake_llm, make_panel):
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.script(
            model,
            confidence=SURE,
            confidence_when={"marker-hard": UNSURE},
            votes_when={"marker-hard": "RRR"},
        )
    for model in STRONG:
        fake_llm.script(model, confidence=SURE)
    cheap = make_panel(name="Cheap")
    strong = make_panel(name="Strong", models=STRONG)
    Panel.objects.filter(pk=cheap.pk).update(escalate_to=strong)
    return cheap, strong


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "labelled.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    return path


def story_of(make_judgement, content: str) -> Judgement:
    root = make_judgement(panel="Cheap", agents=None, content=content)
    while True:
        pending = Judgement.objects.filter(status=Status.IDLE).first()
        if pending is None:
            return Judgement.objects.get(pk=root.pk)
        assert async_to_sync(EngineRunner(worker_id="test-worker").run_judgement)(pending.pk)


def test_it_certifies_the_chain_and_marks_each_level_by_its_rule(
    chain, suite_file, make_judgement, admin_client
):
    for name in ("Cheap", "Strong"):
        code, _, err = run_command("evaluate", str(suite_file), "--panel", name, "--json")
        assert code == 0, err
    # In words first (a certificate each time: the newest is in force).
    code, words, err = run_command("certify_cascade", "Cheap", "--target", "0.8")
    assert code == 0, err
    assert "| level 1: Cheap |" in words and "| level 2: Strong |" in words
    assert "| **the cascade** |" in words and "strongest level alone" in words
    # The page's table says its interval as the command's does (issue 70: the page said
    # "0.10 risk interval", the command "90% interval").
    assert "| kept accuracy (90% interval) |" in words
    cheap = Panel.objects.get(name="Cheap")
    page = admin_client.get(reverse("panel-edit", args=[cheap.pk])).content.decode()
    assert '<th scope="col">Kept accuracy (90% interval)</th>' in page
    assert "risk interval" not in page
    code, out, err = run_command("certify_cascade", "Cheap", "--target", "0.8", "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["method"] == core_cascade.METHOD and found["certified"] is True
    assert found["bound"] == 0.8 and found["samples"] == 60
    levels = found["cascade"]["panels"]
    assert [(lv["level"], lv["name"]) for lv in levels] == [(1, "Cheap"), (2, "Strong")]
    report = found["cascade"]["report"]
    one, two = report["levels"]
    assert one["figures"]["reached"] == len(report["test"])
    assert one["figures"]["accuracy"] == 1.0 and two["figures"]["accuracy"] == 1.0
    assert two["figures"]["reached"] == one["passed_on_to"] > 0
    assert one["figures"]["tokens"] > 0 and two["figures"]["seconds"] > 0
    assert report["people"] == 0 and report["kept"]["accuracy"] == 1.0
    assert report["strongest_alone"]["reached"] == len(report["test"])
    # The mark of a story's levels reads the cascade's rules.
    easy = story_of(make_judgement, "marker-easy: a desk.")
    assert (easy.trust, easy.escalated, easy.verdict) == (Trust.NOT_CONTESTED, False, "approved")
    assert easy.certificate_id == found["id"]
    hard = story_of(make_judgement, "marker-hard: a desk.")
    assert (hard.trust, hard.escalated, hard.status) == (Trust.CONTESTED, True, "rejected")
    second = hard.next_level
    assert second is not None and second.trust == Trust.NOT_CONTESTED
    assert second.certificate_id == found["id"] and hard.verdict == "approved"
