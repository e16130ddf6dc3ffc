"""A history for the audit log's tests and bench/audit_chain.py, made through MAGI's own
change functions without a model: judgements submitted the one way in, claimed, each
agent's three decisions stored, the verdict finished, some overridden or confirmed, a
team's members changed; and the log's queued entries placed by its sequencer
(`placed`). Run on its own against any database:

    DATABASE_URL=... python -m tests.support.audit_history JUDGEMENTS WORKER
    DATABASE_URL=... python -m tests.support.audit_history stories WORKER
"""

import json
import sys
from datetime import UTC, datetime

from judgements.core.prompts import AgentVerdict

REVIEW_REASON = "Checked by hand against the itinerary."
# Each agent's votes over the three rounds: approved 2-1.
VOTES = (("approve",) * 3, ("approve", "approve", "reject"), ("reject",) * 3)


def route():
    from judgements.llm.completions import ModelRoute

    return ModelRoute(
        model="model-a", provider="default", base_url=None, api_key=None,
        structured_output="json_schema", timeout=5.0, temperature=0.0, seed=0, max_tokens=400,
    )  # fmt: skip


def result(decision: str, round_number: int):
    from judgements.llm.calls import AttemptRecord, VerdictResult

    reason = f"Round {round_number}: the plan {'is' if decision == 'approve' else 'is not'} safe."
    verdict = AgentVerdict(reason=reason, criterion_met=decision == "approve", decision=decision)
    attempt = AttemptRecord(
        attempt=1, started_at=datetime.now(UTC), duration_ms=5,
        base_url="http://127.0.0.1:9/v1", response_text=verdict.model_dump_json(),
        request={"model": "model-a", "messages": [], "max_tokens": 400, "temperature": 0.0},
    )  # fmt: skip
    return VerdictResult(
        verdict=verdict, latency_ms=5, prompt_tokens=10, completion_tokens=5, attempt=attempt
    )


def judge_one(worker: str, creator, content: str) -> int:
    """One judgement from submission to its verdict, as the engine stores it."""
    from judgements.intake.json_cases import validate_case
    from judgements.intake.start import Submission, submit
    from tests.support.cases import case_for

    case = case_for(content=content)
    judgement = submit([validate_case(case, None)], Submission(creator=creator)).judgement
    judge_level(worker, judgement, VOTES)
    return judgement.pk


# A level judged with these decides unanimously: its verdict is not contested, and (no
# certificate, MAGI_HOLD_UNMEASURED off) it keeps it. VOTES' 2-1 split contests a verdict:
# a level judged so escalates when its panel names a next one.
UNANIMOUS = (("approve",) * 3,) * 3


def judge_level(worker: str, judgement, votes) -> None:
    """One level of a story, claimed, decided round by round and finished as the engine
    does (a level not kept starts the next one in finish's transaction)."""
    from judgements.engine import lifecycle, writes
    from judgements.models import Judgement

    assert lifecycle.claim(worker, Judgement.objects.filter(pk=judgement.pk), 1)
    agents = list(judgement.agents.all())
    for round_number in (1, 2, 3):
        for agent, agent_votes in zip(agents, votes, strict=True):
            decision = agent_votes[round_number - 1]
            writes.store_decision(
                agent, round_number, route(), result(decision, round_number), worker
            )
    lifecycle.finish(judgement.pk, worker, {a: list(v) for a, v in zip(agents, votes, strict=True)})


def escalating_panels(owner, levels: int, prefix: str = "Level", hold_last: bool = False) -> str:
    """`levels` panels of `owner`'s, made the audited way, "<prefix> 1" escalating to
    "<prefix> 2" and so on: the first one's name. `hold_last`: the last one holds its
    contested verdicts for a person."""
    from judgements.configuration import change_request, panel_config
    from judgements.configuration.panel_fields import PanelFields
    from tests.support.cases import case_for

    following = None
    for number in range(levels, 0, -1):
        name = f"{prefix} {number}"
        body: PanelFields = {
            "name": name, "agents": case_for()["agents"], "escalate_to": following,
        }  # fmt: skip
        if hold_last and number == levels:
            body["hold_contested"] = True
        panel_config.create(change_request.Change(by=owner), body)
        following = name
    return f"{prefix} 1"


