"""A case sent as JSON (the API's body, the command line's case file, an MCP tool's
arguments) made ready to store: validated where it comes in by its pydantic face
(intake/schemas.py `CaseJson`), then, in submit's step 3 (intake/start.py), the saved
panel it names looked up and its callback URL checked, which need the database and the
caller. A schema-valid case refused here answers 422 from the API: the panel does not
exist for this user, or its agents no longer pass, or the callback URL is not allowed."""

from dataclasses import replace

from django.contrib.auth.models import User

from judgements.core.errors import InvalidInput
from judgements.intake import schemas
from judgements.intake.case import Case
from judgements.outcome import webhooks
from judgements.panels import saved_panels


def validate_case(
    case: object, user: User | None, model: type[schemas.CaseJson] = schemas.CaseJson
) -> Case:
    """Whatever was given (JSON as parsed, a test's dict) validated by the case's model
    and resolved: the one validator, when nothing needs checking in between."""
    return resolve_case(schemas.validated(model, case).case(), user)


def resolve_case(case: Case, user: User | None) -> Case:
    """The case with the agents of the saved panel it names (checked again: a model the
    deployment no longer serves shows as `panel.agents[0].model`) and that Panel, its
    callback URL checked for `user`. A case that names no panel and no URL (the page's,
    a run's, one resolved before) is returned as it is."""
    if case.panel_named is None and case.callback_url is None:
        return case
    errors: dict[str, list[str]] = {}
    panel, agents = case.panel, case.agents
    if case.panel_named is not None:
        try:
            panel = saved_panels.resolve(case.panel_named, user)
            agents = schemas.validated_agents(saved_panels.agents_of(panel))
        except InvalidInput as exc:
            errors.update({f if f == "panel" else f"panel.{f}": m for f, m in exc.errors.items()})
    if case.callback_url is not None:
        url_errors = webhooks.callback_url_errors(case.callback_url, user)
        if url_errors:
            errors["callback_url"] = url_errors
    if errors:
        raise InvalidInput(errors)
    return replace(case, agents=agents, panel=panel, panel_named=None)
