"""The API of evaluations: runs started and read, a panel certified (the suites they run
on are api/suite_endpoints.py's).

    POST /api/evaluations/                {"panel": name or id | "agents": [3 agents],
                                           "suite": name or id, "repeat": N} -> 201
    GET  /api/evaluations/<id>/           progress, and the report once the run is done
    POST /api/evaluations/<id>/cancel     end its unfinished judgements in error
    GET  /api/panels/<id>/certificate     the panel's certificate for its current agents
    POST /api/panels/<id>/certificate     {"target", "delta", "runs"} -> 201, certify it
    GET  /api/panels/<id>/cascade-certificate   its escalation chain's certificate
    POST /api/panels/<id>/cascade-certificate   {"target", "delta"} -> 201, certify the
                                          chain it starts (docs/escalation.md)

Errors name the field of a run ("agents[1].model", "suite").
"""

from collections.abc import Callable
from typing import Annotated

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from ninja import Path, Router, Status

from judgements.api import evaluation_schemas, schemas
from judgements.api.site import token_of
from judgements.core import text
from judgements.core.errors import InvalidInput
from judgements.evaluations import answers as run_answers
from judgements.evaluations import cascade, certify, runs
from judgements.infrastructure.database import db_call
from judgements.models import ID_MAX, ApiToken, Certificate, EvaluationRun, Panel, Suite, is_id
from judgements.outcome import answers
from judgements.panels import saved_panels

router = Router(tags=["evaluations"])

UNSAVED_PANEL_NAME = "Unsaved panel"
NOT_A_SUITE = "Must be a suite's name (a string) or id (an integer)."
# Digits only (Django's int converter): anything else under /api/ is a JSON 404.
ObjectId = Annotated[int, Path(description="Its id.")]
ERRORS = {(401, 404): schemas.Error}
# What both certifying endpoints answer (a panel's agents, the chain it starts).
CERTIFIED = {
    201: answers.Certificate,
    (400, 422): schemas.Invalid,
    (401, 403, 404, 413, 429): schemas.Error,
}


def resolve_suite(reference: object, user: User) -> Suite:
    """The suite a run names: an integer is an id; a string a name (compared as names
    are, text.comparable_name: the user's own before the shipped ones), or else a decimal
    id. A suite the user may not use is as unknown as one that does not exist."""
    if isinstance(reference, bool) or not isinstance(reference, int | str):
        raise InvalidInput({"suite": [NOT_A_SUITE]})
    found = None
    if isinstance(reference, str):
        found = suite_by_name(reference, user)
        if found is None and reference.isascii() and reference.isdecimal():
            reference = int(reference)
    if found is None and isinstance(reference, int) and 1 <= reference <= ID_MAX:
        found = Suite.objects.visible_to(user).filter(pk=reference).first()
    if found is None:
        shown = reference if isinstance(reference, int) else repr(text.escaped(reference))
        raise InvalidInput({"suite": [f"No suite {shown} that you may use."]})
    return found


def suite_by_name(name: str, user: User) -> Suite | None:
    key = text.comparable_name(name)
    if not key:
        return None
    matches = [
        suite
        for suite in Suite.objects.visible_to(user).only("id", "name", "owner")
        if text.comparable_name(suite.name) == key
    ]
    for group in (
        [s for s in matches if s.owner_id == user.pk],
        [s for s in matches if s.owner_id is None],
    ):
        if group:
            return group[0]
    # Only staff see other users' suites, where one name can repeat.
    if len(matches) > 1:
        raise InvalidInput(
            {"suite": [f"{len(matches)} users have a suite called {name!r}: give its id."]}
        )
    return matches[0] if matches else None


# --- runs ------------------------------------------------------------------------------


