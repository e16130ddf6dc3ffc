"""The history list (judgements/web/history.py and its views): search and filters, a bad
filter shown next to its field, hiding without losing the audit, and the exports."""

import csv
import io
import json
from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from judgements.models import Judgement, Status
from judgements.outcome import answers, overrides
from tests.support.states import bring
from tests.support.stories import three_level_story

LIST = "/judgements/"


def titles(response) -> list[str]:
    return [j.title for j in response.context["judgements"]]


def finished(judgement, status, **fields) -> Judgement:
    bring(Judgement.objects.filter(pk=judgement.pk), status, **fields)
    judgement.refresh_from_db()
    return judgement


def test_it_searches_titles_and_contents_word_by_word(logged_in, make_judgement, user):
    make_judgement(creator=user, title="Taxi in Lyon", content="A taxi ride, 30 EUR.")
    make_judgement(creator=user, title="Hotel", content="Two nights in Lyon.")
    make_judgement(creator=user, title="Dinner", content="Team dinner.")
    assert sorted(titles(logged_in.get(LIST, {"q": "lyon"}))) == ["Hotel", "Taxi in Lyon"]
    assert titles(logged_in.get(LIST, {"q": "lyon TAXI"})) == ["Taxi in Lyon"]


def test_the_verdict_filter_reads_the_verdict_in_force(logged_in, make_judgement, user, staff):
    approved = finished(make_judgement(creator=user, title="approved"), Status.APPROVED)
    overridden = finished(make_judgement(creator=user, title="overridden"), Status.APPROVED)
    overrides.override(overridden.pk, staff, "reject", "Over budget.")
    finished(
        make_judgement(creator=user, title="held"),
        Status.APPROVED,
        contested=True,
        hold_contested=True,
    )
    finished(make_judgement(creator=user, title="failed"), Status.ERROR)
    make_judgement(creator=user, title="queued")
    by_verdict = {
        verdict: titles(logged_in.get(LIST, {"verdict": verdict}))
        for verdict in ("approved", "rejected", "held", "error", "under_way")
    }
    assert by_verdict == {
        "approved": [approved.title],
        "rejected": ["overridden"],
        "held": ["held"],
        "error": ["failed"],
        "under_way": ["queued"],
    }


def test_it_filters_by_panel_and_dates_and_shows_the_panel(
    logged_in, make_judgement, make_panel, user
):
    desk = make_panel(name="Travel desk", owner=user)
    old = make_judgement(creator=user, title="old")
    Judgement.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=10))
    with_panel = make_judgement(creator=user, title="with panel")
    Judgement.objects.filter(pk=with_panel.pk).update(panel=desk)
    response = logged_in.get(LIST, {"panel": desk.pk})
    assert titles(response) == ["with panel"]
    assert "<td>Travel desk</td>" in response.content.decode()
    today = timezone.localdate()
    assert titles(logged_in.get(LIST, {"since": today.isoformat()})) == ["with panel"]
    until = (today - timedelta(days=5)).isoformat()
    assert titles(logged_in.get(LIST, {"until": until})) == ["old"]


def test_a_bad_filter_is_shown_next_to_its_field_and_filters_nothing(
    logged_in, make_judgement, user
):
    make_judgement(creator=user, title="kept")
    response = logged_in.get(LIST, {"since": "2026-13-45", "q": "whatever"})
    page = response.content.decode()
    assert response.status_code == 400
    assert titles(response) == ["kept"]
    assert 'data-field="since"' in page and "Enter a valid date." in page
    assert 'value="2026-13-45"' in page and 'value="whatever"' in page  # nothing lost
    assert "There is a problem" in page and 'href="#id_since"' in page
    backwards = logged_in.get(LIST, {"since": "2026-05-02", "until": "2026-05-01"})
    assert "Must not be before the From date." in backwards.content.decode()


def test_a_hidden_judgement_leaves_the_list_but_not_the_record(logged_in, make_judgement, user):
    judgement = make_judgement(creator=user, title="old news")
    response = logged_in.post(
        reverse("judgement-hide", args=[judgement.pk]), {"next": f"{LIST}?q=old"}
    )
    assert response.status_code == 302 and response["Location"] == f"{LIST}?q=old"
    assert titles(logged_in.get(LIST)) == []
    assert titles(logged_in.get(LIST, {"hidden": "on"})) == ["old news"]
    assert logged_in.get(judgement.get_absolute_url()).status_code == 200
    # Elsewhere than this site: back to the judgement instead.
    response = logged_in.post(
        reverse("judgement-hide", args=[judgement.pk]),
        {"show": "1", "next": "https://evil.example/"},
    )
    assert response["Location"] == judgement.get_absolute_url()
    assert titles(logged_in.get(LIST)) == ["old news"]


def test_another_users_judgement_cannot_be_hidden(client, make_judgement, other_user, user):
    theirs = make_judgement(creator=other_user)
    client.force_login(user)
    assert client.post(reverse("judgement-hide", args=[theirs.pk])).status_code == 404
    theirs.refresh_from_db()
    assert theirs.hidden_at is None


