"""The signed receipt as the answers carry it and the API's schema documents it: the
shape of judgements/audit/receipts.py's dict, field by field (docs/evidence.md). Every
field is required and none is converted, so the answer is the signed body exactly and
its signature still checks."""

from typing import Annotated, Any, Literal

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


class ReceiptChainPlace(Part):
    seq: int = Field(description="The entry's place in the audit chain.")
    entry_sha256: Sha256
    kind: Literal["verdict", "override", "confirmation"]


class ReceiptBody(Part):
    """What is signed: canonical JSON (RFC 8785) of this object."""

    format: Literal["magi-receipt/1"]
    judgement: int
    content_sha256: Sha256 = Field(description="SHA-256 of the content as UTF-8.")
    agents: list[ReceiptAgent]
    rounds: list[ReceiptRound]
    scores: list[ReceiptScore]
    panel_verdict: str
    verdict: str = Field(description="The verdict in force when the entry was written.")
    review: ReceiptReview | None
    mark: ReceiptMark
    certificate: ReceiptCertificate | None = Field(
        description="The certificate the mark was read against."
    )
    at: Timestamp = Field(description="When the entry named in chain was written.")
    chain: ReceiptChainPlace


class ReceiptSignature(Part):
    alg: Literal["EdDSA"]
    kid: str = Field(description="The key's id in /.well-known/magi-keys.json.")
    value: str = Field(description="Ed25519 over canonical(receipt), base64url.")


class SignedReceipt(Part):
    """A verdict's receipt, signed (docs/evidence.md); check it with `magi verify`."""

    receipt: ReceiptBody
    signature: ReceiptSignature


def receipt_of(judgement: Judgement) -> SignedReceipt | None:
    found: dict[str, Any] | None = receipts.signed(judgement)
    return None if found is None else SignedReceipt.model_validate(found)
