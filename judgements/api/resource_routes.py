"""The HTTP routes of a kind of configuration, generated from its class
(api/resources.py): its list, its create, and its read, replace and delete of one, each
documented by what the class declares (its names, docstrings, answers and refusals), so
every kind answers, refuses, dry-runs and sends its ETag alike.

    GET    <collection>                     the kind's list
    POST   <collection>[?dry_run=true]      created -> 201, Location and ETag
    GET    <collection><id>/                one, ETag header
    PUT    <collection><id><replaced_at>    If-Match -> 200, ETag header
    DELETE <collection><id>/                If-Match -> 204

A view is one async function for every kind. What differs by kind (its id's name,
`panel_id`; its body's schema; a suite's query) is given to ninja as ninja's own
pagination gives its arguments (`contribute_operation_args`), and its name, summary and
documentation as `add_api_operation` takes them: nothing about the function is rewritten.
ninja calls the view with those arguments by name, each typed below (`Created`...): the
id as `pk` whatever the path calls it, and what a write sent as `write`.
"""

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypedDict, Unpack, cast, get_args

from django.http import HttpRequest, HttpResponse
from ninja import Router, Status
from ninja.params import models as params
from ninja.utils import contribute_operation_args
from pydantic import BaseModel

from judgements.api import schemas
from judgements.api.changes import Refusals, with_etag
from judgements.api.resources import DRY_RUN, IF_MATCH, Argument, Kind, Sent, etag_of
from judgements.api.site import token_of
from judgements.infrastructure.database import db_call

View = Callable[..., Awaitable[object]]


class Created(TypedDict):
    """What a POST's view is called with."""

    write: BaseModel  # the kind's `write_argument`
    dry_run: bool


class Identified(TypedDict):
    pk: int  # the path's `<kind>_id`


class Replaced(Identified):
    write: BaseModel
    if_match: str
    dry_run: bool


class Deleted(Identified):
    if_match: str
    dry_run: bool


def router_for(resource: Kind) -> Router:
    """Every route the kind declares, in the order its documentation lists them."""
    router = Router(tags=[resource.tag])
    if "list" in resource.routes:
        listed(router, resource)
    if "create" in resource.routes:
        created(router, resource)
    resource.more_routes(router)
    if "read" in resource.routes:
        read(router, resource)
    if "replace" in resource.routes:
        replaced(router, resource)
    if "delete" in resource.routes:
        deleted(router, resource)
    return router


def add(
    router: Router,
    resource: Kind,
    action: str,
    path: str,
    method: str,
    view: View,
    arguments: list[Argument],
    response: Mapping[int | tuple[int, ...], object],
    body_document: dict[str, object] | None = None,
) -> None:
    """`view` as the route of `action`: named and documented as the kind declares it,
    taking `arguments` after the request (and the response it sets headers on), each by
    the name its `**sent` is typed with."""
    if {argument.name for argument in arguments} != called_with(view):
        raise TypeError(f"{view.__name__} is typed for {sorted(called_with(view))}")
    for name, annotation, source in arguments:
        # ninja builds a pydantic field of any annotation (`str | None` too), whatever its
        # signature says.
        contribute_operation_args(view, name, cast(type, annotation), source)
    name = resource.operation_name(action)
    router.add_api_operation(
        path, [method], view, response=dict(response), url_name=resource.url_name(action),
        operation_id=name, summary=name.title().replace("_", " "),
        description=inspect.cleandoc(resource.routes[action].doc),
        openapi_extra=None if body_document is None else {"requestBody": body_document},
    )  # fmt: skip


def called_with(view: View) -> frozenset[str]:
    """The names a view's `**sent: Unpack[...]` is typed with; none if it has none."""
    for parameter in inspect.signature(view).parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            (typed,) = get_args(parameter.annotation)
            return frozenset(typed.__required_keys__)
    return frozenset()


def identified(resource: Kind) -> Argument:
    """The path's id, named for its kind (`panel_id`) where it is sent and documented, and
    `pk` where the view reads it."""
    described = f"A {resource.kind}'s id."
    return Argument("pk", int, params.Path(..., alias=resource.id_name, description=described))


def path_of_one(resource: Kind, suffix: str = "/") -> str:
    return f"{resource.path}{{int:{resource.id_name}}}{suffix}"


def listed(router: Router, resource: Kind) -> None:
    async def listing(
        request: HttpRequest, response: HttpResponse
    ) -> dict[str, Sequence[BaseModel]]:
        found = await db_call(resource.listing, for_request=True)(token_of(request))
        return {resource.plural: found}

    answers = {200: resource.list_answer, **resource.list_refusals()}
    add(router, resource, "list", resource.path, "GET", listing, [], answers)


def created(router: Router, resource: Kind) -> None:
    async def create(
        request: HttpRequest, response: HttpResponse, **sent: Unpack[Created]
    ) -> Status[BaseModel]:
        made, location = await db_call(resource.create_sent, for_request=True)(
            token_of(request), Sent(request, sent["write"]), sent["dry_run"]
        )
        if location is not None:
            response["Location"] = location
        if resource.versioned:
            with_etag(response, etag_of(made))
        return Status(201, made)

    arguments = [resource.write_argument(), DRY_RUN]
    answers = {201: resource.answer, **resource.write_refusals()}
    add(router, resource, "create", resource.path, "POST", create, arguments, answers,
        resource.body_document())  # fmt: skip


def read(router: Router, resource: Kind) -> None:
    async def one(
        request: HttpRequest, response: HttpResponse, **sent: Unpack[Identified]
    ) -> BaseModel:
        found = await db_call(resource.read, for_request=True)(token_of(request), sent["pk"])
        with_etag(response, etag_of(found))
        return found

    answers: Refusals = {200: resource.read_answer or resource.answer, (401, 404): schemas.Error}
    add(router, resource, "read", path_of_one(resource), "GET", one, [identified(resource)],
        answers)  # fmt: skip


def replaced(router: Router, resource: Kind) -> None:
    async def replace(
        request: HttpRequest, response: HttpResponse, **sent: Unpack[Replaced]
    ) -> BaseModel:
        changed = await db_call(resource.replace_sent, for_request=True)(
            token_of(request), sent["pk"], Sent(request, sent["write"]), sent["if_match"],
            sent["dry_run"],
        )  # fmt: skip
        with_etag(response, etag_of(changed))
        return changed

    arguments = [identified(resource), resource.write_argument(), IF_MATCH, DRY_RUN]
    answers = {200: resource.answer, **resource.write_refusals()}
    add(router, resource, "replace", path_of_one(resource, resource.replaced_at), "PUT", replace,
        arguments, answers, resource.body_document())  # fmt: skip


def deleted(router: Router, resource: Kind) -> None:
    async def delete(
        request: HttpRequest, response: HttpResponse, **sent: Unpack[Deleted]
    ) -> Status[None]:
        await db_call(resource.delete, for_request=True)(
            token_of(request), sent["pk"], sent["if_match"], sent["dry_run"]
        )
        return Status(204, None)

    arguments = [identified(resource), IF_MATCH, DRY_RUN]
    add(router, resource, "delete", path_of_one(resource), "DELETE", delete, arguments,
        resource.delete_answers())  # fmt: skip
