"""The kinds of configuration, registered once: each one a class saying its kind, where
it lives (/api/panels/), what a write takes (its schema, or a suite's JSONL), and its
create, replace and delete, each through the one change function of its area
(configuration/panel_config.py, budget_config.py, team_config.py, suite_config.py, made in a
transaction rolled back by a dry run, audited, versioned for If-Match).

The batch's table of operations (api/batch_endpoints.py) is generated from what is
registered: adding a kind of configuration to the batch is one class here and its test,
as a check is one class (core/checks.py).
"""

import re
from collections.abc import Iterator
from typing import Any, ClassVar

from pydantic import BaseModel

from judgements.api import (
    budget_endpoints,
    config_schemas,
    panel_endpoints,
    suite_endpoints,
    team_endpoints,
)
from judgements.models import ApiToken


class Resource:
    """A kind of configuration. `create` answers 201 with the object made, `replace` 200
    with the object as it now stands, `delete` 204; each raises what the request alone
    would be refused with (InvalidInput, NotFound, Forbidden, Conflict, etags.Stale)."""

    kind: ClassVar[str]  # "panel"
    collection: ClassVar[str]  # "/api/panels/": POST creates; <id>/ is one
    write: ClassVar[type[BaseModel] | None]  # the body's schema; None: a suite's JSONL
    replaced_at: ClassVar[str] = "/"  # after the id in a PUT's path (a suite: ".jsonl")

    def create(self, token: ApiToken, body: Any, dry_run: bool) -> BaseModel:
        raise NotImplementedError

    def replace(
        self, token: ApiToken, pk: int, body: Any, if_match: str, dry_run: bool
    ) -> BaseModel:
        raise NotImplementedError

    def delete(self, token: ApiToken, pk: int, if_match: str, dry_run: bool) -> None:
        raise NotImplementedError

    def paths(self) -> dict[str, re.Pattern[str]]:
        """The path of each method, as a request alone would send it."""
        one = re.escape(self.collection) + r"(\d+)"
        return {
            "POST": re.compile(re.escape(self.collection)),
            "PUT": re.compile(one + re.escape(self.replaced_at)),
            "DELETE": re.compile(one + "/"),
        }


_REGISTRY: dict[str, Resource] = {}


def register(kind: type[Resource]) -> type[Resource]:
    """Register a kind once: the batch takes its operations from then on."""
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


@register
class Panels(Resource):
    kind, collection, write = "panel", "/api/panels/", config_schemas.PanelWrite

    def create(self, token: ApiToken, body: Any, dry_run: bool) -> BaseModel:
        return panel_endpoints.create(token, body.fields(), dry_run)

    def replace(
        self, token: ApiToken, pk: int, body: Any, if_match: str, dry_run: bool
    ) -> BaseModel:
        return panel_endpoints.replace(token, pk, body.fields(), if_match, dry_run)

    def delete(self, token: ApiToken, pk: int, if_match: str, dry_run: bool) -> None:
        panel_endpoints.delete(token, pk, if_match, dry_run)


@register
class Budgets(Resource):
    kind, collection, write = "budget", "/api/budgets/", config_schemas.BudgetWrite

    def create(self, token: ApiToken, body: Any, dry_run: bool) -> BaseModel:
        return budget_endpoints.create(token.user, body.fields(), dry_run)

    def replace(
        self, token: ApiToken, pk: int, body: Any, if_match: str, dry_run: bool
    ) -> BaseModel:
        return budget_endpoints.replace(token.user, pk, body.fields(), if_match, dry_run)

    def delete(self, token: ApiToken, pk: int, if_match: str, dry_run: bool) -> None:
        budget_endpoints.delete(token.user, pk, if_match, dry_run)


@register
class Teams(Resource):
    kind, collection, write = "team", "/api/teams/", config_schemas.TeamWrite

    def create(self, token: ApiToken, body: Any, dry_run: bool) -> BaseModel:
        return team_endpoints.create(token.user, body.fields(), dry_run)

    def replace(
        self, token: ApiToken, pk: int, body: Any, if_match: str, dry_run: bool
    ) -> BaseModel:
        return team_endpoints.replace(token.user, pk, body.fields(), if_match, dry_run)

    def delete(self, token: ApiToken, pk: int, if_match: str, dry_run: bool) -> None:
        team_endpoints.delete(token.user, pk, if_match, dry_run)


@register
class Suites(Resource):
    """A suite is sent as its JSONL, its name, description and team in the query
    (suite_config.Upload)."""

    kind, collection, write = "suite", "/api/suites/", None
    replaced_at = ".jsonl"

    def create(self, token: ApiToken, body: Any, dry_run: bool) -> BaseModel:
        return suite_endpoints.created(token, body, dry_run)

    def replace(
        self, token: ApiToken, pk: int, body: Any, if_match: str, dry_run: bool
    ) -> BaseModel:
        return suite_endpoints.replaced(token, pk, body, if_match, dry_run)

    def delete(self, token: ApiToken, pk: int, if_match: str, dry_run: bool) -> None:
        suite_endpoints.deleted(token, pk, if_match, dry_run)
