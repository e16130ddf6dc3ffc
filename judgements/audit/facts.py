"""What each kind of log entry says: the shape of its payload, one TypedDict per kind.
audit/record.py reads each from the rows it describes, both when an entry is appended and
when `manage.py audit verify` reads the rows again and compares (audit/row_checks.py).
Only facts that stay true of an unchanged history: texts are named by their SHA-256,
people by their id, a model call (every prompt and reply) by the SHA-256 of its fields as
the evidence pack shows them.
"""

from typing import TypedDict

from judgements.core.json_values import JsonValue


class Call(TypedDict):
    """A model call as its entry hashes it (call_sha256) and the evidence pack shows it."""

    attempt: int
    model: str
    provider: str
    base_url: str
    request: JsonValue
    response_text: str
    error: str
    duration_ms: int
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    started_at: str


class AttemptCall(Call):
    """An agent's call with its round and outcome (those keys first, as written)."""

    round: int
    outcome: str


class AgentFact(TypedDict):
    """An agent as submitted: its criteria named by their SHA-256."""

    position: int
    name: str
    model: str
    criteria_sha256: str


class Escalates(TypedDict):
    """Which story a later level continues (docs/escalation.md): its level, the level it
    continues and the story's first judgement."""

    level: int
    judgement: int | None
    root: int | None


class Submitted(TypedDict):
    """A `submitted` entry's payload (`escalates`: None but for a story's later level)."""

    judgement: int
    created_at: str
    title_sha256: str
    content_sha256: str
    agents: list[AgentFact]
    escalates: Escalates | None


class DecisionFact(TypedDict):
    """A `decision` entry's payload."""

    judgement: int
    agent: int
    round: int
    decision: str
    reason_sha256: str
    missing: list[JsonValue]
    p_approve: float | None
    attempt_sha256: str | None


class AttemptFact(TypedDict):
    """An `attempt` entry's payload."""

    judgement: int
    agent: int
    round: int
    outcome: str
    call_sha256: str


class CheckFact(TypedDict):
    """A `check` entry's payload."""

    judgement: int
    kind: str
    agent: int | None
    decision: str | None
    p_approve: float | None
    steered: bool | None
    call_sha256: str


class Score(TypedDict):
    """An agent's final score in tenths and its decision (None until decided)."""

    agent: int
    score_tenths: int | None
    decision: str | None


class VerdictFact(TypedDict):
    """A `verdict` entry's payload."""

    judgement: int
    status: str
    finished_at: str | None
    scores: list[Score]
    contested: bool | None
    contest_reasons: list[JsonValue]
    trust: str | None
    certificate: int | None
    held: bool
    escalated: bool


# What the entries written before issue 70 did not say (every later one says it): an
# entry without it is compared on the rest (audit/row_checks.py).
STORY_KEYS = ("escalates", "escalated")


class OverrideFact(TypedDict):
    """An `override` entry's payload (`released`: the verdict was held for a person)."""

    judgement: int
    by: int | None
    at: str
    panel_status: str
    decision: str
    reason_sha256: str
    released: bool


class ConfirmationFact(TypedDict):
    """A `confirmation` entry's payload."""

    judgement: int
    by: int | None
    at: str
    panel_status: str
    reason_sha256: str
    released: bool


class CertificateFact(TypedDict):
    """A `certificate` entry's payload."""

    certificate: int
    panel: int | None
    created_at: str
    fingerprint: str
    certified: bool
    target: float
    delta: float
    samples: int
    rule: JsonValue
    bound: float | None


class CertificateVoided(TypedDict):
    """A `certificate_voided` entry's payload."""

    certificate: int
    panel: int | None
    voided_at: str | None
    void_reason: str


class ConfigurationFact(TypedDict):
    """A `configuration` entry's payload: the audit row as written."""

    audit_entry: int
    subject: str
    target: str
    by: int | None
    actor: str
    at: str
    before: JsonValue
    after: JsonValue
