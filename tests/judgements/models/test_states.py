"""State graphs (judgements/models/states.py): each kind's states and moves declared once
beside its model and checked when the class is made, its column bound to its graph, and
the one transition function that writes a state. Each other way of writing a state is
attacked below as a careless or hurried change would write it, and each fails when it
runs: a save (the field's pre_save), an update or bulk_update (StateQuerySet), a row made
in a later state, raw SQL (the suite's watch on every connection, tests/conftest.py). The
real paths of every kind then run under that watch."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection, models, transaction
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
from judgements.models.states import Move, StateField, StateGraph, Told, transition
from judgements.outcome import notifications, reviews, slack_outbox, webhooks
from tests.support.evaluations import SUITE, start
from tests.support.slack_requests import connect
from tests.support.slack_team import slack_team
from tests.support.states import BYPASSES, StateWrittenPastItsGraph, stateful_models

pytestmark = pytest.mark.django_db


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


def test_each_state_column_knows_its_graph():
    """The pairs are read off the models' fields: a kind with states is found by its
    column, and its column is the graph's."""
    found = stateful_models()
    assert found == {
        Judgement: JudgementStates,
        WebhookDelivery: DeliveryStates,
        Notification: NotificationStates,
        SlackMessage: SlackMessageStates,
    }
    for model, graph in found.items():
        column = model._meta.get_field(graph.field)
        assert isinstance(column, StateField) and column.graph is graph
        assert column.default == graph.initial
        assert [value for value, _ in column.choices or ()] == list(graph.states.values)
        # The database and the migrations see a CharField: binding it changed no schema.
        assert column.deconstruct()[1] == "django.db.models.CharField"


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


def test_transition_refuses_a_move_of_another_kind_s_graph(make_judgement):
    """A delivery's `retry` (pending -> pending) names states a judgement does not have,
    and a judgement's `cancel` would write `error` into a delivery: both refused, because
    the rows' column is bound to another graph."""
    judgement = make_judgement()
    delivery = WebhookDelivery.objects.create(
        judgement=judgement, event=webhooks.FINISHED, url="https://hooks.example.com/", payload={}
    )
    deliveries = WebhookDelivery.objects.filter(pk=delivery.pk)
    with pytest.raises(ValueError, match="not bound to JudgementStates"):
        transition(deliveries, JudgementStates.cancel, Status.ERROR, worker="w", told=[])
    with pytest.raises(ValueError, match="not bound to DeliveryStates"):
        transition(
            Judgement.objects.filter(pk=judgement.pk), DeliveryStates.give_up,
            DeliveryStatus.FAILED, worker="w", told=[],
        )  # fmt: skip
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.PENDING
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


def status_of(row: models.Model) -> str:
    return str(type(row)._default_manager.filter(pk=row.pk).values_list("status", flat=True)[0])


def test_a_state_set_on_a_row_then_saved_is_refused(make_judgement):
    """The issue's bypass, `delivery.status = target; delivery.save(update_fields=[...])`,
    and a whole save of a changed (or stale) row: a save never writes a state."""
    judgement = make_judgement()
    delivery = WebhookDelivery.objects.create(
        judgement=judgement, event=webhooks.FINISHED, url="https://hooks.example.com/", payload={}
    )
    delivery.status = DeliveryStatus.DELIVERED
    with pytest.raises(ValueError, match="save\\(\\) would write status"), transaction.atomic():
        delivery.save(update_fields=["status", "finished_at"])
    judgement.status = Status.APPROVED
    with pytest.raises(ValueError, match="save\\(\\) would write status"), transaction.atomic():
        judgement.save()
    assert (status_of(delivery), status_of(judgement)) == (DeliveryStatus.PENDING, Status.IDLE)
    judgement.title = "a title is the row's own"
    judgement.save(update_fields=["title"])  # naming what it changes, it saves
    assert Judgement.objects.get(pk=judgement.pk).title == "a title is the row's own"


def test_a_state_written_by_update_is_refused(make_judgement):
    judgement = make_judgement()
    with pytest.raises(ValueError, match="written by transition"), transaction.atomic():
        Judgement.objects.filter(pk=judgement.pk).update(status=Status.APPROVED)
    with (
        pytest.raises(ValueError, match="written by transition"),
        transaction.atomic(),
    ):  # beside other fields
        Judgement.objects.filter(pk=judgement.pk).update(status=Status.ERROR, error_message="x")
    assert status_of(judgement) == Status.IDLE


def test_a_state_written_by_bulk_update_is_refused(make_judgement):
    rows = [make_judgement(), make_judgement()]
    for row in rows:
        row.status = Status.REJECTED
    with pytest.raises(ValueError, match="written by transition"), transaction.atomic():
        Judgement.objects.bulk_update(rows, ["status"])
    assert [status_of(row) for row in rows] == [Status.IDLE, Status.IDLE]


