"""The signed receipt as the answers carry it and the API's schema documents it: the
shape of judgements/audit/receipts.py's body, field by field, with its inclusion proof
(docs/evidence.md); and the log's checkpoint and proofs as its GET endpoints answer them.
Every field is required and none is converted, so the answer is the signed body as
stored and its signature still checks."""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from judgements.audit import receipts
from judgements.models import Judgement

Sha256 = Annotated[str, Field(pattern="^[0-9a-f]{64}$", description="SHA-256, lowercase hex")]
Position = Annotated[int, Field(ge=1, le=3, description="The agent's place in the panel, 1-3")]
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]


class Part(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ReceiptAgent(Part):
    position: Position
    name: str
    model: str
    criteria_sha256: Sha256


class ReceiptDecision(Part):
    agent: Position
    decision: Literal["approve", "reject"]
    reason_sha256: Sha256


class ReceiptRound(Part):
    round: int
    decisions: list[ReceiptDecision]


class ReceiptScore(Part):
    agent: Position
    score_tenths: int | None = Field(description="The agent's final score in tenths, 0-10.")
    decision: Literal["approve", "reject"] | None


class ReceiptReview(Part):
    kind: Literal["override", "confirmation"]
    by: str = Field(description="The reviewer's username.")
    at: Timestamp
    decision: Literal["approve", "reject"]
    reason_sha256: Sha256


class ReceiptMark(Part):
    contested: bool | None
    trust: str | None
    contest_reasons: list[str]


class ReceiptCertificate(Part):
    id: int
    fingerprint: str
    certified: bool
    created_at: Timestamp


class ReceiptEntry(Part):
    kind: Literal["verdict", "override", "confirmation"]
    leaf_hash: Sha256 = Field(description="The log entry's leaf hash (RFC 9162), lowercase hex.")


class ReceiptRecord(Part):
    entries: int = Field(description="How many log entries about the judgement came before.")
    sha256: Sha256 = Field(description="SHA-256 of their leaf hashes, sorted, as bytes.")


class ReceiptBody(Part):
    """What is signed: canonical JSON (RFC 8785) of this object."""

    format: Literal["magi-receipt/2"]
    judgement: int
    event: Literal["verdict", "override", "confirmation"] = Field(
        description="What put this verdict in force."
    )
    title_sha256: Sha256
    content_sha256: Sha256 = Field(description="SHA-256 of the content as UTF-8.")
    agents: list[ReceiptAgent]
    rounds: list[ReceiptRound]
    scores: list[ReceiptScore]
    panel_verdict: str
    verdict: str = Field(description="The verdict in force when the receipt was signed.")
    review: ReceiptReview | None
    mark: ReceiptMark
    certificate: ReceiptCertificate | None = Field(
        description="The certificate the mark was read against."
    )
    at: Timestamp = Field(description="When its log entry was written.")
    entry: ReceiptEntry
    record: ReceiptRecord


class ReceiptSignature(Part):
    alg: Literal["EdDSA"]
    kid: str = Field(description="The key's id in /.well-known/magi-keys.json.")
    value: str = Field(description="Ed25519 over canonical(receipt), base64url.")


class Inclusion(Part):
    """A log entry proven in a checkpoint (RFC 9162 inclusion proof)."""

    checkpoint: str = Field(description="The signed checkpoint (a C2SP signed note).")
    index: int = Field(ge=0, description="The entry's leaf index.")
    proof: list[Sha256]


class CurrentStatement(Part):
    """What the log held about the judgement at the inclusion's checkpoint."""

    format: Literal["magi-current/1"]
    judgement: int
    size: int = Field(ge=1, description="The checkpoint's size: the statement is of it.")
    in_force: Sha256 = Field(
        description="The leaf hash of its latest entry placed below `size` that put a "
        "verdict in force: the receipt's entry, or the receipt is stale."
    )
    entries: int = Field(ge=0, description="Its entries placed below `size`.")
    sha256: Sha256 = Field(description="SHA-256 of their leaf hashes, sorted, as bytes.")


class Current(Part):
    """The statement, signed when it was served (docs/evidence.md)."""

    statement: CurrentStatement
    signature: ReceiptSignature


class SignedReceipt(Part):
    """A verdict's receipt, signed once when it was put in force (docs/evidence.md), with
    its entry's inclusion proof in the latest checkpoint (null until the sequencer has
    placed it) and the signed statement that it is the judgement's latest receipt there;
    check it with `magi verify`."""

    receipt: ReceiptBody
    signature: ReceiptSignature
    inclusion: Inclusion | None
    current: Current | None = Field(
        description="Null while `inclusion` is: the statement is of the inclusion's size."
    )


def receipt_of(judgement: Judgement) -> SignedReceipt | None:
    found = receipts.served(judgement)
    return None if found is None else SignedReceipt.model_validate(found)


# --- the log's GET endpoints ------------------------------------------------------------


class LogCheckpoint(Part):
    """The log's latest checkpoint."""

    checkpoint: str = Field(description="The signed note (C2SP tlog-checkpoint), as signed.")
    size: int = Field(ge=0)
    root_hash: Sha256


class InclusionProof(Part):
    leaf_hash: Sha256
    index: int = Field(ge=0)
    tree_size: int = Field(ge=1)
    proof: list[Sha256]


class ConsistencyProof(Part):
    first: int = Field(ge=1)
    second: int = Field(ge=1)
    proof: list[Sha256]
