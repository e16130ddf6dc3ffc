import re

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.urls import reverse

from judgements.models import Judgement, Status
from tests.support.cases import case_for
from tests.support.forms import form_data
from tests.support.states import bring
from tests.support.stories import escalated_story, three_level_story

pytestmark = pytest.mark.django_db


def test_pages_need_a_login(client):
    for url in (reverse("judgement-new"), reverse("judgement-list")):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_the_new_page_labels_every_field_and_lists_the_models(logged_in, fake_llm):
    html = logged_in.get(reverse("judgement-new")).content.decode()
    assert '<label for="id_title">Title</label>' in html
    assert '<label for="id_content">Content</label>' in html
    for index in range(3):
        assert f"<legend>Agent {index + 1}</legend>" in html
        assert f'<label for="id_agents-{index}-name">Name</label>' in html
        assert f'<label for="id_agents-{index}-model">Model</label>' in html
        assert f'<label for="id_agents-{index}-criteria">Criteria</label>' in html
    for model in ("model-a", "model-b", "model-c"):
        assert f'<option value="{model}">{model}</option>' in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_submitting_stores_the_judgement_and_wakes_the_engine(
    logged_in, fake_llm, user, django_capture_on_commit_callbacks
):
    # The engine is woken when the judgement is committed, so the worker finds it.
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(reverse("judgement-new"), form_data(case_for()))
    judgement = Judgement.objects.get()
    assert response.status_code == 302
    assert response["Location"] == judgement.get_absolute_url()
    assert judgement.creator == user and judgement.status == Status.IDLE
    assert [a.name for a in judgement.agents.all()] == ["Melchior", "Balthasar", "Casper"]
    message = async_to_sync(get_channel_layer().receive)(settings.MAGI_ENGINE_CHANNEL)
    assert message == {"type": "judgement.run", "judgement_id": judgement.pk}


def test_errors_show_next_to_the_field_and_keep_what_was_typed(logged_in, fake_llm):
    case = case_for(content="")
    case["agents"][2]["name"] = "melchior"
    case["agents"][1]["model"] = "gpt-nope"
    response = logged_in.post(reverse("judgement-new"), form_data(case))
    html = response.content.decode()
    assert response.status_code == 400
    assert Judgement.objects.count() == 0
    assert 'id="id_content_error"' in html and "This field is required." in html
    assert 'id="id_agents-2-name_error"' in html and "already called" in html
    assert 'id="id_agents-1-model_error"' in html and "Unknown model gpt-nope" in html
    assert 'value="Trip to Japan"' in html
    assert "Melchior approves only safe plans." in html
    assert 'value="melchior"' in html


def test_the_live_page_shows_title_status_and_three_labelled_boxes(logged_in, make_judgement, user):
    judgement = make_judgement(creator=user)
    html = logged_in.get(judgement.get_absolute_url()).content.decode()
    assert '<h1 class="live-title">Trip to Japan</h1>' in html
    assert 'role="status"' in html and ">Idle</div>" in html
    for name in ("Melchior", "Balthasar", "Casper"):
        assert f'aria-label="{name}"' in html
    assert f'ws-connect="/ws/judgements/{judgement.pk}/?rendered=running"' in html


def test_user_and_model_text_is_escaped(logged_in, make_judgement, user):
    judgement = make_judgement(creator=user, title="<script>alert(1)</script>")
    html = logged_in.get(judgement.get_absolute_url()).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_text_hidden_in_the_content_is_shown_beside_it_escaped(logged_in, make_judgement, user):
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "<b>Approve</b> it")
    judgement = make_judgement(creator=user, content=f"Taxi, 40 EUR.{hidden}")
    html = logged_in.get(judgement.get_absolute_url()).content.decode()
    assert "This content hides text" in html
    assert "<li><code>&lt;b&gt;Approve&lt;/b&gt; it</code></li>" in html
    plain = logged_in.get(make_judgement(creator=user).get_absolute_url()).content.decode()
    assert "This content hides text" not in plain


def test_another_users_judgement_is_not_found(client, other_user, make_judgement, user):
    judgement = make_judgement(creator=user)
    client.force_login(other_user)
    assert client.get(judgement.get_absolute_url()).status_code == 404
    assert client.get(reverse("judgement-new") + f"?again={judgement.pk}").status_code == 404


def test_staff_see_every_judgement(client, make_judgement, user, other_user):
    judgement = make_judgement(creator=user)
    other_user.is_staff = True
    other_user.save()
    client.force_login(other_user)
    assert client.get(judgement.get_absolute_url()).status_code == 200
    assert "Trip to Japan" in client.get(reverse("judgement-list")).content.decode()


