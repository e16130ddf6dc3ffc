"""A case sent as JSON (the API's body, the command line's case file, an MCP tool's
arguments) turned into what intake/start.py stores: validated by its pydantic model
(intake/schemas.py), then its saved panel looked up and its callback URL checked, which
need the database and the caller. A schema-valid case refused here answers 422 from the
API: the panel does not exist for this user, or its agents no longer pass."""

from django.contrib.auth.models import User

from judgements.core.errors import InvalidInput
from judgements.intake import schemas
from judgements.intake.case import Case
from judgements.outcome import webhooks
from judgements.panels import saved_panels


def validate_case(
    case: object, user: User | None, model: type[schemas.Case] = schemas.Case
) -> Case:
    """Whatever was given (JSON as parsed, a test's dict) validated by the case's model
    and resolved: the one validator, when nothing needs checking in between."""
    return resolve_case(schemas.validated(model, case), user)


def resolve_case(case: schemas.Case, user: User | None) -> Case:
    """The validated case with its agents (a saved panel's, checked again: a model the
    deployment no longer serves shows as `panel.agents[0].model`) and its Panel or None."""
    errors: dict[str, list[str]] = {}
    panel, agents = None, tuple(agent.case_agent() for agent in case.agents or ())
    if case.panel is not None:
        try:
            panel = saved_panels.resolve(case.panel, user)
            agents = schemas.validated_agents(saved_panels.agents_of(panel))
        except InvalidInput as exc:
            errors.update({f if f == "panel" else f"panel.{f}": m for f, m in exc.errors.items()})
    callback_url = None
    if isinstance(case, schemas.CaseWithCallback) and case.callback_url is not None:
        url_errors = webhooks.callback_url_errors(case.callback_url, user)
        if url_errors:
            errors["callback_url"] = url_errors
        callback_url = case.callback_url
    if errors:
        raise InvalidInput(errors)
    return Case(
        title=case.title,
        content=case.content,
        agents=agents,
        hold_contested=case.hold_contested,
        panel=panel,
        callback_url=callback_url,
    )
