"""The kinds of configuration, registered once: each one a class saying its kind and its
plural (where it lives, /api/panels/), what a write takes, what its area's change function
makes and what a change answers (the three types of its `Resource[Write, Record, Answer]`),
and its create, replace and delete, each made by
the one change function of its area (configuration/panel_config.py, budget_config.py,
team_config.py, suite_config.py, people.py) inside `Resource.create`'s transaction,
rolled back by a dry run; ETags and If-Match alike for every kind.

Generated from what is registered: the API's routes (api/resource_routes.py, mounted by
api/urls.py), the batch's table of operations (api/batch_endpoints.py) and where `magi
export` reads each kind's list (magi_client/kinds.py, written by api/config_format.py;
how a kind is written into files is the client's). The kinds are
api/kinds.py's; adding a kind of configuration is one class and its test, as a check is
one class (core/checks.py).

The registry hands out each kind as a `Kind`, the base every Resource has: its names, its
routes' documentation, its reads, and its changes taken from what a route or a batch sent
(`create_sent`, `create_batched`...). A kind's own types stay inside its class, where
what a route parsed (its `write_argument`, a pydantic model) is made into its Write and
its Record into its Answer; what leaves is a BaseModel. Python has no "some Resource", and
this is how it goes without one.
"""

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import (
    ClassVar,
    Generic,
    NamedTuple,
    Protocol,
    TypeVar,
    get_args,
    get_origin,
    runtime_checkable,
)

from django.http import HttpRequest
from ninja import Router
from ninja.params import models as params
from pydantic import BaseModel

from judgements.api import schemas
from judgements.api.changes import (
    DRY_RUN_QUERY,
    IF_MATCH_HEADER,
    Refusals,
    delete_answers,
    in_transaction,
    write_refusals,
)
from judgements.api.config_schemas import BatchOperation
from judgements.intake.schemas import validated
from judgements.models import ApiToken, AuditSubject

Write = TypeVar("Write")  # what a create and a replace take
Record = TypeVar("Record")  # what the area's change function makes of it (a row)
Answer = TypeVar("Answer", bound=BaseModel)  # what they answer
T = TypeVar("T")


class Argument(NamedTuple):
    """A route's argument as ninja reads it: its name, type and where it is sent."""

    name: str
    annotation: object
    source: params.Param


IF_MATCH = Argument("if_match", str, IF_MATCH_HEADER)
DRY_RUN = Argument("dry_run", bool, DRY_RUN_QUERY)


@dataclass(frozen=True)
class Route:
    """One route of a kind: what its documentation says (the view's docstring), and its
    operation's name when it is not `<action>_<kind>` (a suite is imported)."""

    doc: str
    name: str | None = None


