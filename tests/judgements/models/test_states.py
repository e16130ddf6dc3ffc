"""State graphs (judgements/models/states.py): each kind's states and moves declared once
beside its model and checked when the class is made, and the one transition function
that writes a state. A state written any other way (an UPDATE, a save(), raw SQL) is a
change that bypasses its graph: the watch below sees every statement sent to the
database while the real paths run, and fails on one that writes a state column from
anywhere but `transition`."""

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, models
from django.utils import timezone

from judgements.engine import lifecycle
from judgements.evaluations import suites
from judgements.models import (
    Agent,
    DeliveryStates,
    DeliveryStatus,
    Judgement,
    JudgementStates,
    Notification,
    NotificationStates,
    Panel,
    RoundDecision,
    SlackMessage,
    SlackMessageStates,
    Status,
    WebhookDelivery,
)
from judgements.models.states import Move, StateGraph, Told, transition
from judgements.outcome import notifications, reviews, slack_outbox, webhooks
from tests.support.evaluations import SUITE, start
from tests.support.slack_requests import connect
from tests.support.slack_team import slack_team

pytestmark = pytest.mark.django_db

GRAPHS: dict[type[models.Model], type[StateGraph]] = {
    Judgement: JudgementStates,
    WebhookDelivery: DeliveryStates,
    Notification: NotificationStates,
    SlackMessage: SlackMessageStates,
}


def state_columns() -> dict[str, str]:
    """Each graph's table and the column holding its state."""
    return {model._meta.db_table: graph.field for model, graph in GRAPHS.items()}


def writes_a_state(sql: str) -> str | None:
    """The table whose state `sql` writes, if it does: an UPDATE setting the column (an
    INSERT makes a row, in its initial state unless it says otherwise)."""
    for table, column in state_columns().items():
        update = re.match(rf'\s*UPDATE\s+"?{table}"?\s+SET\s+(.*?)(\sWHERE\s|$)', sql, re.S | re.I)
        if update and re.search(rf'"?{column}"?\s*=', update.group(1)):
            return table
    return None


def through_transition() -> bool:
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code is transition.__code__:
            return True
        frame = frame.f_back  # type: ignore[assignment]  # None ends the walk
    return False


@contextmanager
def watching_states() -> Iterator[list[str]]:
    """Every statement of this test's connection that writes a state past `transition`."""
    bypasses: list[str] = []

    def watch(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        if writes_a_state(sql) and not through_transition():
            bypasses.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watch):
        yield bypasses


# --- the graphs, checked when made -------------------------------------------------------


class Light(models.TextChoices):
    RED = "red"
    GREEN = "green"
    BROKEN = "broken"


def test_the_three_kinds_declare_their_moves_beside_their_models():
    assert set(JudgementStates.moves) == {"claim", "finish", "escalate", "fail", "expire", "cancel"}
    assert JudgementStates.final == {Status.APPROVED, Status.REJECTED, Status.ERROR}
    assert set(DeliveryStates.moves) == {"deliver", "give_up", "retry"}
    assert DeliveryStates.final == {DeliveryStatus.DELIVERED, DeliveryStatus.FAILED}
    assert NotificationStates.final == {"sent"}
    for model, graph in GRAPHS.items():
        column = model._meta.get_field(graph.field)
        assert isinstance(column, models.CharField) and column.default == graph.initial
        assert [value for value, _ in column.choices or ()] == list(graph.states.values)


def test_a_graph_naming_a_state_it_does_not_have_fails_when_made():
    with pytest.raises(ValueError, match="not states"):

        class Wrong(StateGraph):
            states, initial = Light, Light.RED
            go = Move((Light.RED,), (Light.GREEN, "blue"))


def test_a_graph_with_a_state_no_move_reaches_fails_when_made():
    with pytest.raises(ValueError, match="no move reaches"):

        class Stranded(StateGraph):
            states, initial = Light, Light.RED
            go = Move((Light.RED,), (Light.GREEN,))


def test_a_graph_must_start_in_a_stored_state_and_move_somewhere():
    with pytest.raises(ValueError, match="initial state"):

        class Unstored(StateGraph):
            states, initial, unstored = Light, Light.BROKEN, (Light.BROKEN,)
            go = Move((Light.BROKEN,), (Light.RED, Light.GREEN))

    with pytest.raises(ValueError, match="start and end"):

        class Nowhere(StateGraph):
            states, initial = Light, Light.RED
            go = Move((Light.RED,), ())


