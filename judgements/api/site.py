"""The HTTP API under /api/, on django-ninja: the bearer token, the body parser and the
JSON error answers, written once for every endpoint (judgement_endpoints.py,
evaluation_endpoints.py).

Every answer is JSON, an unexpected failure too. A caller without a working token gets
401 with WWW-Authenticate. Invalid input answers {"error": "invalid input", "errors":
{path: [messages]}}, the paths as the command line names them (`agents[1].model`): 400
when the request breaks the documented schema, 422 when it breaks a rule the schema
cannot express (intake/schemas.py). A body over the upload limit answers 413.
"""

import functools
import logging
from collections.abc import Sequence
from typing import Any, cast

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI, Swagger
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.openapi.schema import OpenAPISchema
from ninja.operation import Operation
from ninja.parser import Parser
from ninja.security import HttpBearer
from pydantic import BaseModel
from pydantic_core import ErrorDetails

from judgements.api import document
from judgements.core import etags
from judgements.core.errors import Conflict, Forbidden, InvalidInput, NotFound, Refused
from judgements.core.json_values import JsonValue
from judgements.infrastructure.database import db_call
from judgements.intake import cases, idempotency, schema_errors, schemas
from judgements.intake.creation_gate import creation_gate
from judgements.models import ApiToken
from judgements.spending import budgets

logger = logging.getLogger(__name__)

DESCRIPTION = (
    "Three LLM agents judge a case over three rounds; a weighted vote decides. Fail-closed: "
    'proceed only on "status": "approved"; anything else, and any error answer, means do '
    "not proceed. Authenticate with an API token (`manage.py api_token USER`, or the site's "
    "API tokens page): `Authorization: Bearer <token>`."
)


class BearerToken(HttpBearer):
    """The caller's API token. A POST that creates waits for a creation slot first
    (intake/creation_gate.py): in a burst, creations queue there and reads keep the thread pool."""

    async def __call__(self, request: HttpRequest) -> ApiToken | None:
        scheme, _, key = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            return None
        async with creation_gate(request):
            return await db_call(ApiToken.active, for_request=True)(key.strip())

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        raise NotImplementedError  # __call__ does it, on the event loop


class JsonBody(Parser):
    """A body as the command line reads a case file (intake/cases.py parse_case_json):
    UTF-8 JSON, with a message saying what is wrong. Kept on the request for what hashes
    the body as sent (idempotency keys)."""

    def parse_body(self, request: HttpRequest) -> Any:
        body = cases.parse_case_json(request.body, "The body")
        request.magi_body = body  # type: ignore[attr-defined]  # ours, for body_of below
        return body


class MagiAPI(NinjaAPI):
    def get_content_type(self) -> str:
        # JSON has no charset parameter (RFC 8259, section 11): UTF-8 always.
        return "application/json"

    def get_openapi_operation_id(self, operation: Operation) -> str:
        # The view's own name: what a generated client calls the method (submit_judgement).
        return operation.view_func.__name__

    def get_openapi_schema(self, **kwargs: Any) -> OpenAPISchema:
        return document.completed(super().get_openapi_schema(**kwargs))


api = MagiAPI(
    title="MAGI",
    version="1",
    description=DESCRIPTION,
    auth=BearerToken(),
    parser=JsonBody(),
    urls_namespace="api",
    openapi_url="/schema.json",
    docs_url="/docs",
    docs=Swagger(settings={"persistAuthorization": True}),
)


def token_of(request: HttpRequest) -> ApiToken:
    """The caller's token, as BearerToken found it (ninja keeps it on the request)."""
    token = getattr(request, "auth", None)  # set by ninja, unknown to HttpRequest
    if not isinstance(token, ApiToken):
        raise TypeError("token_of: a request ninja authenticated with BearerToken")
    return token


def body_of(request: HttpRequest) -> JsonValue:
    """The body as JsonBody parsed it, before any validation."""
    body: JsonValue = request.magi_body  # type: ignore[attr-defined]  # set by JsonBody.parse_body
    return body


def error(request: HttpRequest, status: int, message: str, **extra: object) -> HttpResponse:
    return api.create_response(request, {"error": message, **extra}, status=status)


def invalid(request: HttpRequest, exc: InvalidInput) -> HttpResponse:
    status = 400 if exc.breaks_schema else 422
    return error(request, status, "invalid input", errors=exc.errors)


def body_model(request: HttpRequest) -> type[BaseModel] | None:
    """The body model of the operation the request reached (an unknown field's message
    lists the fields the body takes), None for one without a body."""
    match = request.resolver_match
    if match is None or request.method is None:
        return None
    return body_models().get((match.url_name or "", request.method))


@functools.cache
def body_models() -> dict[tuple[str, str], type[BaseModel]]:
    """Each operation's body model by (URL name, method), read from the annotation of its
    view's body parameter, the one place it is declared. Every URL name of a path counts:
    Django resolves a path to its first operation's name, whatever the method."""
    found: dict[tuple[str, str], type[BaseModel]] = {}
    for _prefix, router in api._routers:
        for path_view in router.path_operations.values():
            names = {url_name_of(operation) for operation in path_view.operations}
            for operation in path_view.operations:
                for param in operation.signature.params:
                    if param.source._param_source() == "body":
                        found |= {
                            (name, method): param.annotation
                            for name in names
                            for method in operation.methods
                        }
    return found


def url_name_of(operation: Operation) -> str:
    """As ninja names an operation's URL: its url_name, else its view's name."""
    named: str | None = getattr(operation, "url_name", None)  # set when one was given
    return named or operation.view_func.__name__