class Kind:
    """A kind of configuration as the registry hands it out, whatever its types: its names
    and routes, its reads, and its changes from what was sent. `create_sent` answers 201
    with the object made, `replace_sent` 200 with the object as it now stands, `delete`
    204; each raises what the request alone would be refused with (InvalidInput,
    NotFound, Forbidden, Conflict, etags.Stale). Every kind is a Resource (below)."""

    kind: ClassVar[str]  # "panel"
    plural: ClassVar[str]  # "panels": /api/panels/, its list's key, its URLs' names
    routes: ClassVar[dict[str, Route]]  # "list", "create", "read", "replace", "delete"
    list_answer: ClassVar[type[BaseModel] | None] = None  # {plural: [...]}
    read_answer: ClassVar[type[BaseModel] | None] = None  # one read; None: the Answer
    tag: ClassVar[str] = "configuration"
    # Its answers carry an ETag, its changes send If-Match, a batch takes them and `magi
    # export` reads its list (api/config_format.py); a user's and a token's do not.
    versioned: ClassVar[bool] = True
    # After the id in a PUT's path (a suite's: ".jsonl").
    replaced_at: ClassVar[str] = "/"

    answer: type[BaseModel]  # what a create and a replace answer (the Resource's Answer)

    @property
    def collection(self) -> str:
        """Where it lives: "/api/panels/"; POST creates, <id>/ is one."""
        return f"/api/{self.plural}/"

    @property
    def audit(self) -> AuditSubject:
        """The subject of the audit entry each change writes: its kind's."""
        return AuditSubject(self.kind)

    # --- a change, from what a route or a batch sent -------------------------------

    def create_sent(
        self, token: ApiToken, sent: "Sent", dry_run: bool
    ) -> tuple[BaseModel, str | None]:
        """The object a POST made, and where it is read."""
        raise NotImplementedError

    def replace_sent(
        self, token: ApiToken, pk: int, sent: "Sent", if_match: str, dry_run: bool
    ) -> BaseModel:
        raise NotImplementedError

    def create_batched(self, token: ApiToken, operation: BatchOperation, prefix: str) -> BaseModel:
        """A batch's POST, its body (and query) read as the request alone would be; never
        a dry run (the batch's transaction is the one rolled back). Refusals of the body
        are named under `prefix`."""
        raise NotImplementedError

    def replace_batched(
        self, token: ApiToken, pk: int, operation: BatchOperation, prefix: str, if_match: str
    ) -> BaseModel:
        raise NotImplementedError

    def delete(self, token: ApiToken, pk: int, if_match: str, dry_run: bool) -> None:
        in_transaction(dry_run, lambda: self.removed(token, pk, if_match))

    def removed(self, token: ApiToken, pk: int, if_match: str) -> None:
        raise NotImplementedError

    # --- reads ------------------------------------------------------------------------

    def listing(self, token: ApiToken) -> Sequence[BaseModel]:
        raise NotImplementedError

    def read(self, token: ApiToken, pk: int) -> BaseModel:
        raise NotImplementedError

    # --- how its routes read and answer (api/resource_routes.py) ----------------------

    @property
    def path(self) -> str:
        """The collection under the API's root, as a router names it ("/panels/")."""
        return self.collection.removeprefix("/api")

    @property
    def id_name(self) -> str:
        """Its id's name in a path and the API's document (`panel_id`); a view reads it
        as `pk` (api/resource_routes.py `identified`)."""
        return f"{self.kind}_id"

    def operation_name(self, action: str) -> str:
        named = self.routes[action].name
        if named is not None:
            return named
        return f"list_{self.plural}" if action == "list" else f"{action}_{self.kind}"

    def url_name(self, action: str) -> str:
        """The name of the action's URL: api-panels for the list and a create, api-panel
        for one, api-suite-jsonl where a PUT has a path of its own."""
        if action in ("list", "create"):
            return f"api-{self.plural}"
        if action == "replace" and self.replaced_at != "/":
            return f"api-{self.kind}-{self.replaced_at.strip('./')}"
        return f"api-{self.kind}"

    def write_argument(self) -> Argument:
        """What a write sends, as ninja parses it into one pydantic model, named `write`:
        the Resource's `Write` as the body; a suite's name and more, from the query."""
        raise NotImplementedError

    def body_document(self) -> dict[str, object] | None:
        """What /api/schema.json says of a body ninja does not parse (a suite's JSONL)."""
        return None

    def write_refusals(self) -> Refusals:
        return write_refusals()

    def delete_answers(self) -> Refusals:
        return delete_answers()

    def list_refusals(self) -> Refusals:
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


