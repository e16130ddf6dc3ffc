"""Saved panels on the pages: starting a judgement from one, saving the agents typed as
one, the panel list and the edit form (web/new_judgement_page.py,
web/panel_pages.py)."""

import pytest
from django.urls import reverse

from judgements.core import prompt_variants
from judgements.models import AuditEntry, AuditSubject, Judgement, Panel
from tests.support.cases import case_for
from tests.support.forms import form_data

pytestmark = pytest.mark.django_db

NEW = "/"


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    return client


def typed(**agent_overrides) -> dict:
    """The page's form as a user left it: a title, a content and three agents typed."""
    case = case_for(title="Offsite in Lisbon", content="Hotel at 150 EUR a night.")
    for index, agent in enumerate(case["agents"]):
        agent["criteria"] = f"Typed criteria {index}."
    data = form_data(case)
    data.update(agent_overrides)
    return data


# Starting from a panel.


def test_the_page_lists_the_users_panels_then_the_examples(logged_in, make_panel, user, other_user):
    make_panel("Zebra desk", owner=user)
    make_panel("Example desk", owner=None)
    make_panel("Not mine", owner=other_user)
    html = logged_in.get(NEW).content.decode()
    assert '<label for="id_start_panel">Saved panel</label>' in html
    assert html.index(">Zebra desk</option>") < html.index(">Example desk (example)</option>")
    assert "Not mine" not in html


def test_choosing_a_panel_fills_the_agents_and_keeps_title_and_content(logged_in, make_panel, user):
    panel = make_panel("Desk", owner=user, models=("model-c", "model-b", "model-a"))
    data = typed() | {"start_panel": str(panel.pk), "use_panel": "1"}
    response = logged_in.post(NEW, data)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'value="Offsite in Lisbon"' in html
    assert "Hotel at 150 EUR a night." in html
    assert "Melchior approves only safe plans." in html
    assert "Typed criteria" not in html
    assert '<option value="model-c" selected>model-c</option>' in html
    assert f'<input type="hidden" name="panel" value="{panel.pk}">' in html
    assert "Agents filled from the panel" in html
    assert Judgement.objects.count() == 0


def test_choosing_no_panel_or_anothers_keeps_everything(logged_in, make_panel, other_user):
    theirs = make_panel("Theirs", owner=other_user)
    for choice in ("", str(theirs.pk), "nope"):
        data = typed() | {"start_panel": choice, "use_panel": "1"}
        response = logged_in.post(NEW, data)
        html = response.content.decode()
        assert response.status_code == 400
        assert 'id="id_start_panel_error"' in html
        assert 'value="Offsite in Lisbon"' in html and "Typed criteria 2." in html
        assert "Theirs" not in html


def test_a_panel_on_a_model_no_longer_served_says_so_next_to_the_model(
    logged_in, make_panel, user, fake_llm
):
    panel = make_panel("Desk", owner=user)
    fake_llm.models.remove("model-a")
    html = logged_in.post(NEW, typed() | {"start_panel": panel.pk, "use_panel": "1"}).content
    assert b'id="id_agents-0-model_error"' in html
    assert b"Unknown model model-a" in html
    assert b'id="id_agents-1-model_error"' not in html


def test_a_judgement_started_from_a_panel_records_it(logged_in, make_panel, user):
    panel = make_panel("Desk", owner=user)
    data = form_data(case_for()) | {"panel": str(panel.pk)}
    response = logged_in.post(NEW, data)
    judgement = Judgement.objects.get()
    assert response.status_code == 302
    assert judgement.panel == panel


def test_agents_edited_after_choosing_run_as_typed_and_the_panel_is_recorded(
    logged_in, make_panel, user
):
    panel = make_panel("Desk", owner=user)
    data = form_data(case_for()) | {"panel": str(panel.pk), "agents-1-criteria": "Edited."}
    logged_in.post(NEW, data)
    judgement = Judgement.objects.get()
    assert judgement.panel == panel
    assert [a.criteria for a in judgement.agents.all()][1] == "Edited."
    assert panel.agents[1]["criteria"] != "Edited."


def test_a_panel_gone_since_it_was_chosen_is_said_and_nothing_starts(
    logged_in, make_panel, user, other_user
):
    gone = make_panel("Gone", owner=user)
    theirs = make_panel("Theirs", owner=other_user)
    gone_id = gone.pk
    gone.delete()
    for panel_id in (str(gone_id), str(theirs.pk), "x"):
        response = logged_in.post(NEW, form_data(case_for()) | {"panel": panel_id})
        html = response.content.decode()
        assert response.status_code == 400
        assert "The saved panel these agents were filled from is not there any more" in html
        assert 'name="panel"' not in html  # pressing Judge again judges without it
        assert 'value="Trip to Japan"' in html
    assert Judgement.objects.count() == 0