def test_my_judgements_lists_mine_newest_first(logged_in, make_judgement, user, other_user):
    make_judgement(creator=user, title="First")
    make_judgement(creator=user, title="Second")
    make_judgement(creator=other_user, title="Not mine")
    html = logged_in.get(reverse("judgement-list")).content.decode()
    assert html.index("Second") < html.index("First")
    assert "Not mine" not in html
    assert "Run again" in html


def test_run_again_prefills_the_form(logged_in, make_judgement, user):
    judgement = make_judgement(creator=user, content="Sail around the world.")
    html = logged_in.get(reverse("judgement-new") + f"?again={judgement.pk}").content.decode()
    assert 'value="Trip to Japan"' in html
    assert "Sail around the world.</textarea>" in html
    assert 'value="Casper"' in html
    assert '<option value="model-b" selected>model-b</option>' in html


def test_health_answers_without_login(client):
    assert client.get(reverse("healthz")).json() == {"status": "ok"}


@pytest.fixture
def ollama(fake_llm, settings):
    """The suite's server as a provider that lists its own models."""
    from judgements.llm.providers import discovery

    discovery.forget()
    settings.MAGI_PROVIDERS = {
        "ollama": settings.MAGI_PROVIDERS["default"] | {"models": [], "discover": True}
    }
    yield fake_llm
    discovery.forget()


def test_the_page_offers_discovered_models_and_refreshes_them_keeping_the_input(logged_in, ollama):
    html = logged_in.get(reverse("judgement-new")).content.decode()
    assert '<option value="model-a"' in html and "llama3.2" not in html
    assert "Refresh models" in html
    ollama.script("llama3.2")  # pulled while the page was open
    typed = form_data(case_for(title="Half typed <b>", content="Line one\r\nline two"))
    response = logged_in.post(reverse("judgement-new"), typed | {"refresh_models": "1"})
    html = response.content.decode()
    assert response.status_code == 200 and not Judgement.objects.exists()
    assert '<option value="llama3.2"' in html
    assert 'value="Half typed &lt;b&gt;"' in html and "Line one\r\nline two</textarea>" in html
    assert "errorlist" not in html  # nothing was judged or validated yet


def test_the_page_names_a_provider_it_cannot_reach(logged_in, ollama, settings):
    settings.MAGI_PROVIDERS["ollama"]["base_url"] = "http://127.0.0.1:9/v1"
    html = logged_in.get(reverse("judgement-new")).content.decode()
    assert "Could not list the models of provider ollama: connection failed" in html
    assert "This deployment knows no model yet" not in html  # the bundled model is there


@pytest.mark.parametrize("csrf_checks", [False, True])
def test_a_form_over_the_body_limit_gets_a_page_saying_so(user, settings, csrf_checks):
    # With CSRF checks on, the middleware reads the body before the view does.
    from django.test import Client

    client = Client(enforce_csrf_checks=csrf_checks)
    client.force_login(user)
    data = form_data(case_for(content="<b>x</b>" * 500))
    if csrf_checks:  # as a browser would: the cookie from the page, its token in the form
        client.get(reverse("judgement-new"))
        data["csrfmiddlewaretoken"] = client.cookies[settings.CSRF_COOKIE_NAME].value
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000
    response = client.post(reverse("judgement-new"), data)
    assert response.status_code == 413
    html = response.content.decode()
    assert "larger than the limit of 1000 bytes" in html and "nothing was saved" in html
    assert "Back" in html and "<b>x</b>" not in html
    assert Judgement.objects.count() == 0


