"""The API of evaluation suites, in and out as JSONL.

    GET    /api/suites/                      the suites the caller may run, with ETags
    POST   /api/suites/?name=N&description=D[&team=T]
                                             a JSONL body (one case a line) -> 201
    GET    /api/suites/<id>.jsonl            the suite as JSONL, as POST takes it back
    PUT    /api/suites/<id>.jsonl?name=N&description=D[&team=T]
                                             If-Match; its JSONL -> 200 (409 once runs
                                             were made on it, unless its cases stay)
    GET    /api/suites/<id>/                 the suite (not its cases), ETag header
    DELETE /api/suites/<id>/                 If-Match -> 204 (409 once runs were made)

A suite is sent as the JSONL file it is kept in (the page and the command line read the
same file): its name, description and team go in the query string. Errors name the line
and field ("line 4.expected"). A team left out is the token's team. Changes take
?dry_run=true; the rules and the audit are configuration/suite_config.py's.
"""

from typing import Annotated

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from ninja import Path, Query, Router, Status

from judgements.api import evaluation_schemas, schemas
from judgements.api.changes import (
    DryRun,
    IfMatch,
    change_by,
    delete_answers,
    in_transaction,
    with_etag,
    write_refusals,
)
from judgements.api.site import token_of
from judgements.configuration import suite_config
from judgements.core import text
from judgements.core.errors import InvalidInput
from judgements.evaluations import answers as run_answers
from judgements.evaluations import suites
from judgements.infrastructure.database import db_call
from judgements.infrastructure.forms import invalid_utf8_fields
from judgements.models import ApiToken, Suite, is_id

router = Router(tags=["evaluations"])

SUITE_QUERY = ("name", "description", "team", "example", "dry_run")
SuiteId = Annotated[int, Path(description="A suite's id.")]
Name = Annotated[str, Query(min_length=1, description="The suite's name.")]
Description = Annotated[str, Query(description="What the suite tests.")]
TeamName = Annotated[
    str | None,
    Query(min_length=1, description="The team it belongs to (left out: the token's team)."),
]
Example = Annotated[
    bool, Query(description="Staff: a suite shipped-like, with no owner and no team.")
]
JSONL_BODY = {
    "required": True,
    "description": "The suite as JSONL: UTF-8 text, one JSON object a line, each as "
    '#/components/schemas/SuiteCaseLine describes ({"id", "content", "expected"} '
    'and optional "title", "expected_agents", "tags"), as GET /api/suites/{id}.jsonl sends '
    "it back. A line that breaks it answers 422 naming the line and field.",
    "content": {"application/jsonl": {"schema": {"type": "string", "minLength": 1}}},
}


def suite_listing(user: User) -> list[run_answers.Suite]:
    found = Suite.objects.visible_to(user).select_related("owner", "team").order_by("name", "id")
    return [run_answers.Suite.from_record(suite) for suite in found]


def upload_of(
    request: HttpRequest, name: str, description: str, team: str | None, example: bool
) -> suite_config.Upload:
    """The suite as sent, or InvalidInput for the query and an empty body."""
    errors = query_errors(request)
    if errors:
        raise InvalidInput(errors)
    if not request.body:  # the document asks for at least one character: a broken schema
        raise InvalidInput({"cases": [suites.NO_CASES]}, breaks_schema=True)
    return suite_config.Upload(name, description, team, request.body, example)


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


def created(token: ApiToken, upload: suite_config.Upload, dry_run: bool) -> run_answers.Suite:
    def make() -> run_answers.Suite:
        return run_answers.Suite.from_record(suite_config.create(change_by(token), upload))

    return in_transaction(dry_run, make)


def replaced(
    token: ApiToken, suite_id: int, upload: suite_config.Upload, if_match: str, dry_run: bool
) -> run_answers.Suite:
    def make() -> run_answers.Suite:
        changed = suite_config.replace(change_by(token, if_match), suite_id, upload)
        return run_answers.Suite.from_record(changed)

    return in_transaction(dry_run, make)


def deleted(token: ApiToken, suite_id: int, if_match: str, dry_run: bool) -> None:
    in_transaction(dry_run, lambda: suite_config.delete(change_by(token, if_match), suite_id))