def test_a_row_made_in_a_later_state_is_refused(make_judgement, user):
    """Made is made in the initial state: a row that never moved has no later state."""
    judgement = make_judgement()
    with pytest.raises(ValueError, match="is made 'unsent', not 'sent'"), transaction.atomic():
        Notification.objects.create(judgement=judgement, user=user, status="sent")
    with (
        pytest.raises(ValueError, match="is made 'pending', not 'delivered'"),
        transaction.atomic(),
    ):
        WebhookDelivery.objects.bulk_create(
            [
                WebhookDelivery(
                    judgement=judgement, event=webhooks.FINISHED, url="https://h.example.com/",
                    payload={}, status=DeliveryStatus.DELIVERED,
                )
            ]
        )  # fmt: skip
    assert not Notification.objects.exists() and not WebhookDelivery.objects.exists()


def test_a_state_written_by_raw_sql_is_refused(make_judgement):
    """No ORM hook sees raw SQL: the suite's watch on every connection does, so app code
    that writes a state column by hand fails in every test that runs it."""
    judgement = make_judgement()
    with (
        pytest.raises(StateWrittenPastItsGraph),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            f"update {Judgement._meta.db_table} set title = %s, status = %s where id = %s",
            ["t", "approved", judgement.pk],
        )
    with (
        pytest.raises(StateWrittenPastItsGraph),
        transaction.atomic(),
    ):  # the ORM's own way round the QuerySet
        Judgement._base_manager.filter(pk=judgement.pk).update(status=Status.ERROR)
    assert len(BYPASSES) == 2
    BYPASSES.clear()  # seen here: the test's end has nothing more to fail on
    assert status_of(judgement) == Status.IDLE
    with connection.cursor() as cursor:  # what is not a write of a state passes
        cursor.execute(
            f'UPDATE "{Judgement._meta.db_table}" SET "title" = %s WHERE "status" = %s',
            ["read, not written", Status.IDLE],
        )
    assert Judgement.objects.get(pk=judgement.pk).title == "read, not written"


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
    assert lifecycle.claim("w1", Judgement.objects.filter(pk=level.pk), 1) == [level.pk]
    assert lifecycle.finish(level.pk, "w1", votes) == Status.APPROVED
    level.refresh_from_db()
    following = level.next_level
    assert level.escalated and level.contested and following is not None
    assert (following.status, following.level, following.panel) == (Status.IDLE, 2, strong)


def test_a_cancelled_run_s_judgements_go_through_their_graph(fake_llm, user):
    suite = suites.import_suite(name="Gate cases", description="", owner=user, data=SUITE)
    run = start(suite, user)
    ended = lifecycle.cancel_run(run, user)
    assert ended
    assert set(run.judgements.values_list("status", flat=True)) == {Status.ERROR}


def test_deliveries_and_emails_go_through_their_graphs(make_judgement, user, settings):
    settings.MAGI_WEBHOOK_HOSTS = []  # the host no longer allowed: the delivery gives up
    settings.EMAIL_HOST = ""  # nobody to send it to: the email is done
    judgement = make_judgement()
    delivery = WebhookDelivery.objects.create(
        judgement=judgement, event=webhooks.FINISHED, url="https://hooks.example.com/", payload={}
    )
    email = Notification.objects.create(judgement=judgement, user=user)
    claimed = webhooks.claim_one("w1")
    assert claimed is not None
    assert webhooks.attempt(*claimed, "w1") == DeliveryStatus.FAILED
    assert notifications.send_due("w1") == 0
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
    slack_outbox.queue()
    reviews.confirm(early.pk, setup.people["bob"], "Before Slack.")
    slack_outbox.deliver("w1")
    reviews.confirm(held.pk, setup.people["bob"], "In Slack.")
    slack_outbox.deliver("w1")
    states = dict(SlackMessage.objects.values_list("judgement_id", "status"))
    assert states == {held.pk: "posted", early.pk: "dropped"}
    assert len(slack_api.calls("chat.update")) == 1


def test_the_architecture_page_draws_the_graphs_as_the_code_declares_them():
    page = (Path(__file__).resolve().parents[3] / "docs" / "architecture.md").read_text()
    section = page.split("## State graphs", 1)[1].split("\n## ", 1)[0]
    drawn = section.split("```\n", 1)[1].split("```", 1)[0]
    declared = [line for graph in stateful_models().values() for line in graph.drawing()]
    assert drawn.splitlines() == declared, "\n".join(["Copy into the page:", *declared])
