"""Who sees a team's things, over every page and API endpoint that lists or shows a
judgement, a run, a panel, a suite or a token: a member of the team does; a member of
another team is told it is not there (404, never 403) and finds none of it in a list.

The table names every URL of the site; a new view fails
test_every_url_has_a_rule until it is given one."""

from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from judgements.intake.start import Submission, submit
from judgements.models import (
    ApiToken,
    Budget,
    EvaluationRun,
    Judgement,
    Membership,
    Panel,
    Suite,
    Team,
)
from tests.support.cases import case_for, validated

# Transactional: the API reaches the database from its own threads (db_call).
pytestmark = pytest.mark.django_db(transaction=True)

SECRET_TITLE = "Team A's secret trip"


@dataclass(frozen=True)
class Rule:
    """How a URL is reached (`method`, `api`) and what it is about: `shows` an object of
    `kind` by id (outsiders get 404), or `lists` them (outsiders find no trace)."""

    method: str = "get"
    api: bool = False
    shows: str | None = None
    lists: bool = False
    # The member's status when the view takes more than seeing (a review, a revoke).
    member: tuple[int, ...] = (200,)
    # What the URL takes after "?", with "{run}" for the run's id.
    query: str = ""
    # What an outsider is told: not there. (A reference in a body is a field error.)
    outsider: int = 404