def read(user: User, suite_id: int) -> run_answers.Suite:
    return run_answers.Suite.from_record(suite_config.visible_suite(suite_id, user))


def find_visible_suite(suite_id: int, user: User) -> Suite | None:
    return Suite.objects.visible_to(user).filter(pk=suite_id).first() if is_id(suite_id) else None


@router.get("/suites/", response={200: evaluation_schemas.SuiteList, 401: schemas.Error})
async def list_suites(request: HttpRequest) -> dict:
    """The suites the caller may run: their own, their teams' and the shipped ones."""
    return {"suites": await db_call(suite_listing, for_request=True)(token_of(request).user)}


@router.post(
    "/suites/",
    response={201: run_answers.Suite, **write_refusals(409)},
    openapi_extra={"requestBody": JSONL_BODY},
)
async def import_suite(
    request: HttpRequest,
    response: HttpResponse,
    name: Name,
    description: Description = "",
    team: TeamName = None,
    example: Example = False,
    dry_run: DryRun = False,
) -> Status[run_answers.Suite]:
    """Import a suite: the body is JSONL, one case a line. 422 names the line and field
    at fault ("line 4.expected")."""
    upload = upload_of(request, name, description, team, example)
    made = await db_call(created, for_request=True)(token_of(request), upload, dry_run)
    response["Location"] = made.export
    with_etag(response, made.etag)
    return Status(201, made)


EXPORTED = {
    200: {
        "description": "The suite as JSONL, one case a line.",
        "content": {"application/jsonl": {"schema": {"type": "string", "minLength": 1}}},
    }
}


@router.get(
    "/suites/{int:suite_id}.jsonl",
    url_name="api-suite-jsonl",
    response={200: None, (401, 404): schemas.Error},
    openapi_extra={"responses": EXPORTED},
)
async def export_suite(request: HttpRequest, suite_id: SuiteId) -> HttpResponse | Status[dict]:
    """A suite as JSONL, as POST /api/suites/ takes it back."""
    suite = await db_call(find_visible_suite, for_request=True)(suite_id, token_of(request).user)
    if suite is None:
        return Status(404, {"error": f"No suite {suite_id}."})
    return HttpResponse(
        await db_call(suites.export_jsonl, for_request=True)(suite),
        content_type=suites.JSONL_CONTENT_TYPE,
    )


@router.put(
    "/suites/{int:suite_id}.jsonl",
    url_name="api-suite-jsonl",
    response={200: run_answers.Suite, **write_refusals(409)},
    openapi_extra={"requestBody": JSONL_BODY},
)
async def replace_suite(
    request: HttpRequest,
    suite_id: SuiteId,
    response: HttpResponse,
    name: Name,
    if_match: IfMatch,
    description: Description = "",
    team: TeamName = None,
    example: Example = False,
    dry_run: DryRun = False,
) -> run_answers.Suite:
    """Make the suite exactly this JSONL, name, description and team. 409 when runs were
    made on it and the cases differ: their reports point at its cases."""
    upload = upload_of(request, name, description, team, example)
    changed = await db_call(replaced, for_request=True)(
        token_of(request), suite_id, upload, if_match, dry_run
    )
    with_etag(response, changed.etag)
    return changed


@router.get(
    "/suites/{int:suite_id}/",
    url_name="api-suite",
    response={200: run_answers.Suite, (401, 404): schemas.Error},
)
async def read_suite(
    request: HttpRequest, suite_id: SuiteId, response: HttpResponse
) -> run_answers.Suite:
    """The suite, its cases counted (GET its .jsonl for them), with its ETag."""
    found = await db_call(read, for_request=True)(token_of(request).user, suite_id)
    with_etag(response, found.etag)
    return found


@router.delete(
    "/suites/{int:suite_id}/",
    url_name="api-suite",
    response=delete_answers(409),
)
async def delete_suite(
    request: HttpRequest, suite_id: SuiteId, if_match: IfMatch, dry_run: DryRun = False
) -> Status[None]:
    """Delete the suite; 409 once evaluation runs were made on it."""
    await db_call(deleted, for_request=True)(token_of(request), suite_id, if_match, dry_run)
    return Status(204, None)
