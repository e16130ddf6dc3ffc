"""The API of evaluations: suites in and out as JSONL, runs started and read.

    GET  /api/suites/                     the suites the caller may run (theirs, shipped)
    POST /api/suites/?name=N&description=D
                                          a JSONL body (one case a line) -> 201 and the suite
    GET  /api/suites/<id>.jsonl           the suite as JSONL, as POST takes it back
    POST /api/evaluations/                {"panel": name or id | "agents": [3 agents],
                                           "suite": name or id, "repeat": N} -> 201
    GET  /api/evaluations/<id>/           progress, and the report once the run is done
    POST /api/evaluations/<id>/cancel     end its unfinished judgements in error
    GET  /api/panels/<id>/certificate     the panel's certificate for its current agents
    POST /api/panels/<id>/certificate     {"target", "delta", "runs"} -> 201, certify it

A suite is sent as the JSONL file it is kept in (the page and the command line read the
same file): its name and description go in the query string. Errors name the line and
field of a suite ("line 4.expected") or the field of a run ("agents[1].model", "suite").
"""

from typing import Annotated, Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from ninja import Path, Query, Router, Status

from judgements.api import evaluation_schemas, schemas
from judgements.api.site import token_of
from judgements.core import text
from judgements.core.errors import InvalidInput
from judgements.evaluations import answers as run_answers
from judgements.evaluations import certify, runs, suites
from judgements.infrastructure.database import db_call
from judgements.infrastructure.forms import invalid_utf8_fields
from judgements.intake import saved_panels
from judgements.models import ID_MAX, ApiToken, EvaluationRun, Panel, Suite, is_id
from judgements.outcome import answers

router = Router(tags=["evaluations"])

SUITE_QUERY = ("name", "description")
UNSAVED_PANEL_NAME = "Unsaved panel"
NOT_A_SUITE = "Must be a suite's name (a string) or id (an integer)."
# Digits only (Django's int converter): anything else under /api/ is a JSON 404.
ObjectId = Annotated[int, Path(description="Its id.")]
ERRORS = {(401, 404): schemas.Error}
JSONL_BODY = {
    "required": True,
    "description": "The suite as JSONL: UTF-8 text, one JSON object a line, each as "
    '#/components/schemas/SuiteCaseLine describes ({"id", "content", "expected"} '
    'and optional "title", "expected_agents", "tags"), as GET /api/suites/{id}.jsonl sends '
    "it back. A line that breaks it answers 422 naming the line and field.",
    "content": {"application/jsonl": {"schema": {"type": "string", "minLength": 1}}},
}

# --- suites ----------------------------------------------------------------------------


def suite_listing(user: User) -> list[run_answers.Suite]:
    suites = Suite.objects.visible_to(user).order_by("name", "id")
    return [run_answers.Suite.from_record(suite) for suite in suites]


@router.get("/suites/", response={200: evaluation_schemas.SuiteList, 401: schemas.Error})
async def list_suites(request: HttpRequest) -> dict:
    """The suites the caller may run: their own and the shipped ones."""
    return {"suites": await db_call(suite_listing, for_request=True)(token_of(request).user)}


@router.post(
    "/suites/",
    response={
        201: run_answers.Suite,
        (400, 422): schemas.Invalid,
        (401, 413): schemas.Error,
    },
    openapi_extra={"requestBody": JSONL_BODY},
)
async def import_suite(
    request: HttpRequest,
    response: HttpResponse,
    name: Annotated[str, Query(min_length=1, description="The suite's name.")],
    description: Annotated[str, Query(description="What the suite tests.")] = "",
) -> Status[run_answers.Suite]:
    """Import a suite: the body is JSONL, one case a line. 422 names the line and field
    at fault ("line 4.expected")."""
    errors = query_errors(request)
    if errors:
        raise InvalidInput(errors)
    if not request.body:  # the document asks for at least one character: a broken schema
        raise InvalidInput({"cases": [suites.NO_CASES]}, breaks_schema=True)
    suite = await db_call(suites.import_suite, for_request=True)(
        name=name, description=description, owner=token_of(request).user, data=request.body
    )
    response["Location"] = f"/api/suites/{suite.pk}.jsonl"
    return Status(201, await db_call(run_answers.Suite.from_record, for_request=True)(suite))


def query_errors(request: HttpRequest) -> dict[str, list[str]]:
    """Unknown query parameters, and a name or description that was not UTF-8 (Django
    would read it with U+FFFD in place of the bad bytes: a silent change)."""
    errors = {
        text.escaped(key): [f"Unknown parameter; the parameters are {', '.join(SUITE_QUERY)}."]
        for key in request.GET
        if key not in SUITE_QUERY
    }
    query = request.META.get("QUERY_STRING", "").encode("utf-8", "replace")
    for name in invalid_utf8_fields(query) & set(SUITE_QUERY):
        errors[name] = ["Not valid UTF-8 once percent-decoded: send the text as UTF-8."]
    return errors