def start_from_request(
    body: evaluation_schemas.EvaluationRequest, token: ApiToken
) -> run_answers.EvaluationRun:
    """Resolve the panel and the suite the request names, then start the run
    (runs.start_run checks the agents and the repeat count); InvalidInput names every
    field at fault it can."""
    user = token.user
    errors: dict[str, list[str]] = {}
    panel, agents, panel_name = None, None, body.panel_name or UNSAVED_PANEL_NAME
    if body.panel is not None:
        try:
            panel = saved_panels.resolve(body.panel, user)
        except InvalidInput as exc:
            errors.update(exc.errors)
        else:
            agents, panel_name = saved_panels.agents_of(panel), panel.name
    else:
        agents = [agent.model_dump() for agent in body.agents or ()]
    suite = None
    try:
        suite = resolve_suite(body.suite, user)
    except InvalidInput as exc:
        errors.update(exc.errors)
    if errors or suite is None or agents is None:
        raise InvalidInput(errors)
    run = runs.start_run(
        panel=panel,
        agents=agents,
        panel_name=panel_name,
        suite=suite,
        repeats=body.repeat,
        creator=user,
        api_token=token,
    )
    return runs.as_result(run)


RUN_ANSWERS = {
    201: run_answers.EvaluationRun,
    402: schemas.OverBudget,
    (400, 422): schemas.Invalid,
    (401, 413, 429): schemas.Error,
}


@router.post("/evaluations/", url_name="api-evaluations", response=RUN_ANSWERS)
async def start_run(
    request: HttpRequest, body: evaluation_schemas.EvaluationRequest, response: HttpResponse
) -> Status[run_answers.EvaluationRun]:
    """Start an evaluation run: a panel over a suite, each case judged `repeat` times."""
    result = await db_call(start_from_request, for_request=True)(body, token_of(request))
    response["Location"] = f"/api/evaluations/{result.id}/"
    return Status(201, result)


def visible_run(run_id: int, user: User) -> EvaluationRun | None:
    return (
        EvaluationRun.objects.visible_to(user).filter(pk=run_id).first() if is_id(run_id) else None
    )


def visible_run_result(run_id: int, user: User) -> run_answers.EvaluationRun | None:
    run = visible_run(run_id, user)
    return None if run is None else runs.as_result(run)


@router.get("/evaluations/{int:run_id}/", response={200: run_answers.EvaluationRun, **ERRORS})
async def read_run(
    request: HttpRequest, run_id: ObjectId
) -> run_answers.EvaluationRun | Status[schemas.Error]:
    """A run's progress and, once every judgement has ended, its report."""
    result = await db_call(visible_run_result, for_request=True)(run_id, token_of(request).user)
    if result is None:
        return Status(404, schemas.Error(error=f"No evaluation run {run_id}."))
    return result


def cancelled(run_id: int, user: User) -> Status[schemas.Error | run_answers.EvaluationRun]:
    run = visible_run(run_id, user)
    if run is None:
        return Status(404, schemas.Error(error=f"No evaluation run {run_id}."))
    if not runs.cancel(run, user):
        return Status(409, schemas.Error(error=f"Evaluation run {run_id} has already ended."))
    run.refresh_from_db()
    return Status(200, runs.as_result(run))


@router.post(
    "/evaluations/{int:run_id}/cancel",
    response={200: run_answers.EvaluationRun, (401, 404, 409): schemas.Error},
)
async def cancel_run(
    request: HttpRequest, run_id: ObjectId
) -> Status[schemas.Error | run_answers.EvaluationRun]:
    """Cancel a run: its judgements not yet ended end in error; 409 once it has ended."""
    return await db_call(cancelled, for_request=True)(run_id, token_of(request).user)


# --- a panel's certificate ---------------------------------------------------------------


def visible_panel(panel_id: int, user: User) -> Panel | None:
    return saved_panels.by_id(saved_panels.visible(user), panel_id) if is_id(panel_id) else None


def newest_certificate(
    panel_id: int, user: User, current: Callable[[Panel], Certificate | None], of: str
) -> Status[schemas.Error] | answers.Certificate:
    """The certificate `current` finds for the panel, or 404 naming what it would be `of`
    (a panel's agents or the chain it starts)."""
    panel = visible_panel(panel_id, user)
    if panel is None:
        return Status(404, schemas.Error(error=f"No panel {panel_id}."))
    found = current(panel)
    if found is None:
        return Status(
            404, schemas.Error(error=f"Panel {panel_id} holds no certificate for its {of}.")
        )
    return answers.Certificate.from_record(found)