def test_judge_with_it_and_run_again_start_from_the_panel(logged_in, make_panel, user):
    panel = make_panel("Desk", owner=user)
    html = logged_in.get(f"{NEW}?panel={panel.pk}").content.decode()
    assert "Melchior approves only safe plans." in html
    assert f'<input type="hidden" name="panel" value="{panel.pk}">' in html
    logged_in.post(NEW, form_data(case_for()) | {"panel": str(panel.pk)})
    again = Judgement.objects.get()
    html = logged_in.get(f"{NEW}?again={again.pk}").content.decode()
    assert f'<input type="hidden" name="panel" value="{panel.pk}">' in html


def test_judge_with_anothers_panel_is_not_found(logged_in, make_panel, other_user):
    theirs = make_panel("Theirs", owner=other_user)
    for reference in (str(theirs.pk), "Theirs", "²"):
        assert logged_in.get(f"{NEW}?panel={reference}").status_code == 404


# Saving the agents as a panel.


def test_saving_the_agents_as_a_panel_keeps_the_form_and_confirms(logged_in, fake_llm, user):
    data = typed() | {"new_panel-name": "Lisbon desk", "new_panel-description": "Offsites"}
    response = logged_in.post(NEW, data | {"save_panel": "1"})
    html = response.content.decode()
    panel = Panel.objects.get()
    assert response.status_code == 200
    assert (panel.owner, panel.name, panel.description) == (user, "Lisbon desk", "Offsites")
    assert [a["criteria"] for a in panel.agents] == [f"Typed criteria {i}." for i in range(3)]
    assert 'role="status">Saved the three agents above as the panel' in html
    assert 'value="Offsite in Lisbon"' in html and "Typed criteria 2." in html
    assert f'<input type="hidden" name="panel" value="{panel.pk}">' in html
    assert Judgement.objects.count() == 0


def test_saving_shows_errors_next_to_the_fields_and_keeps_the_input(logged_in, make_panel, user):
    make_panel("Desk", owner=user)
    data = typed(**{"agents-2-name": "melchior", "agents-0-criteria": " "}) | {
        "new_panel-name": "DESK",
        "new_panel-description": "Kept description",
        "save_panel": "1",
        "title": "",
    }
    response = logged_in.post(NEW, data)
    html = response.content.decode()
    assert response.status_code == 400
    assert Panel.objects.count() == 1
    assert 'id="id_new_panel-name_error"' in html and "already called &#x27;DESK&#x27;" in html
    assert 'id="id_agents-2-name_error"' in html and "already called" in html
    assert 'id="id_agents-0-criteria_error"' in html
    # Saving a panel needs no title: none is asked for.
    assert 'id="id_title_error"' not in html
    assert 'value="DESK"' in html and "Kept description" in html
    assert 'value="melchior"' in html and "Typed criteria 1." in html


def test_a_panel_name_is_required_when_saving(logged_in, fake_llm):
    response = logged_in.post(NEW, typed() | {"new_panel-name": "\u200b", "save_panel": "1"})
    assert response.status_code == 400
    assert b'id="id_new_panel-name_error"' in response.content
    assert not Panel.objects.exists()


# The panel list and the edit form.


def test_the_list_shows_own_and_example_panels_with_edit_links(
    logged_in, make_panel, user, other_user
):
    mine = make_panel("<b>Mine</b>", owner=user, description="<script>x</script>")
    example = make_panel("Example", owner=None)
    make_panel("Theirs", owner=other_user)
    html = logged_in.get(reverse("panel-list")).content.decode()
    assert "&lt;b&gt;Mine&lt;/b&gt;" in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<script>x" not in html
    assert f'href="{mine.get_absolute_url()}">Edit</a>' in html
    assert f'href="{example.get_absolute_url()}"' not in html
    assert "<td>example</td>" in html and "<td>you</td>" in html
    assert f'href="/?panel={example.pk}">Judge with it</a>' in html
    assert "Theirs" not in html


def test_staff_see_and_edit_every_panel(staff_client, make_panel, user):
    theirs = make_panel("Theirs", owner=user)
    example = make_panel("Example", owner=None)
    html = staff_client.get(reverse("panel-list")).content.decode()
    assert f'href="{theirs.get_absolute_url()}">Edit</a>' in html
    assert f'href="{example.get_absolute_url()}">Edit</a>' in html
    assert "<td>ada</td>" in html
    assert staff_client.get(example.get_absolute_url()).status_code == 200
    data = edit_data(example, description="Staff edit")
    assert staff_client.post(example.get_absolute_url(), data).status_code == 302
    assert Panel.objects.get(pk=example.pk).description == "Staff edit"


