"""MAGI's models, by area; everything is importable from `judgements.models`."""

from judgements.models.access import (  # noqa: F401 - re-exported: the one import path
    LAST_USED_RESOLUTION,
    ApiToken,
    BatchPart,
    IdempotencyKey,
)
from judgements.models.agents import (  # noqa: F401 - re-exported: the one import path
    Agent,
    AttemptOutcome,
    LLMAttempt,
    RoundDecision,
)
from judgements.models.budgets import (  # noqa: F401 - re-exported: the one import path
    Budget,
    BudgetPeriod,
)
from judgements.models.certificates import (  # noqa: F401 - re-exported: the one import path
    Certificate,
    agents_fingerprint,
)
from judgements.models.chain import (  # noqa: F401 - re-exported: the one import path
    ChainEntry,
    ChainHead,
    ChainSignature,
    EntryKind,
)
from judgements.models.checks import (  # noqa: F401 - re-exported: the one import path
    CheckKind,
    JudgementCheck,
)
from judgements.models.choices import (  # noqa: F401 - re-exported: the one import path
    DECISION_OF_STATUS,
    FINISHED_STATUSES,
    ID_MAX,
    Decision,
    Status,
    Trust,
    is_id,
)
from judgements.models.evaluations import (  # noqa: F401 - re-exported: the one import path
    EvaluationRun,
    SuiteCase,
)
from judgements.models.identity import Identity  # noqa: F401 - re-exported: the one import path
from judgements.models.judgements import (  # noqa: F401 - re-exported: the one import path
    UNREVIEWED,
    Judgement,
    JudgementQuerySet,
    held,
    hold_contested,
)
from judgements.models.leases import (  # noqa: F401 - re-exported: the one import path
    Leased,
    LeaseQuerySet,
    lease_expired,
)
from judgements.models.notifications import (  # noqa: F401 - re-exported: the one import path
    Notification,
    NotificationChoice,
)
from judgements.models.outcome import (  # noqa: F401 - re-exported: the one import path
    Confirmation,
    DeliveryStatus,
    Override,
    WebhookAttempt,
    WebhookDelivery,
    WebhookSecret,
)
from judgements.models.panels import (  # noqa: F401 - re-exported: the one import path
    Panel,
    SharedQuerySet,
    SharedWithExamples,
    Suite,
)
from judgements.models.teams import (  # noqa: F401 - re-exported: the one import path
    AuditEntry,
    AuditSubject,
    Membership,
    Team,
    team_ids_of,
)