def find_visible_suite(suite_id: int, user: User) -> Suite | None:
    return Suite.objects.visible_to(user).filter(pk=suite_id).first() if is_id(suite_id) else None


@router.get(
    "/suites/{int:suite_id}.jsonl",
    response={200: None, **ERRORS},
    openapi_extra={
        "responses": {
            200: {
                "description": "The suite as JSONL, one case a line.",
                "content": {"application/jsonl": {"schema": {"type": "string", "minLength": 1}}},
            }
        }
    },
)
async def export_suite(request: HttpRequest, suite_id: ObjectId) -> HttpResponse | Status[dict]:
    """A suite as JSONL, as POST /api/suites/ takes it back."""
    suite = await db_call(find_visible_suite, for_request=True)(suite_id, token_of(request).user)
    if suite is None:
        return Status(404, {"error": f"No suite {suite_id}."})
    return HttpResponse(
        await db_call(suites.export_jsonl, for_request=True)(suite),
        content_type=suites.JSONL_CONTENT_TYPE,
    )


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
) -> run_answers.EvaluationRun | Status[dict]:
    """A run's progress and, once every judgement has ended, its report."""
    result = await db_call(visible_run_result, for_request=True)(run_id, token_of(request).user)
    if result is None:
        return Status(404, {"error": f"No evaluation run {run_id}."})
    return result


def cancelled(run_id: int, user: User) -> Status[Any]:
    run = visible_run(run_id, user)
    if run is None:
        return Status(404, {"error": f"No evaluation run {run_id}."})
    if not runs.cancel(run, user):
        return Status(409, {"error": f"Evaluation run {run_id} has already ended."})
    run.refresh_from_db()
    return Status(200, runs.as_result(run))


@router.post(
    "/evaluations/{int:run_id}/cancel",
    response={200: run_answers.EvaluationRun, (401, 404, 409): schemas.Error},
)
async def cancel_run(request: HttpRequest, run_id: ObjectId) -> Status[dict]:
    """Cancel a run: its judgements not yet ended end in error; 409 once it has ended."""
    return await db_call(cancelled, for_request=True)(run_id, token_of(request).user)


# --- a panel's certificate ---------------------------------------------------------------


def visible_panel(panel_id: int, user: User) -> Panel | None:
    return saved_panels.by_id(saved_panels.visible(user), panel_id) if is_id(panel_id) else None


def current_certificate(panel_id: int, user: User) -> Status[Any] | answers.Certificate:
    panel = visible_panel(panel_id, user)
    if panel is None:
        return Status(404, {"error": f"No panel {panel_id}."})
    found = certify.current(panel)
    if found is None:
        return Status(404, {"error": f"Panel {panel_id} holds no certificate for its agents."})
    return answers.Certificate.from_record(found)


def certified(panel_id: int, user: User, body: evaluation_schemas.CertifyRequest) -> Status[Any]:
    panel = visible_panel(panel_id, user)
    if panel is None:
        return Status(404, {"error": f"No panel {panel_id}."})
    if not panel.editable_by(user):
        return Status(403, {"error": "Only staff may certify an example panel."})
    made = certify.certify(
        panel, user=user, target=body.target, delta=body.delta, run_ids=body.runs
    )
    return Status(201, answers.Certificate.from_record(made))


@router.get("/panels/{int:panel_id}/certificate", response={200: answers.Certificate, **ERRORS})
async def read_certificate(
    request: HttpRequest, panel_id: ObjectId
) -> Status[Any] | answers.Certificate:
    """The panel's newest certificate for its current agents, certified or not; 404 when
    it was never measured or a change of agents voided every one."""
    user = token_of(request).user
    return await db_call(current_certificate, for_request=True)(panel_id, user)


@router.post(
    "/panels/{int:panel_id}/certificate",
    url_name="api-certify",
    response={
        201: answers.Certificate,
        (400, 422): schemas.Invalid,
        (401, 403, 404, 413, 429): schemas.Error,
    },
)
async def certify_panel(
    request: HttpRequest, panel_id: ObjectId, body: evaluation_schemas.CertifyRequest
) -> Status[Any]:
    """Measure the panel on its finished evaluation runs of its current agents and store
    the certificate: the rule with the most coverage whose lower bound on the kept
    verdicts' accuracy reaches `target`, or, when none does, the best bound reached
    (certified false). 422 names `target`, `delta` or `runs` (no such run to measure on)."""
    user = token_of(request).user
    return await db_call(certified, for_request=True)(panel_id, user, body)