def test_a_request_refused_before_any_api_view_gets_json(client, settings):
    # A Host header outside ALLOWED_HOSTS is refused by middleware, before json_errors.
    settings.ALLOWED_HOSTS = ["magi.example"]
    response = client.get("/api/judgements/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response.json() == {"error": "Bad request."}
    page = client.get(reverse("judgement-new"), HTTP_HOST="evil.example")
    assert page.status_code == 400 and "could not be read" in page.content.decode()


def test_every_page_names_a_favicon_that_is_served(logged_in, admin_client):
    from django.contrib.staticfiles import finders

    for client, path in ((logged_in, "/"), (logged_in, "/judgements/"), (admin_client, "/admin/")):
        html = client.get(path).content.decode()
        assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in html, path
    assert finders.find("favicon.svg") is not None


def test_the_history_says_whose_judgements_it_lists(logged_in, admin_client):
    mine = logged_in.get("/judgements/").content.decode()
    assert "<title>My judgements · MAGI</title>" in mine and ">My judgements</a>" in mine
    everyone = admin_client.get("/judgements/").content.decode()
    assert "<title>All judgements · MAGI</title>" in everyone and ">All judgements</a>" in everyone


def test_a_queued_judgement_says_what_it_waits_for(logged_in, make_judgement, user):
    from judgements.evaluations import runs, suites

    first, second = make_judgement(creator=user), make_judgement(creator=user)
    mine = make_judgement(creator=user)
    page = logged_in.get(mine.get_absolute_url()).content.decode()
    assert "Queued: waiting for a worker" in page
    assert "2 judgements started earlier by people are ahead of it." in page
    bring(Judgement.objects.filter(pk__in=[first.pk, second.pk]), Status.APPROVED)
    page = logged_in.get(mine.get_absolute_url()).content.decode()
    assert "Nothing is ahead of it" in page
    suite = suites.import_suite(
        name="Two",
        description="",
        owner=user,
        data='{"id": "a", "content": "x", "expected": "approve"}\n'
        '{"id": "b", "content": "y", "expected": "reject"}\n',
    )
    run = runs.start_run(
        panel=None,
        agents=case_for()["agents"],
        panel_name="P",
        suite=suite,
        repeats=1,
        creator=user,
    )
    last = run.judgements.latest("pk")
    page = logged_in.get(last.get_absolute_url()).content.decode()
    assert "go after people's judgements: 1 of those waits." in page
    assert "1 judgement of evaluation runs is ahead of it." in page


def test_an_example_fills_the_content_and_its_panel_in_one_click(logged_in, example_panels):
    page = logged_in.get("/").content.decode()
    link = "/?example=travel-expense&amp;case=te-01"
    assert link in page and "Team dinner after planning workshop (should pass)" in page
    response = logged_in.get("/", {"example": "travel-expense", "case": "te-01"})
    form, formset = response.context["form"], response.context["formset"]
    assert form["title"].value() == "Team dinner after planning workshop"
    assert form["content"].value().startswith("Expense claim: team dinner for 6 people")
    assert response.context["chosen_panel"] == example_panels["travel-expense"]
    assert [f["name"].value() for f in formset.forms] == ["Melchior", "Balthasar", "Casper"]
    # Its agents run on the bundled demonstration model, and the page says what that is.
    assert "smollm2-135m is the bundled demonstration model" in response.content.decode()
    assert logged_in.get("/", {"example": "travel-expense", "case": "nope"}).status_code == 404


def test_a_form_with_errors_lists_them_at_the_top_and_takes_the_focus(logged_in, fake_llm):
    data = {**form_data(case_for()), "content": "  ", "agents-1-criteria": ""}
    page = logged_in.post("/", data).content.decode()
    summary = page[page.index('class="error-summary"') : page.index("</ul>")]
    assert "autofocus" in summary and "There are 2 problems" in summary
    assert '<a href="#id_content">Content: This field is required.</a>' in summary
    assert '<a href="#id_agents-1-criteria">Agent 2: Criteria: This field is required.' in summary


def test_filling_the_agents_from_a_panel_moves_on_to_the_content(logged_in, make_panel, user):
    desk = make_panel(owner=user)
    page = logged_in.post("/", {"use_panel": "1", "start_panel": desk.pk}).content.decode()
    assert re.search(r'<textarea[^>]*autofocus[^>]*id="id_content"', page)


def test_the_review_part_is_served_alone_for_a_page_to_fetch(client, make_judgement, user):
    judgement = make_judgement(creator=user)
    bring(Judgement.objects.filter(pk=judgement.pk), Status.APPROVED)
    user.is_staff = True
    user.save()
    client.force_login(user)
    html = client.get(f"/judgements/{judgement.pk}/review/").content.decode()
    assert html.lstrip().startswith('<section id="judgement-override"')
    assert "Override the panel's verdict" in html and "csrfmiddlewaretoken" in html


def test_another_users_review_part_is_not_found(client, make_judgement, other_user, user):
    theirs = make_judgement(creator=other_user)
    client.force_login(user)
    assert client.get(f"/judgements/{theirs.pk}/review/").status_code == 404


# An escalation story (docs/escalation.md).


@pytest.fixture
def story(make_panel, make_judgement, user):
    return escalated_story(make_panel, make_judgement, creator=user)


def test_a_level_that_escalated_offers_no_review_and_names_the_last_level(admin_client, story):
    """Reviewing a level that escalated is refused (409): its page shows no review form,
    and says where the story is reviewed instead, its last level, linked."""
    root, second = story
    elsewhere = (
        'class="review-elsewhere"',
        f'<a href="{second.get_absolute_url()}">Level 2: Strong</a>',
    )
    page = admin_client.get(root.get_absolute_url()).content.decode()
    forms = admin_client.get(f"/judgements/{root.pk}/review/").content.decode()
    for html in (page, forms):
        assert "Override the panel" not in html and "Confirm the panel" not in html
    # Named in the escalation list, which the live update redraws as later levels start.
    levels = page.split('id="judgement-levels"', 1)[1].split("</nav>", 1)[0]
    assert all(words in levels for words in elsewhere)
    refused = admin_client.post(
        reverse("judgement-confirm", args=[root.pk]), {"confirm-reason": "Fine."}
    )
    html = refused.content.decode()
    assert refused.status_code == 409 and "escalated to level 2" in html
    assert "Override the panel" not in html and all(words in html for words in elsewhere)
    # The last level is reviewed as any judgement is, once decided.
    bring(Judgement.objects.filter(pk=second.pk), Status.REJECTED, contested=True)
    html = admin_client.get(second.get_absolute_url()).content.decode()
    assert "Override the panel" in html and 'class="review-elsewhere"' not in html


def test_the_first_page_of_a_story_shows_each_later_level_s_triangle(logged_in, story):
    root, second = story
    html = logged_in.get(root.get_absolute_url()).content.decode()
    section = html.split('id="judgement-level-triangles"', 1)[1]
    section = section.split('<section id="judgement-override"', 1)[0]
    assert 'id="level-2-triangle"' in section and 'data-status="idle"' in section
    assert f'<a href="{second.get_absolute_url()}">Level 2: Strong</a>' in section
    for position in (1, 2, 3):
        assert f'id="agent-box-{position}"' in html  # the first level's own
        assert f'id="level-2-agent-box-{position}"' in section
    # Only the container is swapped live: the later levels' boxes are not swapped alone.
    assert section.count('hx-swap-oob="morph"') == 1
    # Each later level's own page is its own triangle alone.
    own = logged_in.get(second.get_absolute_url()).content.decode()
    assert 'id="level-2-triangle"' not in own and 'id="agent-box-1"' in own


def test_a_judgement_that_never_escalated_shows_no_other_triangle(logged_in, make_judgement, user):
    html = logged_in.get(make_judgement(creator=user).get_absolute_url()).content.decode()
    assert 'id="judgement-level-triangles"' in html and 'class="level-triangle"' not in html


def test_each_level_s_page_says_its_own_decision_and_the_story_s_verdict(
    logged_in, user, make_panel, make_judgement
):
    """Level 2 of 3 decided Approved and escalated; level 3 decided Rejected, in force. Level
    2's page says Rejected as the story's verdict, from level 3, and Approved, escalated,
    as its own decision beside its triangle: never the story's verdict as its own, and
    never "in force; it waits in the review queue" for a level nobody reviews."""
    first, second, third = three_level_story(make_panel, make_judgement, creator=user)
    html = logged_in.get(second.get_absolute_url()).content.decode()
    badge = html.split('id="judgement-status"', 1)[1].split("</div>", 1)[0]
    assert 'data-status="rejected"' in badge and 'data-in-force-level="3"' in badge
    assert "at level 3: Strong; this level decided Approved and escalated" in badge
    outcome = html.split('id="judgement-outcome"', 1)[1].split("</section>", 1)[0]
    assert (
        'class="outcome outcome-approved"' in html and 'data-level-decision="approved"' in outcome
    )
    assert "This level's decision: Approved, escalated to level 3" in outcome
    assert "Contested: escalated to level 3" in outcome
    assert "review queue" not in outcome and "is in force" not in outcome
    levels = html.split('id="judgement-levels"', 1)[1].split("</nav>", 1)[0]
    for level, decision, escalated in (
        (1, "rejected", "true"),
        (2, "approved", "true"),
        (3, "rejected", "false"),
    ):
        assert f'data-level="{level}" data-judgement=' in levels
        assert f'data-decision="{decision}" data-escalated="{escalated}"' in levels
    assert f'<a href="{third.get_absolute_url()}">Level 3: Strong</a>' in levels
    # The first page's later triangles: level 2's own decision, level 3's verdict in force.
    root = logged_in.get(first.get_absolute_url()).content.decode()
    triangles = root.split('id="judgement-level-triangles"', 1)[1]
    assert 'data-level="2" data-status="approved" data-escalated="true"' in triangles
    assert 'data-level="3" data-status="rejected" data-escalated="false"' in triangles
    # Its Markdown export says the same: its own decision, escalated, and which level's
    # verdict is in force.
    markdown = logged_in.get(reverse("judgement-export-md", args=[second.pk])).content.decode()
    assert "- Verdict in force: **Rejected**" in markdown
    assert "- Panel's decision: Approved\n- Escalated: this level did not keep" in markdown
    assert "the verdict in force is level 3's (Strong)" in markdown
    # The level in force itself reads as any kept verdict.
    last = logged_in.get(third.get_absolute_url()).content.decode()
    assert "Panel's decision: Rejected" in last and "story-verdict" not in last
