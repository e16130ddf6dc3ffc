"""The settings of judging: the input and abuse limits, verdicts, evaluations and
webhooks, and the engine."""

from typing import Annotated

from pydantic_settings import NoDecode

from magi_site.settings_kit import CommaList, Env, ModelPrice, setting


class LimitSettings(Env):
    """Input and abuse limits."""

    # --- Input and abuse limits (each new judgement costs nine LLM calls)
    magi_content_max_chars: int = setting(
        20_000, "longest content, in characters (see [limits](limits.md))", ge=1
    )
    magi_suite_max_cases: int = setting(500, "most cases one evaluation suite may hold", ge=1)
    magi_max_body_bytes: int = setting(
        1_000_000,
        "largest request body (form post or API JSON), in bytes; larger API bodies get 413 "
        "JSON, a larger page form a 413 page that says so (nothing is saved; Back keeps "
        "what was typed)",
        ge=10_000,
    )
    magi_rate_window_seconds: int = setting(
        60, "the window the two rate limits count in, in seconds", ge=1
    )
    magi_rate_limit_per_user: int = setting(
        20, "judgements a user (page and API together) may start per window; 0: no limit", ge=0
    )
    magi_rate_limit_per_token: int = setting(
        20, "judgements one API token may start per window; 0: no limit", ge=0
    )
    magi_unfinished_per_user: int = setting(
        20, "judgements a user may have queued or running at once; 0: no limit", ge=0
    )
    magi_unfinished_runs_per_user: int = setting(
        2, "evaluation runs a user may have under way at once; 0: no limit", ge=0
    )
    magi_idempotency_hours: float = setting(
        24.0, "how long an API `Idempotency-Key` is remembered, in hours", gt=0
    )


class VerdictSettings(Env):
    """Verdicts, evaluations and webhooks."""

    # --- Verdicts, evaluations and webhooks
    magi_hold_contested: bool = setting(
        False,
        "hold a contested verdict for a person (status `held`) when neither the case nor "
        "its saved panel says ([contested.md](contested.md))",
    )
    magi_hold_unmeasured: bool = setting(
        False,
        "hold a verdict whose trust is not measured (its panel holds no certificate for "
        "these agents, and nothing contests it) for a person, as contested ones are held "
        "([contested.md](contested.md))",
    )
    # The checks beside the vote (judgements/core/checks.py): on, off, or unset, when each
    # runs only where it can inform the verdict.
    magi_confidence_probe: bool | None = setting(
        None,
        "ask each agent, beside round 1, its decision in one word, for its confidence "
        "from the token log-probabilities (three short calls a judgement). `true`: every "
        "judgement; `false`: none; unset: only where it can inform the verdict (the "
        "panel's certificate reads the probe confidence, or an evaluation run)",
        shown="unset",
    )
    magi_second_opinion: bool | None = setting(
        None,
        "one call a judgement, beside round 1, that reads the content against the three "
        "criteria and the panel's rule (approve when two hold); its disagreement with the "
        "panel contests the verdict; where it decided, a split or a late change no longer "
        "contests by itself. `true`: every judgement; `false`: none; unset: every judgement "
        "whose check model (`MAGI_CHECK_MODEL`, else the first agent's) is not the bundled "
        "`smollm2-135m` (whose opinion measured as noise), unless a certificate in force "
        "decides the mark without it. A saved panel may turn it off or on",
        shown="unset",
    )
    magi_injection_screen: bool | None = setting(
        None,
        "one call a judgement, before the vote, that asks the model to repeat a random "
        "word and ignore the content; a reply without it contests the verdict. `true`: "
        "every judgement; `false`: none; unset: only where it can inform the verdict (the "
        "panel's certificate reads its signal, the saved panel asks for it, or an "
        "evaluation run). A saved panel may turn it off or on",
        shown="unset",
    )
    magi_check_model: str = setting(
        "",
        "the model the second opinion and the injection screen ask",
        shown="the first agent's",
    )
    magi_model_prices: Annotated[dict[str, ModelPrice], NoDecode] = setting(
        {},
        "USD per million tokens per model, for the cost in evaluation reports: a JSON "
        'object `{"gpt-4o-mini": {"prompt": 0.15, "completion": 0.6, "cached": 0.075}}` '
        "(`cached`, optional, prices the prompt tokens a provider served from its cache). "
        "A report's cost is empty when a model it used has no price",
    )
    magi_webhook_hosts: CommaList = setting(
        [],
        "hosts a `callback_url` may name, comma-separated: `hooks.example.com`, "
        "`*.example.com` (subdomains), https only; `http://host` also allows plain http "
        "for that exact host; empty refuses every webhook",
    )
    magi_webhook_timeout: float = setting(
        10.0, "seconds to wait for a webhook receiver's answer", gt=0
    )
    magi_webhook_max_attempts: int = setting(
        8, "attempts per webhook before it is marked failed", ge=1
    )
    magi_webhook_retry_initial_wait: float = setting(
        10.0, "seconds before a webhook's second attempt, doubled after each failure", ge=0
    )
    magi_webhook_retry_max_wait: float = setting(
        3600.0, "the longest wait between a webhook's attempts", ge=0
    )
    # Held verdicts in Slack (judgements/outcome/slack_*.py, docs/slack.md).
    magi_slack_api_url: str = setting(
        "https://slack.com/api/",
        "Slack's Web API, where held verdicts are posted ([slack.md](slack.md)); another "
        "address only for a proxy or a test server",
    )
    magi_slack_timeout: float = setting(10.0, "seconds to wait for Slack's answer", gt=0)
    magi_slack_max_attempts: int = setting(
        8,
        "attempts per Slack message before it is marked failed; between them the wait "
        "Slack asks for (`Retry-After`), else the webhooks' doubling wait",
        ge=1,
    )