def test_others_get_404_for_a_panel_they_cannot_see_and_403_for_an_example(
    logged_in, make_panel, other_user
):
    theirs = make_panel("Theirs", owner=other_user)
    example = make_panel("Example", owner=None)
    assert logged_in.get(theirs.get_absolute_url()).status_code == 404
    assert logged_in.post(theirs.get_absolute_url(), edit_data(theirs)).status_code == 404
    assert logged_in.get(example.get_absolute_url()).status_code == 403
    assert logged_in.post(example.get_absolute_url(), edit_data(example)).status_code == 403
    assert logged_in.get(reverse("panel-edit", args=[999_999])).status_code == 404
    assert Panel.objects.get(pk=theirs.pk).description == ""


def test_the_panel_pages_need_a_login(client, make_panel, user):
    panel = make_panel("Desk", owner=user)
    for url in (reverse("panel-list"), panel.get_absolute_url()):
        assert client.get(url).status_code == 302


def edit_data(panel: Panel, **overrides) -> dict:
    data = form_data({"title": "", "content": "", "agents": panel.agents})
    del data["title"], data["content"]
    return {"name": panel.name, "description": panel.description, **data, **overrides}


def test_the_owner_edits_a_panel(logged_in, make_panel, user):
    panel = make_panel("Desk", owner=user)
    html = logged_in.get(panel.get_absolute_url()).content.decode()
    assert 'value="Desk"' in html and "Melchior approves only safe plans." in html
    data = edit_data(panel, name="Desk v2", **{"agents-0-criteria": "Stricter."})
    response = logged_in.post(panel.get_absolute_url(), data)
    assert response.status_code == 302 and response["Location"] == reverse("panel-list")
    panel.refresh_from_db()
    assert panel.name == "Desk v2" and panel.agents[0]["criteria"] == "Stricter."
    assert "Saved the panel Desk v2." in logged_in.get(reverse("panel-list")).content.decode()


def test_an_edit_is_audited_as_the_panel_was_and_now_is(logged_in, make_panel, user):
    """The audit entry of a page's edit holds the panel as configuration before and after
    (the form's fields over what it was), exactly as the panel now reads."""
    panel = make_panel("Desk", owner=user)
    before = panel.config_state()
    data = edit_data(panel, name="Desk v2", hold_contested="yes", prompt_variants="none")
    data |= {"agents-1-criteria": "Stricter.", "agents-2-model": "model-a"}
    assert logged_in.post(panel.get_absolute_url(), data).status_code == 302
    panel.refresh_from_db()
    entry = AuditEntry.objects.filter(subject=AuditSubject.PANEL).latest("pk")
    assert (entry.target, entry.by) == (f"panel {panel.pk} (Desk v2)", user)
    assert entry.before == before and entry.after == panel.config_state()
    assert entry.after != entry.before


def test_an_edit_naming_a_panel_to_escalate_to_is_audited_by_its_name(logged_in, make_panel, user):
    """The panel its unkept verdicts go to (docs/escalation.md) is set from the page and
    audited as configuration says it: by name."""
    panel, strong = make_panel("Desk", owner=user), make_panel("Strong desk", owner=user)
    data = edit_data(panel, escalate_to=str(strong.pk))
    assert logged_in.post(panel.get_absolute_url(), data).status_code == 302
    panel.refresh_from_db()
    assert panel.escalate_to == strong
    entry = AuditEntry.objects.filter(subject=AuditSubject.PANEL).latest("pk")
    assert entry.after == panel.config_state() and entry.after["escalate_to"] == "Strong desk"


def test_an_escalation_the_rule_refuses_is_said_beside_its_field(logged_in, make_panel, user):
    """A cycle (checked where the panel is written, for the panel as written) is refused
    next to the field with the edit kept, and nothing changes."""
    first, second = make_panel("Desk", owner=user), make_panel("Strong desk", owner=user)
    Panel.objects.filter(pk=first.pk).update(escalate_to=second)
    data = edit_data(second, description="Typed.", escalate_to=str(first.pk))
    response = logged_in.post(second.get_absolute_url(), data)
    html = response.content.decode()
    assert response.status_code == 400 and 'id="id_escalate_to_error"' in html
    assert "The escalation comes back to" in html and "Typed." in html
    second.refresh_from_db()
    assert (second.escalate_to_id, second.description) == (None, "")


def test_an_edit_may_keep_the_panels_own_name(logged_in, make_panel, user):
    panel = make_panel("Desk", owner=user)
    response = logged_in.post(panel.get_absolute_url(), edit_data(panel, description="New"))
    assert response.status_code == 302
    panel.refresh_from_db()
    assert panel.name == "Desk" and panel.description == "New"


