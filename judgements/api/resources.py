"""The kinds of configuration, registered once: each one a class saying its kind, where it
lives (/api/panels/), what a write takes (its schema, or a suite's JSONL), what it answers,
its audit subject, and its create, replace and delete, each made by the one change
function of its area (configuration/panel_config.py, budget_config.py, team_config.py,
suite_config.py, people.py) inside `Resource.create`'s transaction, rolled back by a dry
run; ETags and If-Match alike for every kind.

Generated from what is registered: the API's routes (api/resource_routes.py, mounted by
api/urls.py), the batch's table of operations (api/batch_endpoints.py) and where `magi
export` reads each kind's list (magi_client/kinds.py, written by api/config_format.py;
how a kind is written into files is the client's). The kinds are
api/kinds.py's; adding a kind of configuration is one class and its test, as a check is
one class (core/checks.py).
"""

import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from django.http import HttpRequest
from ninja import Router
from pydantic import BaseModel

from judgements.api import schemas
from judgements.api.changes import delete_answers, in_transaction, write_refusals
from judgements.models import ApiToken, AuditSubject


@dataclass(frozen=True)
class Route:
    """One route of a kind: what its documentation says (the view's docstring), and its
    operation's name when it is not `<action>_<kind>` (a suite is imported)."""

    doc: str
    name: str | None = None


class Resource:
    """A kind of configuration. `create` answers 201 with the object made, `replace` 200
    with the object as it now stands, `delete` 204; each raises what the request alone
    would be refused with (InvalidInput, NotFound, Forbidden, Conflict, etags.Stale)."""

    kind: ClassVar[str]  # "panel"
    collection: ClassVar[str]  # "/api/panels/": POST creates; <id>/ is one
    write: ClassVar[type[BaseModel] | None]  # the body's schema; None: a suite's JSONL
    answer: ClassVar[type[BaseModel]]  # what a create and a replace answer
    audit: ClassVar[AuditSubject]  # the subject of the audit entry each change writes
    routes: ClassVar[dict[str, Route]]  # "list", "create", "read", "replace", "delete"
    read_answer: ClassVar[type[BaseModel] | None] = None  # one read; None: `answer`
    list_answer: ClassVar[type[BaseModel] | None] = None  # {list_key: [...]}
    list_key: ClassVar[str] = ""  # "panels"
    url_names: ClassVar[tuple[str | None, str | None, str | None]] = (None, None, None)
    replaced_at: ClassVar[str] = "/"  # after the id in a PUT's path (a suite: ".jsonl")
    own_refusals: ClassVar[tuple[int, ...]] = ()  # beyond every write's (a suite: 409)
    tag: ClassVar[str] = "configuration"
    etags: ClassVar[bool] = True  # its answers carry an ETag (a user, a token: none)
    batched: ClassVar[bool] = True  # a batch takes its changes
    exported: ClassVar[bool] = False  # `magi export` reads its list (api/config_format.py)
    body_document: ClassVar[dict[str, Any] | None] = None  # a body ninja cannot describe
    error: ClassVar[type[BaseModel]] = schemas.Error

    # --- a change, made by the area's one change function ----------------------------

    def create(self, token: ApiToken, body: Any, dry_run: bool) -> BaseModel:
        return in_transaction(dry_run, lambda: self.answer_of(self.made(token, body)))

    def replace(
        self, token: ApiToken, pk: int, body: Any, if_match: str, dry_run: bool
    ) -> BaseModel:
        return in_transaction(
            dry_run, lambda: self.answer_of(self.changed(token, pk, body, if_match))
        )

    def delete(self, token: ApiToken, pk: int, if_match: str, dry_run: bool) -> None:
        in_transaction(dry_run, lambda: self.removed(token, pk, if_match))

    def made(self, token: ApiToken, body: Any) -> Any:
        raise NotImplementedError

    def changed(self, token: ApiToken, pk: int, body: Any, if_match: str) -> Any:
        raise NotImplementedError

    def removed(self, token: ApiToken, pk: int, if_match: str) -> None:
        raise NotImplementedError

    def answer_of(self, record: Any) -> BaseModel:
        """What a change answers of the record it made (`answer`, from the record)."""
        return self.answer.from_record(record)  # type: ignore[attr-defined]  # Answer's

    # --- reads ------------------------------------------------------------------------

    def listing(self, token: ApiToken) -> list[Any]:
        raise NotImplementedError

    def read(self, token: ApiToken, pk: int) -> Any:
        raise NotImplementedError

    # --- how its routes read and answer (api/resource_routes.py) ----------------------

    @property
    def path(self) -> str:
        """The collection under the API's root, as a router names it ("/panels/")."""
        return self.collection.removeprefix("/api")

    @property
    def id_name(self) -> str:
        return f"{self.kind}_id"

    def operation_name(self, action: str) -> str:
        named = self.routes[action].name
        if named is not None:
            return named
        return f"list_{self.list_key}" if action == "list" else f"{action}_{self.kind}"

    def body_specs(self) -> list[tuple[str, Any, Any]]:
        """A write's body parameter: its schema (a suite's has none: its JSONL is read)."""
        return [] if self.write is None else [("body", self.write, inspect.Parameter.empty)]

    def query_specs(self, required: bool) -> list[tuple[str, Any, Any]]:
        """A write's query parameters, the required or the optional ones (a suite's)."""
        return []

    def sent(self, request: HttpRequest, values: dict[str, Any]) -> Any:
        """What a write sent, as `create` and `replace` take it (as a batch's operation
        sends it too): its body, validated by `write`."""
        return values["body"]

    def location(self, made: Any) -> str | None:
        return f"{self.collection}{made.id}/"

    def write_refusals(self) -> dict[Any, Any]:
        return write_refusals(*self.own_refusals)

    def delete_answers(self) -> dict[Any, Any]:
        return delete_answers(*self.own_refusals)

    def list_refusals(self) -> dict[Any, Any]:
        return {401: schemas.Error}

    def more_routes(self, router: Router) -> None:
        """Routes of its own beside the generated ones (a suite's JSONL export)."""

    def paths(self) -> dict[str, re.Pattern[str]]:
        """The path of each method a batch takes, as a request alone would send it."""
        one = re.escape(self.collection) + r"(\d+)"
        found = {"POST": re.compile(re.escape(self.collection))}
        if "replace" in self.routes:
            found["PUT"] = re.compile(one + re.escape(self.replaced_at))
        if "delete" in self.routes:
            found["DELETE"] = re.compile(one + "/")
        return found


_REGISTRY: dict[str, Resource] = {}


def register(kind: type[Resource]) -> type[Resource]:
    """Register a kind once: its routes, the batch and the export take it from then on."""
    if kind.kind in _REGISTRY:
        raise ValueError(f"The kind {kind.kind!r} is registered already.")
    _REGISTRY[kind.kind] = kind()
    return kind


def unregister(kind: str) -> None:
    """Forget a kind (for a test that registered one of its own)."""
    del _REGISTRY[kind]


def registered() -> Iterator[Resource]:
    """Every kind, in the order they were registered."""
    return iter(list(_REGISTRY.values()))
