"""MAGI's models, by area; everything is importable from `judgements.models` (`__all__`
says so to the type checker: the one import path)."""

from judgements.models.access import (
    LAST_USED_RESOLUTION,
    ApiToken,
    BatchPart,
    IdempotencyKey,
)
from judgements.models.agents import (
    Agent,
    AttemptOutcome,
    LLMAttempt,
    RoundDecision,
)
from judgements.models.budgets import (
    Budget,
    BudgetPeriod,
)
from judgements.models.certificates import (
    Certificate,
    agents_fingerprint,
)
from judgements.models.chain import (
    ChainEntry,
    Checkpoint,
    EntryKind,
    LogNode,
    LogState,
    Receipt,
    SetAside,
)
from judgements.models.checks import (
    CheckKind,
    JudgementCheck,
)
from judgements.models.choices import (
    DECISION_OF_STATUS,
    FINISHED_STATUSES,
    ID_MAX,
    Decision,
    Status,
    Trust,
    is_id,
)
from judgements.models.evaluations import (
    EvaluationRun,
    SuiteCase,
)
from judgements.models.identity import Identity
from judgements.models.judgements import (
    UNREVIEWED,
    Judgement,
    JudgementQuerySet,
    JudgementStates,
    held,
)
from judgements.models.leases import (
    Leased,
    LeaseQuerySet,
    lease_expired,
)
from judgements.models.notifications import (
    Notification,
    NotificationChoice,
    NotificationStates,
    NotificationStatus,
)
from judgements.models.outcome import (
    Confirmation,
    DeliveryStates,
    DeliveryStatus,
    Override,
    WebhookAttempt,
    WebhookDelivery,
    WebhookSecret,
)
from judgements.models.panels import (
    Panel,
    SharedQuerySet,
    SharedWithExamples,
    Suite,
)
from judgements.models.policy import team_ids_of
from judgements.models.slack import (
    SlackConnection,
    SlackLink,
    SlackMessage,
    SlackMessageStates,
    SlackMessageStatus,
    SlackRequest,
)
from judgements.models.states import Move, StateGraph, transition
from judgements.models.teams import (
    AuditEntry,
    AuditSubject,
    Membership,
    Team,
)

__all__ = [
    "DECISION_OF_STATUS",
    "FINISHED_STATUSES",
    "ID_MAX",
    "LAST_USED_RESOLUTION",
    "UNREVIEWED",
    "Agent",
    "ApiToken",
    "AttemptOutcome",
    "AuditEntry",
    "AuditSubject",
    "BatchPart",
    "Budget",
    "BudgetPeriod",
    "Certificate",
    "ChainEntry",
    "CheckKind",
    "Checkpoint",
    "Confirmation",
    "Decision",
    "DeliveryStates",
    "DeliveryStatus",
    "EntryKind",
    "EvaluationRun",
    "IdempotencyKey",
    "Identity",
    "Judgement",
    "JudgementCheck",
    "JudgementQuerySet",
    "JudgementStates",
    "LLMAttempt",
    "LeaseQuerySet",
    "Leased",
    "LogNode",
    "LogState",
    "Membership",
    "Move",
    "Notification",
    "NotificationChoice",
    "NotificationStates",
    "NotificationStatus",
    "Override",
    "Panel",
    "Receipt",
    "RoundDecision",
    "SetAside",
    "SharedQuerySet",
    "SharedWithExamples",
    "SlackConnection",
    "SlackLink",
    "SlackMessage",
    "SlackMessageStates",
    "SlackMessageStatus",
    "SlackRequest",
    "StateGraph",
    "Status",
    "Suite",
    "SuiteCase",
    "Team",
    "Trust",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookSecret",
    "agents_fingerprint",
    "held",
    "is_id",
    "lease_expired",
    "team_ids_of",
    "transition",
]