def test_an_invalid_edit_shows_errors_and_changes_nothing(logged_in, make_panel, user):
    panel = make_panel("Desk", owner=user)
    make_panel("Other", owner=user)
    data = edit_data(panel, name="other", **{"agents-1-model": "gpt-nope"})
    response = logged_in.post(panel.get_absolute_url(), data)
    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="id_name_error"' in html and 'id="id_agents-1-model_error"' in html
    assert 'value="other"' in html
    # Listed at the top too, each linking to its field.
    assert "There are 2 problems" in html
    assert 'href="#id_name"' in html and 'href="#id_agents-1-model"' in html
    panel.refresh_from_db()
    assert panel.name == "Desk" and panel.agents[1]["model"] == "model-b"


def test_editing_a_panel_changes_no_judgement_started_from_it(logged_in, make_panel, user):
    panel = make_panel("Desk", owner=user)
    logged_in.post(NEW, form_data(case_for()) | {"panel": str(panel.pk)})
    judgement = Judgement.objects.get()
    before = [(a.name, a.model, a.criteria) for a in judgement.agents.all()]
    data = edit_data(
        panel,
        **{"agents-0-name": "Renamed", "agents-1-criteria": "New.", "agents-2-model": "model-a"},
    )
    assert logged_in.post(panel.get_absolute_url(), data).status_code == 302
    judgement.refresh_from_db()
    assert judgement.panel == panel
    assert [(a.name, a.model, a.criteria) for a in judgement.agents.all()] == before


def test_the_prompt_variants_are_set_and_shown_on_the_panels_page(logged_in, make_panel, user):
    panel = make_panel("Desk", owner=user)
    html = logged_in.get(panel.get_absolute_url()).content.decode()
    assert '<label for="id_prompt_variants">Prompt variants</label>' in html
    default = "+".join(sorted(prompt_variants.DEFAULT)) or "no variant"
    assert f"now use: {default} (not set: the site's default)." in html
    data = edit_data(panel, prompt_variants="quote+decision_first")
    assert logged_in.post(panel.get_absolute_url(), data).status_code == 302
    panel.refresh_from_db()
    assert panel.prompt_variants == ["quote", "decision_first"]
    html = logged_in.get(panel.get_absolute_url()).content.decode()
    assert 'value="quote+decision_first"' in html
    assert "now use: decision_first+quote." in html
    assert logged_in.post(panel.get_absolute_url(), edit_data(panel, prompt_variants="none"))
    panel.refresh_from_db()
    assert panel.prompt_variants == []
    assert 'value="none"' in logged_in.get(panel.get_absolute_url()).content.decode()
    assert logged_in.post(panel.get_absolute_url(), edit_data(panel, prompt_variants=""))
    panel.refresh_from_db()
    assert panel.prompt_variants is None


def test_bad_prompt_variants_are_said_next_to_the_field_and_kept(logged_in, make_panel, user):
    panel = make_panel("Desk", owner=user)
    typed_in = "named_peers+decisions_only"
    data = edit_data(panel, description="Typed too", prompt_variants=typed_in)
    response = logged_in.post(panel.get_absolute_url(), data)
    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="id_prompt_variants_error"' in html and 'href="#id_prompt_variants"' in html
    assert "named_peers and decisions_only both say how to show earlier rounds" in html
    assert f'value="{typed_in}"' in html and "Typed too" in html
    panel.refresh_from_db()
    assert panel.prompt_variants is None and panel.description == ""


def test_the_page_says_whether_the_calibration_holds(logged_in, make_panel, user):
    from judgements.core import calibration
    from judgements.models import agents_fingerprint

    panel = make_panel("Desk", owner=user)
    html = logged_in.get(panel.get_absolute_url()).content.decode()
    assert f"<code>manage.py calibrate {panel.pk}</code>" in html
    learned = calibration.PanelCalibration(
        agents_fingerprint(panel.agents),
        (1.5, None, -0.25),
        (20, 3, 20),
        (7,),
        tuple(sorted(prompt_variants.DEFAULT)),
    )
    panel.calibration = learned.as_dict()
    panel.save(update_fields=["calibration"])
    html = logged_in.get(panel.get_absolute_url()).content.decode()
    assert "Learned for these agents and prompt variants, from run 7." in html
    assert "Melchior: offset 1.50 from 20 labelled answers" in html
    assert "Balthasar: nothing learned (3 labelled answers)" in html
    logged_in.post(panel.get_absolute_url(), edit_data(panel, prompt_variants="quote"))
    html = logged_in.get(panel.get_absolute_url()).content.decode()
    assert "Void: learned for other agents or prompt variants" in html