@api.exception_handler(ValidationError)
def schema_broken(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    # ninja passes pydantic's errors on, each as pydantic describes it (ErrorDetails).
    return invalid(
        request, request_errors(cast(list[ErrorDetails], exc.errors), body_model(request))
    )


def request_errors(errors: Sequence[ErrorDetails], model: type[BaseModel] | None) -> InvalidInput:
    """ninja's errors (pydantic's, their location prefixed), located as ("body",
    <parameter>, field...) or ("query", name), as InvalidInput under the paths every entry
    point uses."""
    body = [e for e in errors if e["loc"][:1] == ("body",)]
    others = [
        schema_errors.moved(e, tuple(e["loc"])[1:]) for e in errors if e["loc"][:1] != ("body",)
    ]
    if any(len(e["loc"]) == 2 and e["type"] == "missing" for e in body):
        # ninja reads an empty body as no body at all.
        return InvalidInput({schema_errors.whole(model)[0]: [EMPTY_BODY]}, breaks_schema=True)
    found = schemas.invalid_input(body, model, skip=2)
    for error_ in others:
        path = schema_errors.path_of(error_["loc"])
        found.errors.setdefault(path, []).append(parameter_message(error_))
    found.breaks_schema = found.breaks_schema or bool(others)
    return found


EMPTY_BODY = "The body is empty: send a JSON object."


def parameter_message(error_: ErrorDetails) -> str:
    """A query, path or header parameter's error, as the rest of the API words them."""
    kind, ctx = error_["type"], error_.get("ctx") or {}
    if kind in ("float_parsing", "int_parsing", "finite_number", "float_type", "int_type"):
        return (
            "Must be a number." if kind.startswith(("float", "finite")) else "Must be an integer."
        )
    if kind == "greater_than_equal":
        return f"Must be at least {ctx['ge']}."
    if kind == "less_than_equal":
        return f"Must be at most {ctx['le']}."
    if kind == "missing":
        return etags.REQUIRED if error_["loc"][-1:] == (etags.HEADER,) else schema_errors.REQUIRED
    if kind == "string_too_short":
        return "Must not be empty."
    if kind == "string_too_long":
        return f"At most {ctx['max_length']} characters."
    return str(error_["msg"])


WAIT_MAX_SECONDS = 300


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # The parser's error (ninja wraps it): the body is not UTF-8 JSON.
    if isinstance(exc.__cause__, InvalidInput):
        key = schema_errors.whole(body_model(request))[0]
        errors = {key: [m for ms in exc.__cause__.errors.values() for m in ms]}
        return invalid(request, InvalidInput(errors, breaks_schema=True))
    if isinstance(exc.__cause__, RequestDataTooBig):
        return body_too_large(request, exc.__cause__)
    return error(request, exc.status_code, str(exc))


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = error(request, 401, "Send an API token: Authorization: Bearer <token>.")
    response["WWW-Authenticate"] = 'Bearer realm="magi"'
    return response


@api.exception_handler(InvalidInput)
def refused(request: HttpRequest, exc: InvalidInput) -> HttpResponse:
    return invalid(request, exc)


@api.exception_handler(NotFound)
def not_there(request: HttpRequest, exc: NotFound) -> HttpResponse:
    """Another team's as much as what does not exist (docs/teams.md)."""
    return error(request, 404, exc.message)


@api.exception_handler(Forbidden)
def forbidden(request: HttpRequest, exc: Forbidden) -> HttpResponse:
    return error(request, 403, exc.message)


@api.exception_handler(Conflict)
def conflict(request: HttpRequest, exc: Conflict) -> HttpResponse:
    return error(request, 409, exc.message)


@api.exception_handler(etags.Stale)
def stale(request: HttpRequest, exc: etags.Stale) -> HttpResponse:
    """412: the If-Match is not the object's ETag any more; nothing was changed."""
    response = error(request, 412, exc.message, etag=exc.current)
    if exc.current is not None:
        response["ETag"] = exc.current
    return response


@api.exception_handler(budgets.BudgetExceeded)
def over_budget(request: HttpRequest, exc: budgets.BudgetExceeded) -> HttpResponse:
    """402: the budget is spent until it resets (a Refused, answered apart)."""
    response = error(
        request,
        402,
        exc.message,
        budget=exc.budget.pk,
        resets_at=exc.resets_at.isoformat(),
        retry_after=exc.retry_after,
    )
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(Refused)
def over_a_limit(request: HttpRequest, exc: Refused) -> HttpResponse:
    response = error(request, 429, exc.message, retry_after=exc.retry_after)
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(idempotency.KeyReused)
def key_reused(request: HttpRequest, exc: idempotency.KeyReused) -> HttpResponse:
    return error(request, 422, exc.message, errors={idempotency.HEADER: [exc.message]})


@api.exception_handler(RequestDataTooBig)
def body_too_large(request: HttpRequest, exc: Exception) -> HttpResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error(request, 413, f"The body is larger than the limit of {limit:,} bytes.")


@api.exception_handler(SuspiciousOperation)
def suspicious(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    # What Django refuses to parse (over DATA_UPLOAD_MAX_NUMBER_FIELDS query fields, say)
    # is the client's error: a 400, as Django answers it outside the API.
    logger.warning("API request %s %s refused: %s", request.method, request.path, exc)
    return error(request, 400, f"Bad request: {exc}")


@api.exception_handler(Exception)
def failed(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.error("API request %s %s failed", request.method, request.path, exc_info=exc)
    return error(request, 500, "Internal error; it has been logged.")


@csrf_exempt
async def not_found(request: HttpRequest) -> JsonResponse:
    """Any other address under /api/, whatever the method: JSON, never the site's HTML
    404 (nor its CSRF refusal of a POST)."""
    return JsonResponse({"error": f"No API at {request.path}; see /api/docs."}, status=404)
