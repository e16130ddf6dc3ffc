"""The HTTP routes of a kind of configuration, generated from its class
(api/resources.py): its list, its create, and its read, replace and delete of one, each
documented by what the class declares (its names, docstrings, answers and refusals), so
every kind answers, refuses, dry-runs and sends its ETag alike.

    GET    <collection>                     the kind's list
    POST   <collection>[?dry_run=true]      created -> 201, Location and ETag
    GET    <collection><id>/                one, ETag header
    PUT    <collection><id><replaced_at>    If-Match -> 200, ETag header
    DELETE <collection><id>/                If-Match -> 204

A view is an ordinary async function whose signature (inspect's `__signature__`) names
the kind's own parameters (`panel_id`, a suite's query), which ninja reads as it reads a
hand-written one.
"""

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from django.http import HttpRequest, HttpResponse
from ninja import Path, Router, Status
from pydantic import BaseModel

from judgements.api.changes import DryRun, IfMatch, with_etag
from judgements.api.resources import Resource
from judgements.api.site import token_of
from judgements.infrastructure.database import db_call

View = Callable[..., Awaitable[Any]]
Spec = tuple[str, Any, Any]  # (name, annotation, default)
EMPTY = inspect.Parameter.empty


def router_for(resource: Resource) -> Router:
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


def view_of(resource: Resource, action: str, run: View, *specs: Spec) -> View:
    """`run(request, values)` as a view named and documented as the kind declares, its
    parameters `specs` after the request."""

    async def view(request: HttpRequest, **values: Any) -> Any:
        return await run(request, values)

    route = resource.routes[action]
    view.__name__ = view.__qualname__ = resource.operation_name(action)
    view.__doc__ = route.doc
    parameters = [inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    annotation=HttpRequest)]  # fmt: skip
    parameters += [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=default)
        for name, kind, default in specs
    ]
    view.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]  # ninja reads it
    return view


def identified(resource: Resource) -> Spec:
    """The path's id, named for its kind (`panel_id`)."""
    described = Annotated[int, Path(description=f"A {resource.kind}'s id.")]
    return (resource.id_name, described, EMPTY)


def etag_of(answer: BaseModel) -> str:
    """The ETag an answer carries (`etag`: every kind's whose `etags` is true)."""
    return str(answer.etag)  # type: ignore[attr-defined]  # the kind's answer has one


def path_of_one(resource: Resource, suffix: str = "/") -> str:
    return f"{resource.path}{{int:{resource.id_name}}}{suffix}"


def extra(resource: Resource) -> dict[str, Any]:
    return {} if resource.body_document is None else {"requestBody": resource.body_document}


def listed(router: Router, resource: Resource) -> None:
    async def run(request: HttpRequest, values: dict[str, Any]) -> dict:
        found = await db_call(resource.listing, for_request=True)(token_of(request))
        return {resource.list_key: found}

    router.add_api_operation(
        resource.path, ["GET"], view_of(resource, "list", run),
        response={200: resource.list_answer, **resource.list_refusals()},
        url_name=resource.url_names[0],
    )  # fmt: skip


def created(router: Router, resource: Resource) -> None:
    async def run(request: HttpRequest, values: dict[str, Any]) -> Status[Any]:
        sent = resource.sent(request, values)
        made = await db_call(resource.create, for_request=True)(
            token_of(request), sent, values["dry_run"]
        )
        location = resource.location(made)
        if location is not None:
            values["response"]["Location"] = location
        if resource.etags:
            with_etag(values["response"], etag_of(made))
        return Status(201, made)

    specs = [*resource.body_specs(), ("response", HttpResponse, EMPTY)]
    specs += [*resource.query_specs(required=True), *resource.query_specs(required=False)]
    specs.append(("dry_run", DryRun, False))
    router.add_api_operation(
        resource.path, ["POST"], view_of(resource, "create", run, *specs),
        response={201: resource.answer, **resource.write_refusals()},
        url_name=resource.url_names[0], openapi_extra=extra(resource) or None,
    )  # fmt: skip


def read(router: Router, resource: Resource) -> None:
    async def run(request: HttpRequest, values: dict[str, Any]) -> Any:
        found = await db_call(resource.read, for_request=True)(
            token_of(request), values[resource.id_name]
        )
        with_etag(values["response"], found.etag)
        return found

    specs = (identified(resource), ("response", HttpResponse, EMPTY))
    router.add_api_operation(
        path_of_one(resource), ["GET"], view_of(resource, "read", run, *specs),
        response={200: resource.read_answer or resource.answer, (401, 404): resource.error},
        url_name=resource.url_names[1],
    )  # fmt: skip


def replaced(router: Router, resource: Resource) -> None:
    async def run(request: HttpRequest, values: dict[str, Any]) -> Any:
        sent = resource.sent(request, values)
        changed = await db_call(resource.replace, for_request=True)(
            token_of(request), values[resource.id_name], sent, values["if_match"],
            values["dry_run"],
        )  # fmt: skip
        with_etag(values["response"], etag_of(changed))
        return changed

    specs = [identified(resource), *resource.body_specs(), ("response", HttpResponse, EMPTY)]
    specs += [*resource.query_specs(required=True), ("if_match", IfMatch, EMPTY)]
    specs += [*resource.query_specs(required=False), ("dry_run", DryRun, False)]
    router.add_api_operation(
        path_of_one(resource, resource.replaced_at), ["PUT"],
        view_of(resource, "replace", run, *specs),
        response={200: resource.answer, **resource.write_refusals()},
        url_name=resource.url_names[2] or resource.url_names[1],
        openapi_extra=extra(resource) or None,
    )  # fmt: skip


def deleted(router: Router, resource: Resource) -> None:
    async def run(request: HttpRequest, values: dict[str, Any]) -> Status[None]:
        await db_call(resource.delete, for_request=True)(
            token_of(request), values[resource.id_name], values["if_match"], values["dry_run"]
        )
        return Status(204, None)

    specs = (identified(resource), ("if_match", IfMatch, EMPTY), ("dry_run", DryRun, False))
    router.add_api_operation(
        path_of_one(resource), ["DELETE"], view_of(resource, "delete", run, *specs),
        response=resource.delete_answers(), url_name=resource.url_names[1],
    )  # fmt: skip
