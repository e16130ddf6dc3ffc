"""The audit log's public proofs over HTTP, for witnesses, monitors and anyone checking a
receipt (docs/evidence.md): no sign-in, as a transparency log's are; they show hashes
only.

    GET /api/log/checkpoint                                  the latest signed checkpoint
    GET /api/log/proof/inclusion?leaf_hash=HEX[&tree_size=N] an entry's inclusion proof
    GET /api/log/proof/consistency?first=M&second=N          a size's tree a prefix of another's
"""

from typing import Annotated

from django.http import HttpRequest
from ninja import Query, Router
from ninja.responses import Status

from judgements.api import schemas
from judgements.audit import proofs
from judgements.infrastructure.database import db_call
from judgements.models import ChainEntry
from judgements.outcome.answers import Answer
from judgements.outcome.receipt_answers import ConsistencyProof, InclusionProof, LogCheckpoint

router = Router(tags=["audit log"])
ANSWERS: dict[int, type[Answer]] = {400: schemas.Invalid, 404: schemas.Error}
Size = Annotated[int, Query(ge=1, le=2**62, description="A tree size the log has reached.")]


def latest() -> LogCheckpoint | None:
    found = proofs.latest()
    if found is None:
        return None
    return LogCheckpoint(checkpoint=found.note, size=found.size, root_hash=found.root_hash)


@router.get(
    "/log/checkpoint",
    url_name="api-log-checkpoint",
    auth=None,
    response={200: LogCheckpoint, **ANSWERS},
)
async def checkpoint(request: HttpRequest) -> LogCheckpoint | Status[schemas.Error]:
    """The log's latest checkpoint: its size and root hash, signed (a C2SP signed note)."""
    found = await db_call(latest, for_request=True)()
    if found is None:
        return Status(404, schemas.Error(error="The log has no checkpoint yet."))
    return found


def inclusion_of(leaf_hash: str, tree_size: int | None) -> InclusionProof | str:
    entry = (
        ChainEntry.objects.filter(leaf_hash=leaf_hash, seq__isnull=False).order_by("seq").first()
    )
    size = proofs.log_size() if tree_size is None else tree_size
    if entry is None or entry.seq is None:
        return f"No entry with leaf hash {leaf_hash} is in the log yet."
    if size > proofs.log_size() or entry.seq >= size:
        return f"The entry is not in the log's tree of {size} entries."
    proof = proofs.inclusion(entry.seq, size)
    return InclusionProof(leaf_hash=leaf_hash, index=entry.seq, tree_size=size, proof=proof)


@router.get(
    "/log/proof/inclusion",
    url_name="api-log-inclusion",
    auth=None,
    response={200: InclusionProof, **ANSWERS},
)
async def inclusion(
    request: HttpRequest,
    leaf_hash: Annotated[
        str, Query(pattern="^[0-9a-f]{64}$", description="The entry's leaf hash, hex.")
    ],
    tree_size: Annotated[
        int | None, Query(ge=1, le=2**62, description="Default: the log's size.")
    ] = None,
) -> InclusionProof | Status[schemas.Error]:
    """An entry's inclusion proof (RFC 9162) in the log's tree of `tree_size` entries."""
    found = await db_call(inclusion_of, for_request=True)(leaf_hash, tree_size)
    if isinstance(found, str):
        return Status(404, schemas.Error(error=found))
    return found


def consistency_of(first: int, second: int) -> ConsistencyProof | str:
    if first > second or second > proofs.log_size():
        return f"The log has no trees of {first} and {second} entries, the first no larger."
    return ConsistencyProof(first=first, second=second, proof=proofs.consistency(first, second))


@router.get(
    "/log/proof/consistency",
    url_name="api-log-consistency",
    auth=None,
    response={200: ConsistencyProof, **ANSWERS},
)
async def consistency(
    request: HttpRequest, first: Size, second: Size
) -> ConsistencyProof | Status[schemas.Error]:
    """That the log's tree of `first` entries is a prefix of its tree of `second` (RFC 9162)."""
    found = await db_call(consistency_of, for_request=True)(first, second)
    if isinstance(found, str):
        return Status(404, schemas.Error(error=found))
    return found