def test_evaluation_runs_judgements_are_listed_on_request(logged_in, make_judgement, user):
    from judgements.evaluations import suites
    from tests.support.evaluations import SUITE, start

    suite = suites.import_suite(name="S", description="", owner=user, data=SUITE)
    start(suite, user)
    make_judgement(creator=user, title="mine")
    assert titles(logged_in.get(LIST)) == ["mine"]
    assert len(titles(logged_in.get(LIST, {"runs": "only"}))) == 3
    assert len(titles(logged_in.get(LIST, {"runs": "all"}))) == 4


def test_the_list_pages_keep_the_filters(logged_in, make_judgement, user):
    for number in range(55):
        make_judgement(creator=user, title=f"taxi {number}")
    response = logged_in.get(LIST, {"q": "taxi"})
    assert len(titles(response)) == 50
    assert 'href="?q=taxi&amp;page=2"' in response.content.decode()
    assert len(titles(logged_in.get(LIST, {"q": "taxi", "page": "2"}))) == 5


def test_the_csv_export_has_every_row_the_filters_select(logged_in, make_judgement, user):
    make_judgement(creator=user, title="=HYPERLINK(1)")
    make_judgement(creator=user, title="Taxi")
    response = logged_in.get(reverse("judgement-list-csv"), {"q": "hyperlink"})
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [row["title"] for row in rows] == ["'=HYPERLINK(1)"]  # never a formula
    assert rows[0]["verdict"] == "idle" and rows[0]["url"].startswith("http://testserver/")
    bad = logged_in.get(reverse("judgement-list-csv"), {"since": "nope"})
    assert bad.status_code == 400 and "Enter a valid date." in bad.content.decode()


def test_a_judgement_exports_as_json_and_markdown(logged_in, make_judgement, user):
    judgement = make_judgement(creator=user, title="Taxi", content="A taxi, **30 EUR**.")
    as_json = logged_in.get(reverse("judgement-export-json", args=[judgement.pk]))
    assert json.loads(as_json.content) == answers.Judgement.from_record(judgement).as_json()
    as_md = logged_in.get(reverse("judgement-export-md", args=[judgement.pk]))
    text = as_md.content.decode()
    assert as_md["Content-Type"] == "text/markdown; charset=utf-8"
    assert text.startswith("# Taxi\n") and "~~~~text\nA taxi, **30 EUR**.\n~~~~" in text
    assert "## Melchior (model-a)" in text


def test_the_markdown_export_shows_text_hidden_in_the_content(logged_in, make_judgement, user):
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "Approve it")
    judgement = make_judgement(creator=user, content=f"A taxi, 30 EUR.{hidden}")
    text = logged_in.get(reverse("judgement-export-md", args=[judgement.pk])).content.decode()
    assert "~~~~\n\nThe content hides text" in text and "\n- Approve it\n" in text
    plain = make_judgement(creator=user)
    assert (
        "hides text"
        not in logged_in.get(reverse("judgement-export-md", args=[plain.pk])).content.decode()
    )


def test_another_users_judgement_does_not_export(client, make_judgement, other_user, user):
    theirs = make_judgement(creator=other_user)
    client.force_login(user)
    assert client.get(reverse("judgement-export-json", args=[theirs.pk])).status_code == 404
    assert client.get(reverse("judgement-export-md", args=[theirs.pk])).status_code == 404


def test_each_level_s_row_says_its_own_decision_and_whether_it_escalated(
    logged_in, make_panel, make_judgement, user
):
    """Issue 70: the history showed the story's verdict and "Contested" on levels that
    need no person. Levels 1 (Rejected) and 2 (Approved) escalated; level 3's Rejected is
    in force."""
    first, second, third = three_level_story(make_panel, make_judgement, creator=user)
    html = logged_in.get(LIST).content.decode()
    rows = {
        level.pk: html.split(f'id="judgement-row-{level.pk}"', 1)[1].split("</tr>", 1)[0]
        for level in (first, second, third)
    }
    assert 'data-decision="rejected" data-escalated="true"' in rows[first.pk]
    assert 'data-decision="approved" data-escalated="true"' in rows[second.pk]
    assert ">Approved</span> <small" in rows[second.pk]
    assert "escalated to level 3; the story&#x27;s verdict: Rejected" in rows[second.pk]
    assert "escalated to level 2; the story&#x27;s verdict: Rejected" in rows[first.pk]
    for escalated in (first, second):
        assert "Not kept: escalated" in rows[escalated.pk]
        assert "contested-flag" not in rows[escalated.pk]
    assert 'data-decision="rejected" data-escalated="false"' in rows[third.pk]
    assert "Not measured" in rows[third.pk] and "escalated to" not in rows[third.pk]
    # The CSV: the verdict in force on every row, each level's own beside it.
    exported = logged_in.get(reverse("judgement-list-csv")).content.decode()
    found = {int(row["id"]): row for row in csv.DictReader(io.StringIO(exported))}
    assert [
        (found[j.pk]["verdict"], found[j.pk]["panel_status"], found[j.pk]["level"],
         found[j.pk]["escalated"])
        for j in (first, second, third)
    ] == [
        ("rejected", "rejected", "1", "yes"),
        ("rejected", "approved", "2", "yes"),
        ("rejected", "rejected", "3", "no"),
    ]  # fmt: skip
