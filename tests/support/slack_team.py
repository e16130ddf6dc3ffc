"""A team that reviews in Slack, for the Slack tests: Payments, whose panel Refunds is
reviewed by ana, bob and cy with four eyes (dan is a member who does not review), and
Travel, whose panel eve reviews; a held verdict of Refunds that ana submitted, judged by
the engine against the suite's fake LLM (2-1 for approve: contested, and held)."""

from dataclasses import dataclass

from asgiref.sync import async_to_sync
from django.contrib.auth.models import User

from judgements.configuration import teams
from judgements.engine.runner import EngineRunner
from judgements.models import Judgement, Panel, Team
from tests.support.cases import case_for

SLACK_IDS = {"ana": "U0ANA", "bob": "U0BOB", "cy": "U0CY", "dan": "U0DAN", "eve": "U0EVE"}


@dataclass
class SlackTeam:
    people: dict[str, User]
    team: Team
    panel: Panel
    other_team: Team

    def held(
        self, make_judgement, fake_llm, callback_url: str | None = None, **fields
    ) -> Judgement:
        """`callback_url`: its webhooks' address, as the API's submit stores it."""
        fake_llm.script("model-c", votes="RRR")  # 2-1: contested
        judgement = make_judgement(
            creator=self.people["ana"],
            panel=self.panel.name,
            agents=None,
            hold_contested=True,
            **fields,
        )
        Judgement.objects.filter(pk=judgement.pk).update(callback_url=callback_url)
        assert async_to_sync(EngineRunner().run_judgement)(judgement.pk)
        judgement = Judgement.objects.get(pk=judgement.pk)
        assert judgement.verdict == "held", judgement.verdict
        return judgement


def team_of(*usernames: str) -> Team:
    """The team Payments, these people (made now) its members."""
    team = Team.objects.create(name="Payments")
    people = [User.objects.create_user(name, password="pw") for name in usernames]
    teams.set_members(team, people, None)
    return team


def slack_team(slack_server=None) -> SlackTeam:
    """The two teams and their people; each person known to `slack_server` by email."""
    people = {
        name: User.objects.create_user(name, email=f"{name}@example.com", password="pw")
        for name in SLACK_IDS
    }
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people[n] for n in ("ana", "bob", "cy", "dan")], None)
    panel = Panel.objects.create(
        name="Refunds", owner=people["ana"], team=team, agents=case_for()["agents"]
    )
    teams.set_reviewing(
        panel, None, reviewers=[people[n] for n in ("ana", "bob", "cy")], four_eyes=True
    )
    other = Team.objects.create(name="Travel")
    teams.set_members(other, [people["eve"]], None)
    travel = Panel.objects.create(
        name="Trips", owner=people["eve"], team=other, agents=case_for()["agents"]
    )
    teams.set_reviewing(travel, None, reviewers=[people["eve"]])
    if slack_server is not None:
        for name, slack_id in SLACK_IDS.items():
            slack_server.add_user(slack_id, people[name].email)
    return SlackTeam(people, team, panel, other)