# Every URL of the site by name. Those about none of a team's things say so.
NOT_TEAM_DATA = Rule()
RULES: dict[str, Rule] = {
    "login": NOT_TEAM_DATA,
    "logout": NOT_TEAM_DATA,
    "oidc-start": NOT_TEAM_DATA,
    "oidc-callback": NOT_TEAM_DATA,
    "metrics": NOT_TEAM_DATA,
    "healthz": NOT_TEAM_DATA,
    # The audit log's public keys: anyone's to read (docs/evidence.md).
    "public-keys": NOT_TEAM_DATA,
    # The audit log's checkpoint and proofs: hashes only, public as a transparency log's.
    "api-log-checkpoint": NOT_TEAM_DATA,
    "api-log-inclusion": NOT_TEAM_DATA,
    "api-log-consistency": NOT_TEAM_DATA,
    "openapi-json": NOT_TEAM_DATA,
    "openapi-view": NOT_TEAM_DATA,
    "api-root": NOT_TEAM_DATA,
    "api-not-found": NOT_TEAM_DATA,
    "judgement-new": NOT_TEAM_DATA,
    "notification-settings": NOT_TEAM_DATA,
    # Slack's signed requests (no session: the signature says which team), and a Slack
    # user's link to the account they are signed in as (docs/slack.md).
    "slack-interactivity": NOT_TEAM_DATA,
    "slack-link": NOT_TEAM_DATA,
    # A team's Slack connection: its members' and staff's. Team A has none: 404 read.
    "api-team-slack": Rule(api=True, shows="team", member=(404,)),
    "api-team-slack-test": Rule(method="post", api=True, shows="team"),
    "team-slack": Rule(shows="team"),
    "team-slack-test": Rule(method="post", shows="team"),
    "team-slack-remove": Rule(method="post", shows="team", member=(302,)),
    "api-judgements": Rule(api=True, lists=True),
    "read_judgement": Rule(api=True, shows="judgement"),
    "api-evidence": Rule(api=True, shows="judgement"),
    "api-override": Rule(method="post", api=True, shows="judgement", member=(403,)),
    "api-confirm": Rule(method="post", api=True, shows="judgement", member=(403,)),
    "review_queue": Rule(api=True, lists=True, member=(403,)),
    "api-panels": Rule(api=True, lists=True),
    "api-panel": Rule(api=True, shows="panel"),
    "api-budgets": Rule(api=True, lists=True),
    "api-budget": Rule(api=True, shows="budget"),
    "api-teams": Rule(api=True, lists=True),
    "api-team": Rule(api=True, shows="team"),
    # Staff only: everyone else is refused, members too.
    "api-users": Rule(api=True, lists=True, member=(403,)),
    "api-tokens": NOT_TEAM_DATA,
    # Its operations are the ones above, each with its own rule.
    "api-batch": NOT_TEAM_DATA,
    # A batch's parts are the sender's own, used up by the batch that names them.
    "api-batch-parts": NOT_TEAM_DATA,
    # The models the deployment reaches: the same for everyone.
    "api-models": NOT_TEAM_DATA,
    "api-suites": Rule(api=True, lists=True),
    "api-suite-jsonl": Rule(api=True, shows="suite"),
    "api-suite": Rule(api=True, shows="suite"),
    # Starting a run names a panel and a suite: another team's are not there.
    "api-evaluations": Rule(
        method="post", api=True, shows="panel", member=(201, 422, 429), outsider=422
    ),
    "read_run": Rule(api=True, shows="run"),
    "cancel_run": Rule(method="post", api=True, shows="run", member=(200, 409)),
    "read_certificate": Rule(api=True, shows="panel", member=(404,)),
    "api-certify": Rule(method="post", api=True, shows="panel", member=(201, 400, 422)),
    # An escalation chain's certificate (docs/escalation.md): the panel's, as its own.
    "read_cascade_certificate": Rule(api=True, shows="panel", member=(404,)),
    "api-certify-cascade": Rule(method="post", api=True, shows="panel", member=(201, 400, 422)),
    "judgement-list": Rule(lists=True),
    "judgement-list-csv": Rule(lists=True),
    "judgement-detail": Rule(shows="judgement"),
    "judgement-export-json": Rule(shows="judgement"),
    "judgement-export-md": Rule(shows="judgement"),
    "judgement-evidence": Rule(shows="judgement"),
    "judgement-hide": Rule(method="post", shows="judgement", member=(302,)),
    "judgement-review-forms": Rule(shows="judgement"),
    "judgement-override": Rule(method="post", shows="judgement", member=(403,)),
    "judgement-confirm": Rule(method="post", shows="judgement", member=(403,)),
    "review-queue": Rule(lists=True, member=(403,)),
    "token-list": Rule(lists=True),
    # A token is its user's to revoke: a teammate's is not there either.
    "token-revoke": Rule(method="post", shows="token", member=(404,)),
    "panel-list": Rule(lists=True),
    "panel-edit": Rule(shows="panel"),
    "panel-certify": Rule(method="post", shows="panel", member=(200, 400, 409)),
    "panel-certify-cascade": Rule(method="post", shows="panel", member=(200, 400, 409)),
    "suite-list": Rule(lists=True),
    "suite-detail": Rule(shows="suite"),
    "suite-export": Rule(shows="suite"),
    "evaluation-compare": Rule(shows="run", query="a={run}&b={run}"),
    "evaluation-run": Rule(shows="run"),
    "evaluation-export-json": Rule(shows="run"),
    "evaluation-export-csv": Rule(shows="run"),
    "evaluation-export-md": Rule(shows="run"),
    "evaluation-cancel": Rule(method="post", shows="run", member=(302, 409)),
    # 286: htmx's "stop polling", for a run with nothing left to do.
    "evaluation-progress": Rule(shows="run", member=(200, 286)),
}


