"""The floor the engine is measured against (bench/throughput.py, bench/engine_cpu.py):
the requests the engine sends for a judgement, built as it builds them, sent straight
with the openai SDK from one event loop, each answer parsed and (optionally) stored as
one row through the ORM: the least any engine making these calls must spend.
"""

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Collection, Sequence
from types import SimpleNamespace
from typing import Any

# A request body as the SDK takes it (llm/completions.request_body's).
Body = dict[str, Any]
# Each judgement's agents, by judgement id: (agent id, model), in panel order.
Panels = dict[int, list[tuple[int, str]]]


# The engine's pools per endpoint (llm/calls.py Clients.POOL_SHARDS).
ENGINE_POOLS = 16


class EnginePath:
    """`chat.completions.create` as the engine asks (llm/calls.py _attempt_in_slot): the
    SDK's `post` with the reply kept as JSON, over ENGINE_POOLS clients in turn. What the
    floor reads of the reply (its first message's text) is handed back in the SDK's
    shape. The plain way's one pool checks every idle connection each time it hands one
    out, so its cost per call grows with the calls in flight (8 a judgement at round 1
    with checks, 3 without), and its typed create() transforms the request and builds a
    ChatCompletion the engine never builds: the engine can come in under it per call."""

    def __init__(self, clients: list[Any]) -> None:
        self.chat, self.completions = self, self
        self.turn = itertools.cycle(clients)

    async def create(self, **body: Any) -> Any:
        data = await next(self.turn).post("/chat/completions", body=body, cast_to=object)
        message = SimpleNamespace(content=data["choices"][0]["message"]["content"])
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])


@contextlib.asynccontextmanager
async def asking(how: str, **options: Any) -> AsyncIterator[Any]:
    """The floor's client: "sdk", one AsyncOpenAI asked plainly; "engine-path", as the
    engine asks (EnginePath). `options` are AsyncOpenAI's."""
    import openai

    clients = [openai.AsyncOpenAI(**options) for _ in range(ENGINE_POOLS if how != "sdk" else 1)]
    try:
        yield clients[0] if how == "sdk" else EnginePath(clients)
    finally:
        for each in clients:
            await each.close()


def vote_bodies(
    briefs: Sequence[tuple[str, str, str]], content: str
) -> dict[tuple[str, int], Body]:
    """The vote of each (name, criteria, model) in each round, earlier rounds approving,
    keyed (model, round)."""
    from judgements.core import prompts
    from judgements.llm import completions, providers

    bodies = {}
    earlier: list[prompts.EarlierDecision] = []
    for round_number in (1, 2, 3):
        for name, criteria, model in briefs:
            brief = prompts.AgentBrief(name, criteria)
            messages = prompts.build_messages(brief, content, round_number, earlier)
            body = completions.request_body(providers.route_for(model), messages)
            bodies[(model, round_number)] = dict(body)  # a ChatRequest, as a plain Body
        earlier = earlier + [
            prompts.EarlierDecision(name, round_number, "approve", f"{name} approves")
            for name, _, _ in briefs
        ]
    return bodies


def check_body(
    model: str, messages: list[dict[str, str]], max_tokens: int | None, schema: Body | None = None
) -> Body:
    """A check's request as engine/checks.py sends it: log-probabilities, and a schema
    where the check's reply has one."""
    from judgements.llm import completions, providers

    route = providers.route_for(model)
    body = {
        "model": model,
        "messages": messages,
        "max_tokens": max_tokens or route.max_tokens,
        "temperature": route.temperature,
        **completions.LOGPROBS,
    }
    if route.seed is not None:
        body["seed"] = route.seed
    if schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "check", "strict": True, "schema": schema},
        }
    return body


def check_bodies(briefs: Sequence[tuple[str, str, str]], content: str) -> dict[Any, Body]:
    """The checks beside round 1, as a judgement asks them when all run: a probe of each
    agent (keyed ("probe", model)), a second opinion and an injection screen."""
    from judgements.core import check_prompts, prompts

    bodies: dict[Any, Body] = {}
    for name, criteria, model in briefs:
        messages = check_prompts.probe_messages(prompts.AgentBrief(name, criteria), content)
        bodies[("probe", model)] = check_body(model, messages, check_prompts.PROBE_MAX_TOKENS)
    first = briefs[0][2]
    messages = check_prompts.second_opinion_messages([c for _, c, _ in briefs], content)
    schema = check_prompts.SECOND_OPINION_SCHEMA
    bodies["second_opinion"] = check_body(first, messages, None, schema)
    messages = check_prompts.screen_messages(content, "CANARY12")
    bodies["screen"] = check_body(first, messages, check_prompts.SCREEN_MAX_TOKENS)
    return bodies


