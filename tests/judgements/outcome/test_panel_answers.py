"""A saved panel as every surface reports it (judgements/outcome/panel_answers.py): by
names, its agents as given, its version and ETag, an example without an owner."""

import pytest

from judgements.outcome.panel_answers import Panel

pytestmark = pytest.mark.django_db


def test_a_saved_panel_answers_by_names_with_its_version(make_panel, user):
    panel = make_panel(name="Travel desk", owner=user, description="Trips")
    answer = Panel.from_record(panel)
    assert (answer.id, answer.name, answer.description) == (panel.pk, "Travel desk", "Trips")
    assert (answer.example, answer.owner) == (False, user.get_username())
    assert [agent.model_dump() for agent in answer.agents] == [
        {"name": agent["name"], "model": agent["model"], "criteria": agent["criteria"]}
        for agent in panel.agents
    ]
    assert (answer.version, answer.etag) == (panel.version, panel.etag())
    assert answer.certificates == []


def test_an_example_panel_has_no_owner(make_panel):
    answer = Panel.from_record(make_panel(owner=None))
    assert (answer.example, answer.owner) == (True, None)
