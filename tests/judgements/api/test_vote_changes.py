"""Vote changes (issue 10, part 2) wherever a judgement is shown: the JSON result, the
live page and its websocket update, and the admin. The judgement runs through the real
engine and the suite's fake LLM with scripted votes."""

import re

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.urls import reverse

from judgements.audit import receipts
from judgements.models import ApiToken, Judgement, Status
from judgements.outcome import answers
from judgements.web import consumers
from tests.support.matching import found
from tests.support.openapi import check

pytestmark = pytest.mark.django_db(transaction=True)

# Melchior changes to the approve both others gave in round 1; Balthasar keeps its vote
# throughout; Casper changes in round 2 while the others split, then keeps its reject
# against the two approves of round 2.
VOTES = {"model-a": "RAA", "model-b": "AAA", "model-c": "ARR"}
FIRST = (False, None)
CHANGES: dict[str, list[tuple[bool, bool | None]]] = {
    "Melchior": [FIRST, (True, True), (False, None)],
    "Balthasar": [FIRST, (False, None), (False, None)],
    "Casper": [FIRST, (True, None), (False, False)],
}
WORDS = {
    "Melchior": ["", "changed, with the majority", "kept, others split"],
    "Balthasar": ["", "kept, others split", "kept, others split"],
    "Casper": ["", "changed, others split", "kept, against the majority"],
}


@pytest.fixture
def judged(fake_llm, make_judgement, runner, user) -> Judgement:
    for model, votes in VOTES.items():
        fake_llm.script(model, votes=votes)
    judgement = make_judgement(creator=user)
    assert async_to_sync(runner.run_judgement)(judgement.pk)
    judgement.refresh_from_db()
    assert judgement.status == Status.APPROVED
    return judgement


def text_of(fragment: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", fragment).split())


def boxes(html: str) -> dict[str, str]:
    """Each agent box of a live page (or live update), by agent name."""
    articles = re.findall(r'<article id="agent-box-\d".*?</article>', html, re.S)
    assert len(articles) == 3
    return {found(r'aria-label="([^"]+)"', box).group(1): box for box in articles}


def history(box: str) -> list[str]:
    return [text_of(li) for li in re.findall(r"<li class=\"vote-.*?</li>", box, re.S)]


def record(box: str) -> list[str]:
    body = found(r"<tbody>(.*?)</tbody>", box, re.S).group(1)
    return [text_of(row) for row in re.findall(r"<tr>.*?</tr>", body, re.S)]


def expected_history(name: str, model: str) -> list[str]:
    lines = []
    for number, (letter, words) in enumerate(zip(VOTES[model], WORDS[name], strict=True), 1):
        decision = "Approve" if letter == "A" else "Reject"
        reason = f"{model} says {decision.lower()} in round {number}"
        lines.append(" ".join(filter(None, [f"R{number}", decision, reason, words])))
    return lines


def expected_record(name: str, model: str) -> list[str]:
    rows = []
    for number, (letter, words) in enumerate(zip(VOTES[model], WORDS[name], strict=True), 1):
        decision = "Approve" if letter == "A" else "Reject"
        reason = f"{model} says {decision.lower()} in round {number}"
        # The suite's server is 90 % sure of each decision it sends.
        rows.append(f"{number} {decision} {reason} {words or 'first vote'} 90 %")
    return rows


def changes_in(result: dict) -> dict[str, list[tuple[bool, bool | None]]]:
    return {
        agent["name"]: [(r["changed"], r["with_majority"]) for r in agent["rounds"]]
        for agent in result["agents"]
    }


def test_the_json_result_says_how_each_vote_moved(client, judged, user):
    headers = {"Authorization": f"Bearer {ApiToken.issue(user, 'tests')[1]}"}
    document = client.get("/api/schema.json").json()
    one = client.get(f"/api/judgements/{judged.pk}/", headers=headers)
    result = check(document, "/api/judgements/{judgement_id}/", "get", one)
    assert changes_in(result) == CHANGES
    assert [r["decision"] for r in result["agents"][2]["rounds"]] == ["approve", "reject", "reject"]
    listed = check(
        document, "/api/judgements/", "get", client.get("/api/judgements/", headers=headers)
    )
    assert changes_in(listed["judgements"][0]) == CHANGES


def test_the_json_result_of_a_judgement_under_way_has_the_rounds_so_far(judged):
    casper = judged.agents.get(name="Casper")
    # Casper's round-3 call still in flight.
    casper.decisions.filter(round=3).delete()
    answer = answers.Judgement.from_record(Judgement.objects.with_results().get(pk=judged.pk))
    result = answer.as_json()
    assert changes_in(result) == {**CHANGES, "Casper": CHANGES["Casper"][:2]}


def test_the_json_result_reads_the_changes_from_the_prefetched_decisions(
    judged, make_judgement, django_assert_num_queries
):
    make_judgement()
    judgements = list(Judgement.objects.with_results())
    receipts.attach_inclusions(judgements)  # as the lists do (outcome/results.py)
    with django_assert_num_queries(0):
        results = [answers.Judgement.from_record(j).as_json() for j in judgements]
    assert changes_in(results[1]) == CHANGES


def test_the_live_page_and_its_update_say_it_in_words(client, judged, user):
    client.force_login(user)
    page = client.get(judged.get_absolute_url()).content.decode()
    update = consumers.render_update_sync(judged.pk).html
    models = dict(zip(("Melchior", "Balthasar", "Casper"), VOTES, strict=True))
    for html in (page, update):
        shown = boxes(html)
        for name, model in models.items():
            assert history(shown[name]) == expected_history(name, model)
            assert record(shown[name]) == expected_record(name, model)


def test_the_admin_shows_each_round_decisions_change(client, judged):
    admin = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(admin)
    url = reverse("admin:judgements_judgement_change", args=[judged.pk])
    html = client.get(url).content.decode()
    rows = re.findall(
        r"<tr><td>(\w+)</td><td>(\d)</td><td>(?:Approve|Reject)</td><td>([^<]*)</td>"
        r"<td>([^<]*)</td>",
        html,
    )
    assert rows == [
        ("Melchior", "1", "— (first vote)", "—"),
        ("Melchior", "2", "changed", "with the majority"),
        ("Melchior", "3", "kept", "others split"),
        ("Balthasar", "1", "— (first vote)", "—"),
        ("Balthasar", "2", "kept", "others split"),
        ("Balthasar", "3", "kept", "others split"),
        ("Casper", "1", "— (first vote)", "—"),
        ("Casper", "2", "changed", "others split"),
        ("Casper", "3", "kept", "against the majority"),
    ]