def panels_of(ids: list[int], alias: str = "default") -> Panels:
    from judgements.models import Agent

    panels: Panels = {pk: [] for pk in ids}
    rows = Agent.objects.using(alias).filter(judgement_id__in=ids)
    for agent in rows.order_by("judgement_id", "position"):
        panels[agent.judgement_id].append((agent.pk, agent.model))
    return panels


async def asked(client: Any, body: Body, lost: list[str]) -> Any:
    """The answer to `body`. The suite's server now and then loses a call in a burst of
    hundreds (the engine rides that out with its retries): asked again, and counted in
    `lost`."""
    import openai

    for _ in range(3):
        try:
            return await client.chat.completions.create(**body)
        except openai.APIConnectionError:
            lost.append(body["model"])
    raise AssertionError("the server lost the same call three times")


async def run(
    client: Any,
    bodies: dict[Any, Body],
    panels: Panels,
    *,
    rows_in: str | None,
    checks: Collection[str] = (),
    raw_sql: bool = False,
) -> None:
    """Every judgement at once: the checks of `checks` beside round 1 (of "probe", a
    call per agent, "second_opinion" and "screen"), three rounds of three calls, each
    answer parsed and, with `rows_in` (a database alias), stored as one row there:
    through the ORM's `acreate`, or with `raw_sql` (votes alone: no check may run) as
    one INSERT on the standard library's sqlite3, in the event loop's own thread, as a
    program without Django would write it."""
    from judgements.models import JudgementCheck

    lost: list[str] = []
    assert not (raw_sql and checks), "raw SQL stores votes alone"
    votes = None if rows_in is None else RawVotes(rows_in) if raw_sql else OrmVotes(rows_in)

    async def create(body: Body) -> Any:
        return await asked(client, body, lost)

    async def vote(agent_id: int, model: str, round_number: int) -> None:
        completion = await create(bodies[(model, round_number)])
        verdict = json.loads(completion.choices[0].message.content)
        if votes is not None:
            await votes.store(agent_id, round_number, verdict["decision"], verdict["reason"])

    async def check(judgement_id: int, kind: str, agent_id: int | None, body: Body) -> None:
        completion = await create(body)
        if rows_in is not None:
            await JudgementCheck.objects.using(rows_in).acreate(
                judgement_id=judgement_id, kind=kind, agent_id=agent_id, model=body["model"],
                request={}, response_text=completion.choices[0].message.content or "",
            )  # fmt: skip

    async def rounds(panel: list[tuple[int, str]]) -> None:
        for round_number in (1, 2, 3):
            await asyncio.gather(*(vote(pk, model, round_number) for pk, model in panel))

    async def judgement(judgement_id: int, panel: list[tuple[int, str]]) -> None:
        jobs = [rounds(panel)]
        if "probe" in checks:
            jobs += [check(judgement_id, "probe", pk, bodies[("probe", m)]) for pk, m in panel]
        for kind in ("second_opinion", "screen"):
            if kind in checks:
                jobs.append(check(judgement_id, kind, None, bodies[kind]))
        await asyncio.gather(*jobs)

    try:
        await asyncio.gather(*(judgement(pk, panel) for pk, panel in panels.items()))
    finally:
        if votes is not None:
            votes.close()
    if lost:
        print(f"  (floor batch: {len(lost)} calls lost by the server and asked again)", flush=True)


class OrmVotes:
    """A vote's row written through the ORM's `acreate`, as a Django program would."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    async def store(self, agent_id: int, round_number: int, decision: str, reason: str) -> None:
        from judgements.models import RoundDecision

        await RoundDecision.objects.using(self.alias).acreate(
            agent_id=agent_id, round=round_number, decision=decision, reason=reason
        )

    def close(self) -> None:
        pass


class RawVotes:
    """A vote's row written as one INSERT with the standard library's sqlite3 on a
    connection of its own (autocommit: each row its own transaction, as the ORM's
    `acreate` commits it), the columns the model requires and nothing else computed."""

    def __init__(self, alias: str) -> None:
        import sqlite3

        from django.conf import settings

        from judgements.models import RoundDecision

        self.connection = sqlite3.connect(
            settings.DATABASES[alias]["NAME"], isolation_level=None, check_same_thread=False
        )
        self.sql = (
            f"INSERT INTO {RoundDecision._meta.db_table} "
            "(agent_id, round, decision, reason, latency_ms, missing, created_at) "
            "VALUES (?, ?, ?, ?, 0, '[]', ?)"
        )

    async def store(self, agent_id: int, round_number: int, decision: str, reason: str) -> None:
        """Written at once, in the event loop's thread: no thread hop, as without Django."""
        from datetime import UTC, datetime

        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")  # as Django stores it
        self.connection.execute(self.sql, (agent_id, round_number, decision, reason, now))

    def close(self) -> None:
        self.connection.close()
