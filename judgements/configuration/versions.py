"""The compare-and-swap behind the API's If-Match (judgements/core/etags.py): of two
changes that read the same version of a panel, suite, budget or team, the second finds
nothing to update and is refused."""

from typing import TypeVar

from django.db import models

from judgements.core.etags import Stale

M = TypeVar("M", bound=models.Model)


def bump(
    queryset: "models.QuerySet[M] | models.Manager[M]",
    pk: int,
    version: int | None,
    kind: str,
    **fields: object,
) -> int:
    """Write `fields` and one more version to the row `pk`, provided it is still at
    `version` (None: whatever it is, as the pages change it). Returns the new version;
    Stale when another change came first."""
    rows = queryset.filter(pk=pk)
    if version is not None:
        rows = rows.filter(version=version)
    if not rows.update(**fields, version=models.F("version") + 1):
        raise Stale(kind, None)
    bumped: int = queryset.filter(pk=pk).values_list("version", flat=True).get()
    return bumped