class Resource(Kind, Generic[Write, Record, Answer]):
    """A kind of configuration with its own types: a write's body parsed into `Write` (a
    pydantic model; a suite's is its JSONL), made by its area's change function into a
    `Record`, answered as an `Answer`."""

    answer: type[Answer]

    def __init__(self) -> None:
        # The class's own Resource[Write, Record, Answer], read back: what the routes parse
        # a write's body with (a pydantic model; a suite's is its JSONL) and answer with.
        bases = getattr(type(self), "__orig_bases__", ())
        (declared,) = [base for base in bases if get_origin(base) is Resource]
        self.write: type[Write]
        self.write, _, self.answer = get_args(declared)

    # --- a change, made by the area's one change function ----------------------------

    def create(self, token: ApiToken, body: Write, dry_run: bool) -> Answer:
        return in_transaction(dry_run, lambda: self.answer_of(self.made(token, body)))

    def replace(
        self, token: ApiToken, pk: int, body: Write, if_match: str, dry_run: bool
    ) -> Answer:
        return in_transaction(
            dry_run, lambda: self.answer_of(self.changed(token, pk, body, if_match))
        )

    def made(self, token: ApiToken, body: Write) -> Record:
        raise NotImplementedError

    def changed(self, token: ApiToken, pk: int, body: Write, if_match: str) -> Record:
        raise NotImplementedError

    def answer_of(self, record: Record) -> Answer:
        """What a change answers of the record it made."""
        raise NotImplementedError

    # --- the same, from what was sent (Kind's way in) ---------------------------------

    def create_sent(
        self, token: ApiToken, sent: "Sent", dry_run: bool
    ) -> tuple[Answer, str | None]:
        made = self.create(token, self.write_of(sent), dry_run)
        return made, self.location(made)

    def replace_sent(
        self, token: ApiToken, pk: int, sent: "Sent", if_match: str, dry_run: bool
    ) -> Answer:
        return self.replace(token, pk, self.write_of(sent), if_match, dry_run)

    def create_batched(self, token: ApiToken, operation: BatchOperation, prefix: str) -> Answer:
        return self.create(token, self.from_batch(operation, prefix), False)

    def replace_batched(
        self, token: ApiToken, pk: int, operation: BatchOperation, prefix: str, if_match: str
    ) -> Answer:
        return self.replace(token, pk, self.from_batch(operation, prefix), if_match, False)

    # --- how a write is read ----------------------------------------------------------

    def write_argument(self) -> Argument:
        """A write's body, parsed by ninja with its schema (a suite's JSONL is read)."""
        return Argument("write", self.write, params.Body(...))

    def write_of(self, sent: "Sent") -> Write:
        """What a write sent, as `create` and `replace` take it (as a batch's operation
        sends it too): its body, validated by ninja with `write`."""
        return sent.written(self.write)

    def from_batch(self, operation: BatchOperation, prefix: str) -> Write:
        """What a batch's operation sent, as `create` and `replace` take it: its body
        validated by `write` as a request's would be (a suite's: its JSONL and query)."""
        if not issubclass(self.write, BaseModel):
            raise TypeError(f"{self.kind}: say how a batch sends its {self.write.__name__}")
        return validated(self.write, operation.body)

    def location(self, made: Answer) -> str | None:
        """Where the object made is read (its answer's id under the collection)."""
        if not isinstance(made, Identified):
            raise TypeError(f"{type(made).__name__} has no id: say where it is read")
        return f"{self.collection}{made.id}/"


class Sent(NamedTuple):
    """What a write's route was sent: the request, and its `write_argument` as ninja
    parsed it (the kind's body, or a suite's query). Its type is the kind's, which the one
    view of every kind cannot name: the kind's `write_of` reads it through `written`."""

    request: HttpRequest
    write: BaseModel

    def written(self, kind: type[T]) -> T:
        """What was sent, checked to be the `kind` its route declared."""
        if not isinstance(self.write, kind):
            raise TypeError(f"A write is {kind.__name__} here, not {self.write!r}")
        return self.write


@runtime_checkable
class Identified(Protocol):
    id: int


@runtime_checkable
class Tagged(Protocol):
    etag: str


def etag_of(answer: BaseModel) -> str:
    """The ETag an answer carries (its `etag`: every versioned kind's has one)."""
    if not isinstance(answer, Tagged):
        raise TypeError(f"{type(answer).__name__} carries no etag")
    return answer.etag


_REGISTRY: dict[str, Kind] = {}


def register(kind: type[Resource[Write, Record, Answer]]) -> type[Resource[Write, Record, Answer]]:
    """Register a kind once: its routes, the batch and the export take it from then on."""
    if kind.kind in _REGISTRY:
        raise ValueError(f"The kind {kind.kind!r} is registered already.")
    _REGISTRY[kind.kind] = kind()
    return kind


def unregister(kind: str) -> None:
    """Forget a kind (for a test that registered one of its own)."""
    del _REGISTRY[kind]


def registered() -> Iterator[Kind]:
    """Every kind, in the order they were registered."""
    return iter(list(_REGISTRY.values()))