def test_a_move_into_an_unstored_state_fails_when_made():
    with pytest.raises(ValueError, match="not states"):

        class Held(StateGraph):
            states, initial, unstored = Light, Light.RED, (Light.BROKEN,)
            go = Move((Light.RED,), (Light.GREEN, Light.BROKEN))


# --- the one transition function ---------------------------------------------------------


def test_transition_refuses_a_target_its_move_does_not_reach(make_judgement):
    judgement = make_judgement()
    rows = Judgement.objects.filter(pk=judgement.pk)
    with pytest.raises(ValueError, match="does not end in 'approved'"):
        transition(rows, JudgementStates.cancel, Status.APPROVED, worker="w", told=[])
    with pytest.raises(ValueError, match="writes status, not its caller"):
        transition(
            rows, JudgementStates.cancel, Status.ERROR, worker="w", told=[], status="approved"
        )
    assert Judgement.objects.get(pk=judgement.pk).status == Status.IDLE


def test_transition_moves_only_rows_in_its_sources_and_logs_them(make_judgement, caplog):
    judgement = make_judgement()
    rows = Judgement.objects.filter(pk=judgement.pk)
    told = [Told(f"judgement {judgement.pk}", Status.JUDGING, " (a test)")]
    assert transition(rows, JudgementStates.fail, Status.ERROR, worker="w", told=told) == 0
    assert "->" not in caplog.text  # idle is not a source of fail: nothing moved, nothing told
    caplog.set_level("INFO", logger="judgements.models.states")
    assert transition(rows, JudgementStates.cancel, Status.ERROR, worker="w9", told=told) == 1
    assert f"judgement {judgement.pk}: judging -> error by worker w9 (a test)" in caplog.text


# --- every real change of state goes through it ------------------------------------------


def test_the_watch_sees_a_state_written_past_the_graph(make_judgement):
    judgement = make_judgement()
    with watching_states() as bypasses:
        Judgement.objects.filter(pk=judgement.pk).update(status=Status.ERROR)
        judgement.refresh_from_db()
        judgement.status = Status.APPROVED
        judgement.save()
        with connection.cursor() as cursor:
            cursor.execute(
                f'UPDATE "{Judgement._meta.db_table}" SET "status" = %s WHERE id = %s',
                ["idle", judgement.pk],
            )
        Judgement.objects.filter(pk=judgement.pk).update(title="only a title")
    assert len(bypasses) == 3, bypasses


def approving(judgement: Judgement) -> dict[Agent, list[str]]:
    """Every agent approving in every round, stored as the engine stores it."""
    agents = list(judgement.agents.order_by("position"))
    for agent in agents:
        for round_number in (1, 2, 3):
            RoundDecision.objects.create(
                agent=agent, round=round_number, decision="approve", reason="r"
            )
    return {agent: ["approve"] * 3 for agent in agents}


def test_a_judgement_s_moves_all_go_through_its_graph(make_judgement, user, settings):
    ended = make_judgement()
    failed, overdue = make_judgement(), make_judgement()
    with watching_states() as bypasses:
        held = lifecycle.claim("w1", Judgement.objects.filter(pk__in=[ended.pk, failed.pk]), 2)
        assert held == [ended.pk, failed.pk]
        lifecycle.finish(ended.pk, "w1", approving(ended))
        assert lifecycle.fail(failed.pk, "a call failed", worker_id="w1")
        lifecycle.claim("w2", Judgement.objects.filter(pk=overdue.pk), 1)
        Judgement.objects.filter(pk=overdue.pk).update(
            lease_expires_at=timezone.now() - timedelta(seconds=1),
            started_at=timezone.now() - timedelta(days=1),
        )
        assert [pk for pk, _ in lifecycle.expire_overdue("sweeper")] == [overdue.pk]
    assert bypasses == []
    statuses = dict(Judgement.objects.values_list("pk", "status"))
    assert statuses == {ended.pk: Status.APPROVED, failed.pk: Status.ERROR, overdue.pk: "error"}