def site_urls() -> dict[str, str]:
    """Every named URL of the site but the admin's, as (name -> route)."""
    found: dict[str, str] = {}

    def walk(patterns: list, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if getattr(pattern, "app_name", None) != "admin":
                    walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and pattern.name:
                found.setdefault(pattern.name, prefix + str(pattern.pattern))

    walk(get_resolver().url_patterns, "")
    return found


def test_every_url_has_a_rule():
    assert sorted(set(site_urls()) - set(RULES)) == []
    assert sorted(set(RULES) - set(site_urls())) == []


@pytest.fixture
def world(fake_llm, settings):
    """Team A (ana, and a deploy bot's token) owns a panel, a suite, a run and a
    judgement; bob is in team B."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    users = get_user_model().objects
    ana, bob, bot = (users.create_user(name, password="pw") for name in ("ana", "bob", "bot"))
    team_a, team_b = Team.objects.create(name="A"), Team.objects.create(name="B")
    for team, user in ((team_a, ana), (team_a, bot), (team_b, bob)):
        Membership.objects.create(team=team, user=user)
    case = case_for()
    panel = Panel.objects.create(name="A's panel", owner=ana, team=team_a, agents=case["agents"])
    suite = Suite.objects.create(name="A's suite", owner=ana, team=team_a)
    budget = Budget.objects.create(panel=panel, period="day", limit_tokens=1_000_000)
    token, _ = ApiToken.issue(bot, "deploy bot")
    token.team = team_a
    token.save()
    run = EvaluationRun.objects.create(
        panel=panel, panel_name=panel.name, agents=case["agents"], suite=suite,
        creator=ana, team=team_a,
    )  # fmt: skip
    started = submit(
        [validated({**case, "title": SECRET_TITLE})], Submission(creator=bot, api_token=token)
    ).judgement
    return {"ana": ana, "bob": bob, "judgement": started, "panel": panel, "suite": suite,
            "run": run, "token": token, "budget": budget, "team": team_a}  # fmt: skip


def test_a_bot_s_judgement_belongs_to_its_token_s_team(world):
    team = Judgement.objects.get(pk=world["judgement"].pk).team
    assert team is not None and team.name == "A"


def url_for(name: str, route: str, world: dict) -> str:
    ids = {
        "judgement_id": world["judgement"].pk,
        "run_id": world["run"].pk,
        "panel_id": world["panel"].pk,
        "suite_id": world["suite"].pk,
        "token_id": world["token"].pk,
        "budget_id": world["budget"].pk,
        "team_id": world["team"].pk,
    }
    url = "/" + route.lstrip("^")
    for key, value in ids.items():
        url = url.replace(f"<int:{key}>", str(value))
    query = RULES[name].query.format(run=world["run"].pk)
    return f"{url}?{query}" if query else url


def call(user, rule: Rule, url: str, world: dict):
    """The request as a program or a person sends it, with a body that is valid where it
    can be, so what answers is who may, not what was sent."""
    body = {
        "reason": "Looked at it.",
        "decision": "approve",
        "panel": world["panel"].pk,
        "suite": world["suite"].pk,
    }
    if rule.api:
        key = ApiToken.issue(user, "access")[1]
        client = Client(headers={"Authorization": f"Bearer {key}"})
        if rule.method == "post":
            # Each endpoint's own fields only: a field it does not take is a 400 first.
            fields = API_BODIES.get(url.rstrip("/").rsplit("/", 1)[-1], ())
            sent = {field: body[field] for field in fields}
            return client.post(url, data=sent, content_type="application/json")
        return client.get(url)
    client = Client()
    client.force_login(user)
    if rule.method == "post":
        return client.post(url, {**body, "confirm-reason": body["reason"]})
    return client.get(url)


# The fields each API POST takes, by the last part of its path.
API_BODIES = {
    "confirm": ("reason",),
    "override": ("decision", "reason"),
    "evaluations": ("panel", "suite"),
    "certificate": (),
    "cancel": (),
}

TEAM_RULES = sorted(name for name, rule in RULES.items() if rule.shows or rule.lists)


@pytest.mark.parametrize("name", TEAM_RULES)
def test_another_team_finds_nothing_and_a_member_finds_it(world, name):
    rule = RULES[name]
    url = url_for(name, site_urls()[name], world)
    outsider = call(world["bob"], rule, url, world)
    if rule.shows:
        assert outsider.status_code == rule.outsider, (url, outsider.status_code)
        for secret in (SECRET_TITLE, "A's panel", "A's suite"):
            assert secret.encode() not in outsider.content, (url, secret)
    else:
        assert outsider.status_code in (200, 403), (url, outsider.status_code)
        for secret in (SECRET_TITLE, "A&#x27;s panel", "A's panel", "A's suite", "deploy bot"):
            assert secret.encode() not in outsider.content, (url, secret)
    member = call(world["ana"], rule, url, world)
    assert member.status_code in rule.member, (url, member.status_code)
