"""The HTTP API of evaluations: suites in and out as JSONL, runs started and read.

    GET  /api/suites/                     the suites the caller may run (theirs, shipped)
    POST /api/suites/?name=N&description=D
                                          a JSONL body (one case a line) -> 201 and the suite
    GET  /api/suites/<id>.jsonl           the suite as JSONL, as POST takes it back
    POST /api/evaluations/                {"panel": name or id | "agents": [3 agents],
                                           "suite": name or id, "repeat": N} -> 201
    GET  /api/evaluations/<id>/           progress, and the report once the run is done
    POST /api/evaluations/<id>/cancel     end its unfinished judgements in error

A suite is sent as the JSONL file it is kept in (the page and the command line read the
same file): its name and description go in the query string. Errors follow the rest of
the API (api/judgement_endpoints.py): 400 with {"errors": {path: [messages]}}, the path naming the
line and field of a suite ("line 4.expected") or the field of a run ("agents[1].model",
"suite", "repeat"); 404 for another user's suite or run.
"""

from django.http import HttpRequest, HttpResponse, JsonResponse

from judgements.api.endpoint import endpoint, error, invalid
from judgements.core import text
from judgements.core.errors import InvalidInput
from judgements.engine.database import db_call
from judgements.evaluations import runs, suites
from judgements.intake import cases, limits
from judgements.models import ApiToken, EvaluationRun, Suite
from judgements.panels import saved_panels

RUN_FIELDS = ("panel", "agents", "panel_name", "suite", "repeat")
SUITE_QUERY = ("name", "description")
UNSAVED_PANEL_NAME = "Unsaved panel"
NOT_A_SUITE = "Must be a suite's name (a string) or id (an integer)."
ID_MAX = 2**63 - 1


# --- suites ----------------------------------------------------------------------------


def suite_result(suite: Suite) -> dict:
    return {
        "id": suite.pk,
        "name": suite.name,
        "description": suite.description,
        "example": suite.owner_id is None,
        "cases": suite.cases.count(),
        "export": f"/api/suites/{suite.pk}.jsonl",
    }


def suite_listing(user) -> list[dict]:
    return [suite_result(suite) for suite in Suite.objects.visible_to(user).order_by("name", "id")]


@endpoint("GET", "POST")
async def suites_collection(request: HttpRequest, token: ApiToken) -> JsonResponse:
    user = token.user
    if request.method == "GET":
        return JsonResponse({"suites": await db_call(suite_listing, for_request=True)(user)})
    errors = query_errors(request)
    if errors:
        return invalid(errors)
    data = request.body
    try:
        suite = await db_call(suites.import_suite, for_request=True)(
            name=request.GET.get("name", ""),
            description=request.GET.get("description", ""),
            owner=user,
            data=data,
        )
    except InvalidInput as exc:
        return invalid(exc.errors)
    response = JsonResponse(await db_call(suite_result, for_request=True)(suite), status=201)
    response["Location"] = f"/api/suites/{suite.pk}.jsonl"
    return response


def query_errors(request: HttpRequest) -> dict[str, list[str]]:
    """Unknown query parameters, and a name or description that was not UTF-8 (Django
    would read it with U+FFFD in place of the bad bytes: a silent change)."""
    errors = {
        text.escaped(key): [f"Unknown parameter; the parameters are {', '.join(SUITE_QUERY)}."]
        for key in request.GET
        if key not in SUITE_QUERY
    }
    query = request.META.get("QUERY_STRING", "").encode("utf-8", "replace")
    for name in cases.invalid_utf8_fields(query) & set(SUITE_QUERY):
        errors[name] = ["Not valid UTF-8 once percent-decoded: send the text as UTF-8."]
    return errors


def find_visible_suite(suite_id: int, user) -> Suite | None:
    return Suite.objects.visible_to(user).filter(pk=suite_id).first()