class AuditSettings(Env):
    """The audit log and receipts."""

    # --- Audit log and receipts ([evidence.md](evidence.md))
    magi_audit_signing_key: str = setting(
        "",
        "the Ed25519 key that signs receipts and the log's checkpoints: its 32-byte private seed "
        "in base64url (`manage.py audit new-key` prints one); unset, MAGI makes and keeps "
        "one in `var/audit-signing-key`",
        shown="—",
    )
    magi_audit_retired_keys: CommaList = setting(
        [],
        "earlier signing keys, kept for checking old receipts, each with its retirement "
        "signed by a later key: the lines `manage.py audit retire-key` prints, "
        "comma-separated (`manage.py audit rotate-key` keeps the embedded default's in "
        "`var/audit-retired-keys`)",
        shown="— (none)",
    )
    magi_audit_log_origin: str = setting(
        "",
        "the audit log's name in its checkpoints (the signed notes witnesses keep), such as "
        "`magi.example.com/audit-log`: no spaces, no `+`; read when the log starts, and "
        "kept",
        shown="`magi.invalid/` and random letters",
        pattern=r"^[^\s+]*$",
        max_length=200,
    )
    magi_audit_log_interval: float = setting(
        1.0, "seconds between the sequencer's runs: how soon an entry gets its checkpoint", gt=0
    )
    magi_audit_log_batch: int = setting(
        5000, "entries the sequencer places at most under one checkpoint", ge=1
    )
    magi_audit_checkpoint_dir: str = setting(
        "",
        "a directory, append-only for MAGI (a write-once mount, `chattr +a`), where every "
        "checkpoint is also written as `checkpoint-<size>.txt`; empty: none",
        shown="— (none)",
    )
    magi_audit_checkpoint_webhooks: CommaList = setting(
        [],
        "URLs every checkpoint is POSTed to as a `log.checkpoint` event (on "
        "MAGI_WEBHOOK_HOSTS, signed with MAGI_AUDIT_CHECKPOINT_WEBHOOK_SECRET), "
        "comma-separated",
        shown="— (none)",
    )
    magi_audit_checkpoint_webhook_secret: str = setting(
        "",
        "the secret checkpoint events are signed with, shared with their receivers: "
        "`whsec_` then base64 of 32 random bytes; needed with MAGI_AUDIT_CHECKPOINT_WEBHOOKS",
        shown="—",
    )


class EngineSettings(Env):
    """The engine."""

    # --- Engine
    magi_engine_in_process: bool | None = setting(
        None,
        "run the engine inside the web process (without Redis there is one process)",
        shown="on without `REDIS_URL`",
    )
    magi_lease_seconds: float = setting(
        30.0,
        "how long a worker's claim on a background job (a judgement, a webhook delivery, a "
        "reviewer email) lasts unless renewed",
        gt=0,
    )
    magi_sweep_interval: float = setting(
        10.0, "seconds between a worker's looks for queued or abandoned judgements", gt=0
    )
    magi_db_retry_seconds: float = setting(
        30.0, "how long the engine rides out an unreachable database", ge=0
    )
    magi_judgement_timeout: float = setting(
        1800.0,
        "a judgement not finished this long after its first claim ends in Error",
        gt=0,
    )
    magi_worker_concurrency: int = setting(
        200, "judgements one worker process runs at once; more wait in the database", ge=1
    )
    magi_db_threads: int | None = setting(
        None,
        "database connections per process for the engine's queries (SQLite has one "
        "writer, so more only wait on its lock)",
        shown="8 (1 on SQLite)",
        ge=1,
    )
    magi_channel_send_timeout: float = setting(
        2.0, "the longest wait for the channel layer per event", gt=0
    )
    magi_ws_resync_seconds: float = setting(
        15.0, "how often an open live page re-joins its group and resyncs", gt=0
    )