def panel_to_certify(
    panel_id: int, user: User
) -> Panel | Status[schemas.Error | answers.Certificate]:
    """The panel `user` may certify, or the certifying endpoint's answer saying why not
    (404, 403)."""
    panel = visible_panel(panel_id, user)
    if panel is None:
        return Status(404, schemas.Error(error=f"No panel {panel_id}."))
    if not panel.editable_by(user):
        return Status(403, schemas.Error(error="Only staff may certify an example panel."))
    return panel


def current_certificate(panel_id: int, user: User) -> Status[schemas.Error] | answers.Certificate:
    return newest_certificate(panel_id, user, certify.current, "agents")


def certified(
    panel_id: int, user: User, body: evaluation_schemas.CertifyRequest
) -> Status[schemas.Error | answers.Certificate]:
    panel = panel_to_certify(panel_id, user)
    if isinstance(panel, Status):
        return panel
    made = certify.certify(
        panel, user=user, target=body.target, delta=body.delta, run_ids=body.runs
    )
    return Status(201, answers.Certificate.from_record(made))


@router.get("/panels/{int:panel_id}/certificate", response={200: answers.Certificate, **ERRORS})
async def read_certificate(
    request: HttpRequest, panel_id: ObjectId
) -> Status[schemas.Error] | answers.Certificate:
    """The panel's newest certificate for its current agents, certified or not; 404 when
    it was never measured or a change of agents voided every one."""
    user = token_of(request).user
    return await db_call(current_certificate, for_request=True)(panel_id, user)


@router.post(
    "/panels/{int:panel_id}/certificate",
    url_name="api-certify",
    response=CERTIFIED,
)
async def certify_panel(
    request: HttpRequest, panel_id: ObjectId, body: evaluation_schemas.CertifyRequest
) -> Status[schemas.Error | answers.Certificate]:
    """Measure the panel on its finished evaluation runs of its current agents and store
    the certificate: the rule with the most coverage whose lower bound on the kept
    verdicts' accuracy reaches `target`, or, when none does, the best bound reached
    (certified false). 422 names `target`, `delta` or `runs` (no such run to measure on)."""
    user = token_of(request).user
    return await db_call(certified, for_request=True)(panel_id, user, body)


# --- an escalation chain's certificate (docs/escalation.md) -------------------------------


def current_cascade(panel_id: int, user: User) -> Status[schemas.Error] | answers.Certificate:
    return newest_certificate(panel_id, user, cascade.current, "chain")


def cascade_certified(
    panel_id: int, user: User, body: evaluation_schemas.CertifyCascadeRequest
) -> Status[schemas.Error | answers.Certificate]:
    panel = panel_to_certify(panel_id, user)
    if isinstance(panel, Status):
        return panel
    made = cascade.certify_cascade(panel, user=user, target=body.target, delta=body.delta)
    return Status(201, answers.Certificate.from_record(made))


@router.get(
    "/panels/{int:panel_id}/cascade-certificate", response={200: answers.Certificate, **ERRORS}
)
async def read_cascade_certificate(
    request: HttpRequest, panel_id: ObjectId
) -> Status[schemas.Error] | answers.Certificate:
    """The newest certificate of the escalation chain the panel starts, as the chain stands
    now; 404 when none was made for it."""
    user = token_of(request).user
    return await db_call(current_cascade, for_request=True)(panel_id, user)


@router.post(
    "/panels/{int:panel_id}/cascade-certificate",
    url_name="api-certify-cascade",
    response=CERTIFIED,
)
async def certify_cascade(
    request: HttpRequest, panel_id: ObjectId, body: evaluation_schemas.CertifyCascadeRequest
) -> Status[schemas.Error | answers.Certificate]:
    """Certify the escalation chain the panel starts from every level's finished runs on
    the suites all of them ran: each level's rule, and the report per level (share kept,
    kept accuracy with its interval, tokens and seconds, share left for people) beside the
    strongest level alone. 422 names `target`, `delta`, `panel` (it escalates nowhere) or
    `runs` (a level has no run on a shared suite)."""
    user = token_of(request).user
    return await db_call(cascade_certified, for_request=True)(panel_id, user, body)