@endpoint("GET")
async def suite_export(request: HttpRequest, token: ApiToken, suite_id: int) -> HttpResponse:
    suite = await db_call(find_visible_suite, for_request=True)(suite_id, token.user)
    if suite is None:
        return error(404, f"No suite {suite_id}.")
    return HttpResponse(
        await db_call(suites.export_jsonl, for_request=True)(suite),
        content_type=suites.JSONL_CONTENT_TYPE,
    )


def resolve_suite(reference, user) -> Suite:
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


def suite_by_name(name: str, user) -> Suite | None:
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


def start_from_body(body, user) -> EvaluationRun:
    """Check the request's fields, then start the run (runs.start_run checks the
    agents and the repeat count); InvalidInput names every field at fault it can."""
    if not isinstance(body, dict):
        raise InvalidInput(
            {"body": ['Must be a JSON object: {"panel" or "agents", "suite", "repeat"}.']}
        )
    errors = cases.unknown_fields(body, RUN_FIELDS, "")
    panel, agents, panel_name = None, None, None
    if "panel" in body and "agents" in body:
        errors["panel"] = [saved_panels.BOTH_GIVEN]
    elif "panel" in body:
        if "panel_name" in body:
            errors["panel_name"] = ['Only with "agents": a saved panel runs under its name.']
        try:
            panel = saved_panels.resolve(body["panel"], user)
        except InvalidInput as exc:
            errors.update(exc.errors)
        else:
            agents, panel_name = saved_panels.agents_of(panel), panel.name
    elif "agents" in body:
        agents, panel_name = body["agents"], body.get("panel_name", UNSAVED_PANEL_NAME)
    else:
        errors["panel"] = [saved_panels.NEITHER_GIVEN]
    suite = None
    if "suite" not in body:
        errors["suite"] = ["Required: the name or id of the suite to run."]
    else:
        try:
            suite = resolve_suite(body["suite"], user)
        except InvalidInput as exc:
            errors.update(exc.errors)
    if errors or suite is None or agents is None or panel_name is None:
        raise InvalidInput(errors)
    return runs.start_run(
        panel=panel,
        agents=agents,
        panel_name=panel_name,
        suite=suite,
        repeats=body.get("repeat", 1),
        creator=user,
    )


def started(body, user) -> dict:
    return runs.as_result(start_from_body(body, user))


@endpoint("POST")
async def evaluations_collection(request: HttpRequest, token: ApiToken) -> JsonResponse:
    try:
        body = cases.parse_case_json(request.body, "The body")
    except InvalidInput as exc:
        return invalid({"body": exc.errors["case"]})
    try:
        result = await db_call(started, for_request=True)(body, token.user)
    except InvalidInput as exc:
        return invalid(exc.errors)
    except limits.Refused as exc:
        response = error(429, exc.message, retry_after=exc.retry_after)
        response["Retry-After"] = str(exc.retry_after)
        return response
    response = JsonResponse(result, status=201)
    response["Location"] = f"/api/evaluations/{result['id']}/"
    return response


def visible_run_result(run_id: int, user) -> dict | None:
    run = EvaluationRun.objects.visible_to(user).filter(pk=run_id).first()
    return None if run is None else runs.as_result(run)


@endpoint("GET")
async def evaluation_resource(request: HttpRequest, token: ApiToken, run_id: int) -> JsonResponse:
    result = await db_call(visible_run_result, for_request=True)(run_id, token.user)
    if result is None:
        return error(404, f"No evaluation run {run_id}.")
    return JsonResponse(result)


def cancelled(run_id: int, user) -> tuple[int, dict]:
    run = EvaluationRun.objects.visible_to(user).filter(pk=run_id).first()
    if run is None:
        return 404, {"error": f"No evaluation run {run_id}."}
    if not runs.cancel(run, user):
        return 409, {"error": f"Evaluation run {run_id} has already ended."}
    run.refresh_from_db()
    return 200, runs.as_result(run)


@endpoint("POST")
async def evaluation_cancel(request: HttpRequest, token: ApiToken, run_id: int) -> JsonResponse:
    status, result = await db_call(cancelled, for_request=True)(run_id, token.user)
    if status != 200:
        return error(status, result["error"])
    return JsonResponse(result)