def judge_story(worker: str, creator, content: str, panel: str, votes: list) -> list[int]:
    """A story of the escalating panel `panel` (escalating_panels) submitted by `creator`,
    each level judged with its votes in turn (VOTES: it escalates; UNANIMOUS: it keeps
    its verdict): the ids of its levels, the first first."""
    from judgements.intake.json_cases import validate_case
    from judgements.intake.start import Submission, submit
    from judgements.models import Judgement
    from tests.support.cases import case_for

    case = case_for(content=content)
    del case["agents"]
    case["panel"] = panel
    judgement = submit([validate_case(case, None)], Submission(creator=creator)).judgement
    made = [judgement.pk]
    for level_votes in votes:
        judge_level(worker, Judgement.objects.get(pk=made[-1]), level_votes)
        following = Judgement.objects.get(pk=made[-1]).next_level
        if following is None:
            break
        made.append(following.pk)
    return made


def make_stories(worker: str) -> dict[str, list[int]]:
    """Escalation stories of 1, 2 and 3 levels, each made as the engine makes one, by a
    maker on their own escalating panels, all placed in the log: kept at once; escalated
    once, then kept; escalated twice, then kept; escalated twice and contested at the
    last level, then overridden to reject by staff; escalated twice and held for a person
    at the last level. Each story's levels' ids."""
    from judgements.configuration import people
    from judgements.outcome import overrides

    staff = people.create_user(None, f"ops-{worker}", f"ops-{worker}@example.com", is_staff=True)
    maker = people.create_user(staff, f"maker-{worker}", f"maker-{worker}@example.com")
    two = escalating_panels(maker, 2, f"Two {worker}")
    three = escalating_panels(maker, 3, f"Three {worker}")
    holding = escalating_panels(maker, 3, f"Held {worker}", hold_last=True)
    made = {
        "one": judge_story(worker, maker, "Trip one.", two, [UNANIMOUS]),
        "two": judge_story(worker, maker, "Trip two.", two, [VOTES, UNANIMOUS]),
        "three": judge_story(worker, maker, "Trip three.", three, [VOTES, VOTES, UNANIMOUS]),
        "overridden": judge_story(worker, maker, "Trip four.", three, [VOTES, VOTES, VOTES]),
        "held": judge_story(worker, maker, "Trip five.", holding, [VOTES, VOTES, VOTES]),
    }
    overrides.override(made["overridden"][-1], staff, "reject", REVIEW_REASON)
    placed()
    return made


def make_history(judgements: int, worker: str) -> list[int]:
    """`judgements` judged; every fifth overridden, every seventh confirmed; a team's
    members changed every tenth. The ids made."""
    from judgements.configuration import people, team_config, teams
    from judgements.outcome import overrides, reviews

    # Made the audited way, as MAGI makes them: a user or team with no audit row made
    # after the log started (another process's submission or sequencer run may start it
    # first) is one `audit verify` names as added outside MAGI.
    creator = people.create_user(None, f"maker-{worker}", f"maker-{worker}@example.com")
    staff = people.create_user(None, f"ops-{worker}", f"ops-{worker}@example.com", is_staff=True)
    team = team_config.create(None, {"name": f"team-{worker}"})
    made = []
    for number in range(judgements):
        pk = judge_one(worker, creator, f"Trip {number} of {worker}: Japan next week.")
        made.append(pk)
        if number % 5 == 0:
            overrides.override(pk, staff, "reject", REVIEW_REASON)
        elif number % 7 == 0:
            reviews.confirm(pk, staff, REVIEW_REASON)
        if number % 10 == 0:
            teams.set_members(team, [creator] if number % 20 else [creator, staff], staff)
    return made


def with_a_budget(judgements: int) -> list[int]:
    """`make_history(judgements, "w1")`, then a budget of 5 USD a day for its maker made
    the audited way, all placed under signed checkpoints. The judgements' ids."""
    from judgements.configuration import budget_config
    from judgements.models import Judgement

    made = make_history(judgements, "w1")
    budget_config.create(
        Judgement.objects.get(pk=made[0]).override.by,
        {"team": None, "user": "maker-w1", "panel": None, "panel_team": None, "period": "day",
         "limit_usd": 5, "limit_tokens": None},
    )  # fmt: skip
    placed()
    return made


def placed(worker: str = "tests") -> int:
    """Every queued entry placed in the log, under signed checkpoints, as a worker's
    sequencer run places them (audit/sequencer.py)."""
    from judgements.audit import sequencer

    return sequencer.run(worker)


if __name__ == "__main__":
    import django

    django.setup()
    if sys.argv[1] == "stories":
        print(json.dumps(make_stories(sys.argv[2])))
    else:
        ids = make_history(int(sys.argv[1]), sys.argv[2])
        print(f"{len(ids)} judgements by {sys.argv[2]}")
