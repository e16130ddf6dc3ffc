"""A case's rows: the judgement and its agents made from a typed case (intake/case.py),
unsaved, for intake/start.py `store`, the one way a judgement starts; and a judgement read
back as a case, for "Run again".

What the row holds besides what was typed is decided here, once, at submit: the team it
belongs to, whether a contested verdict is held, the checks it asks and the prompt
variants it runs, so that a resumed judgement runs the same whatever the defaults become.
"""

from collections.abc import Sequence

from django.contrib.auth.models import User

from judgements.core import prompt_variants, text
from judgements.intake.case import Case, CaseAgent
from judgements.models.access import ApiToken
from judgements.models.agents import Agent
from judgements.models.checks import checks_for
from judgements.models.evaluations import EvaluationRun
from judgements.models.judgements import Judgement
from judgements.models.magi_settings import magi_settings
from judgements.models.panels import Panel
from judgements.models.teams import Team


def judgement_row(
    case: Case,
    creator: User | None = None,
    api_token: ApiToken | None = None,
    run: EvaluationRun | None = None,
) -> Judgement:
    """An unsaved judgement for a validated case."""
    return Judgement(
        title=case.title,
        content=case.content,
        creator=creator,
        api_token=api_token,
        callback_url=case.callback_url,
        panel=case.panel,
        team=team_for(case.panel, api_token, run),
        hold_contested=hold_contested(case),
        hold_unmeasured=(
            magi_settings.MAGI_HOLD_UNMEASURED
            if case.hold_unmeasured is None
            else case.hold_unmeasured
        ),
        checks_asked=checks_for(
            case.panel,
            [agent.stored() for agent in case.agents],
            evaluation=run is not None,
            variants=case.prompt_variants or (),
            plain_call=case.plain_call,
        ),
        # Resolved here, so the row says what ran whatever the default becomes.
        prompt_variants=sorted(map(str, prompt_variants.resolve(case.prompt_variants))),
        evaluation_run=run,
        suite_case=case.suite_case,
        repeat=case.repeat,
    )


def agent_rows(judgement_id: int, agents: Sequence[CaseAgent]) -> list[Agent]:
    """Unsaved rows for a judgement's validated agents, in panel order."""
    return [
        Agent(
            judgement_id=judgement_id,
            position=position,
            name=agent.name,
            name_key=text.name_key(agent.name),
            model=agent.model,
            criteria=agent.criteria,
        )
        for position, agent in enumerate(agents, start=1)
    ]


def hold_contested(case: Case) -> bool:
    """Whether a contested verdict of this case is held for a person: the case's own
    hold_contested when it says, else its saved panel's, else the deployment's default."""
    if case.hold_contested is not None:
        return case.hold_contested
    if case.panel is not None and case.panel.hold_contested is not None:
        return bool(case.panel.hold_contested)
    return bool(magi_settings.MAGI_HOLD_CONTESTED)


def team_for(
    panel: Panel | None, api_token: ApiToken | None, run: EvaluationRun | None
) -> Team | None:
    """The team a new judgement (or run) belongs to: its saved panel's, else its API
    token's, else its evaluation run's; None keeps it its creator's alone."""
    for owner in (panel, api_token, run):
        if owner is not None and owner.team is not None:
            return owner.team
    return None


def case_of(judgement: Judgement) -> Case:
    """What was typed of a judgement (its title, content and agents), for "Run again"."""
    return Case(
        title=judgement.title,
        content=judgement.content,
        agents=tuple(
            CaseAgent(name=a.name, model=a.model, criteria=a.criteria)
            for a in judgement.agents.all()
        ),
    )