def test_a_level_that_escalates_goes_through_its_graph(make_panel, make_judgement):
    """A verdict its level does not keep (split 2-1: contested) ends by `escalate`, the
    story's next level made in the same transaction (docs/escalation.md)."""
    cheap, strong = make_panel(name="Cheap"), make_panel(name="Strong")
    Panel.objects.filter(pk=cheap.pk).update(escalate_to=strong)
    level = make_judgement(panel="Cheap", agents=None)
    votes = approving(level)
    casper = list(votes)[2]
    RoundDecision.objects.filter(agent=casper).update(decision="reject")
    votes[casper] = ["reject"] * 3
    with watching_states() as bypasses:
        assert lifecycle.claim("w1", Judgement.objects.filter(pk=level.pk), 1) == [level.pk]
        assert lifecycle.finish(level.pk, "w1", votes) == Status.APPROVED
    assert bypasses == []
    level.refresh_from_db()
    following = level.next_level
    assert level.escalated and level.contested and following is not None
    assert (following.status, following.level, following.panel) == (Status.IDLE, 2, strong)


def test_a_cancelled_run_s_judgements_go_through_their_graph(fake_llm, user):
    suite = suites.import_suite(name="Gate cases", description="", owner=user, data=SUITE)
    run = start(suite, user)
    with watching_states() as bypasses:
        ended = lifecycle.cancel_run(run, user)
    assert ended and bypasses == []
    assert set(run.judgements.values_list("status", flat=True)) == {Status.ERROR}


def test_deliveries_and_emails_go_through_their_graphs(make_judgement, user, settings):
    settings.MAGI_WEBHOOK_HOSTS = []  # the host no longer allowed: the delivery gives up
    settings.EMAIL_HOST = ""  # nobody to send it to: the email is done
    judgement = make_judgement()
    delivery = WebhookDelivery.objects.create(
        judgement=judgement, event=webhooks.FINISHED, url="https://hooks.example.com/", payload={}
    )
    email = Notification.objects.create(judgement=judgement, user=user)
    with watching_states() as bypasses:
        claimed = webhooks.claim_one("w1")
        assert claimed is not None
        assert webhooks.attempt(*claimed, "w1") == DeliveryStatus.FAILED
        assert notifications.send_due("w1") == 0
    assert bypasses == []
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.FAILED
    assert Notification.objects.get(pk=email.pk).status == "sent"


def test_slack_messages_go_through_their_graph(make_judgement, slack_api):
    """Posted, outdated by a review, updated in place; one reviewed before it was posted
    dropped."""
    setup = slack_team(slack_api)
    connect(setup.team)
    held, early = (
        make_judgement(
            creator=setup.people["ana"], panel="Refunds", agents=None, hold_contested=True
        )
        for _ in range(2)
    )
    for judgement in (held, early):
        votes = approving(judgement)
        casper = list(votes)[2]
        RoundDecision.objects.filter(agent=casper).update(decision="reject")
        votes[casper] = ["reject"] * 3  # 2-1: contested, and held
        lifecycle.claim("w1", Judgement.objects.filter(pk=judgement.pk), 1)
        lifecycle.finish(judgement.pk, "w1", votes)
    with watching_states() as bypasses:
        slack_outbox.queue()
        reviews.confirm(early.pk, setup.people["bob"], "Before Slack.")
        slack_outbox.deliver("w1")
        reviews.confirm(held.pk, setup.people["bob"], "In Slack.")
        slack_outbox.deliver("w1")
    assert bypasses == []
    states = dict(SlackMessage.objects.values_list("judgement_id", "status"))
    assert states == {held.pk: "posted", early.pk: "dropped"}
    assert len(slack_api.calls("chat.update")) == 1


def test_the_architecture_page_draws_the_graphs_as_the_code_declares_them():
    page = (Path(__file__).resolve().parents[3] / "docs" / "architecture.md").read_text()
    section = page.split("## State graphs", 1)[1].split("\n## ", 1)[0]
    drawn = section.split("```\n", 1)[1].split("```", 1)[0]
    declared = [line for graph in GRAPHS.values() for line in graph.drawing()]
    assert drawn.splitlines() == declared, "\n".join(["Copy into the page:", *declared])
