import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.sessions.models import Session
from django.test import Client

from judgements.engine.runner import EngineRunner
from judgements.models import Judgement, Panel
from judgements.web.consumers import CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED
from magi_site.asgi import application
from tests.support.sessions import session_cookie

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("no_in_process_engine"),
]


async def connect(
    judgement_id: int,
    user=None,
    origin: bytes = b"http://localhost",
    cookie: str | None = None,
    query: str = "",
):
    # As a browser sends them: the page's origin and the host the socket is opened on.
    headers = [(b"origin", origin), (b"host", b"localhost")]
    if user is not None:
        cookie = cookie or await session_cookie(user)
        headers.append((b"cookie", cookie.encode()))
    communicator = WebsocketCommunicator(
        application, f"/ws/judgements/{judgement_id}/{query}", headers=headers
    )
    connected, code = await communicator.connect(timeout=5)
    return communicator, connected, code


async def receive_until(communicator, text: str, limit: int = 50) -> str:
    for _ in range(limit):
        html = await communicator.receive_from(timeout=5)
        if text in html:
            return html
    raise AssertionError(f"{text!r} never arrived")


async def test_it_sends_the_current_state_on_connect(make_judgement, user):
    judgement = await sync_to_async(make_judgement)(creator=user)
    await EngineRunner().run_judgement(judgement.pk)
    communicator, connected, _ = await connect(judgement.pk, user)
    assert connected
    html = await communicator.receive_from(timeout=5)
    assert 'id="judgement-status"' in html and ">Approved</div>" in html
    for position in (1, 2, 3):
        assert f'id="agent-box-{position}"' in html
    assert html.count('data-state="approve"') == 3
    assert "Panel's decision: Approved" in html
    await communicator.disconnect()


REVIEW_PART = "/review/"


async def test_a_page_drawn_before_the_end_fetches_its_review_forms_once(
    fake_llm, make_judgement, user
):
    """Only the first state after the end brings the review part (fetched over HTTP for its
    CSRF token); sent again it would empty a reason being typed."""
    judgement = await sync_to_async(make_judgement)(creator=user)
    fake_llm.hold()
    run = asyncio.create_task(EngineRunner().run_judgement(judgement.pk))
    drawn_running, _, _ = await connect(judgement.pk, user, query="?rendered=running")
    assert REVIEW_PART not in await drawn_running.receive_from(timeout=5)
    fake_llm.release()
    assert await run
    ended = await receive_until(drawn_running, "Panel's decision: Approved")
    assert f'hx-get="/judgements/{judgement.pk}{REVIEW_PART}"' in ended
    await drawn_running.disconnect()
    # A page drawn after the end has its forms already; a reconnect does not resend them.
    drawn_ended, _, _ = await connect(judgement.pk, user, query="?rendered=ended")
    assert REVIEW_PART not in await drawn_ended.receive_from(timeout=5)
    await drawn_ended.disconnect()


async def test_it_pushes_each_change_as_the_engine_decides(fake_llm, make_judgement, user):
    judgement = await sync_to_async(make_judgement)(creator=user)
    fake_llm.hold()
    communicator, connected, _ = await connect(judgement.pk, user)
    assert connected
    assert ">Idle</div>" in await communicator.receive_from(timeout=5)
    run = asyncio.create_task(EngineRunner().run_judgement(judgement.pk))
    thinking = await receive_until(communicator, 'data-state="thinking"')
    assert ">Judging</div>" in thinking and thinking.count("THINKING") == 3
    fake_llm.release()
    await receive_until(communicator, ">Approved</div>")
    assert await run
    await communicator.disconnect()


async def test_it_renders_model_text_escaped(fake_llm, make_judgement, user):
    fake_llm.script("model-a", reason="<script>alert(1)</script>")
    judgement = await sync_to_async(make_judgement)(creator=user)
    await EngineRunner().run_judgement(judgement.pk)
    communicator, _, _ = await connect(judgement.pk, user)
    html = await communicator.receive_from(timeout=5)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    await communicator.disconnect()


async def test_it_refuses_anonymous_sockets(make_judgement):
    judgement = await sync_to_async(make_judgement)()
    _, connected, code = await connect(judgement.pk)
    assert not connected and code == CLOSE_UNAUTHENTICATED


async def test_it_refuses_another_users_judgement(make_judgement, user, other_user):
    judgement = await sync_to_async(make_judgement)(creator=user)
    _, connected, code = await connect(judgement.pk, other_user)
    assert not connected and code == CLOSE_NOT_FOUND


async def test_it_refuses_a_missing_judgement(user):
    _, connected, code = await connect(999_999, user)
    assert not connected and code == CLOSE_NOT_FOUND


async def test_it_refuses_a_foreign_origin(make_judgement, user):
    judgement = await sync_to_async(make_judgement)(creator=user)
    _, connected, _ = await connect(judgement.pk, user, origin=b"http://evil.example")
    assert not connected


async def test_it_resyncs_a_page_whose_events_were_lost(fake_llm, make_judgement, user, settings):
    settings.MAGI_WS_RESYNC_SECONDS = 0.1
    judgement = await sync_to_async(make_judgement)(creator=user)
    communicator, connected, _ = await connect(judgement.pk, user)
    assert connected
    assert ">Idle</div>" in await communicator.receive_from(timeout=5)
    # What a Redis restart does: the channel layer forgets who was in the group.
    layer = get_channel_layer()
    assert isinstance(layer, InMemoryChannelLayer)
    for channel in list(layer.groups.get(f"judgement-{judgement.pk}", {})):
        await layer.group_discard(f"judgement-{judgement.pk}", channel)
    await EngineRunner().run_judgement(judgement.pk)
    await receive_until(communicator, ">Approved</div>")
    await communicator.disconnect()


@sync_to_async
def log_out(cookie: str, url: str = "/accounts/logout/") -> int:
    client = Client()
    name, _, value = cookie.partition("=")
    client.cookies[name] = value
    return client.post(url).status_code


@sync_to_async
def forget_session(cookie: str) -> None:
    """What an expired or flushed session looks like, without any message to the socket."""
    Session.objects.filter(session_key=cookie.partition("=")[2]).delete()


async def expect_closed(communicator, code: int) -> None:
    message = await communicator.receive_output(timeout=5)
    assert message == {"type": "websocket.close", "code": code}, message


@pytest.mark.parametrize("logout_url", ["/accounts/logout/", "/admin/logout/"])
async def test_logging_out_closes_the_sessions_open_sockets(make_judgement, user, logout_url):
    judgement = await sync_to_async(make_judgement)(creator=user)
    cookie = await session_cookie(user)
    communicator, connected, _ = await connect(judgement.pk, user, cookie=cookie)
    assert connected
    assert ">Idle</div>" in await communicator.receive_from(timeout=5)
    assert await log_out(cookie, logout_url) == 302
    await expect_closed(communicator, CLOSE_UNAUTHENTICATED)


async def test_logging_out_leaves_the_users_other_sessions_open(make_judgement, user):
    judgement = await sync_to_async(make_judgement)(creator=user)
    leaving, staying = await session_cookie(user), await session_cookie(user)
    closed, _, _ = await connect(judgement.pk, user, cookie=leaving)
    kept, _, _ = await connect(judgement.pk, user, cookie=staying)
    await closed.receive_from(timeout=5)
    await kept.receive_from(timeout=5)
    assert await log_out(leaving) == 302
    await expect_closed(closed, CLOSE_UNAUTHENTICATED)
    await EngineRunner().run_judgement(judgement.pk)
    await receive_until(kept, ">Approved</div>")
    await kept.disconnect()


async def test_a_socket_whose_session_is_gone_gets_no_more_updates(make_judgement, user):
    judgement = await sync_to_async(make_judgement)(creator=user)
    cookie = await session_cookie(user)
    communicator, connected, _ = await connect(judgement.pk, user, cookie=cookie)
    assert connected
    assert ">Idle</div>" in await communicator.receive_from(timeout=5)
    # No logout message reaches the socket (a lost event): the next update finds out.
    await forget_session(cookie)
    await EngineRunner().run_judgement(judgement.pk)
    await expect_closed(communicator, CLOSE_UNAUTHENTICATED)


@sync_to_async
def change_password(user) -> None:
    """As an admin or `manage.py changepassword` does it: every session logged in with
    the old password stops logging the user in."""
    user.set_password("a different horse")
    user.save()


@sync_to_async
def deactivate(user) -> None:
    user.is_active = False
    user.save()


@pytest.mark.parametrize("change", [change_password, deactivate], ids=["password", "inactive"])
async def test_a_socket_closes_once_its_session_no_longer_logs_the_user_in(
    make_judgement, user, change
):
    judgement = await sync_to_async(make_judgement)(creator=user)
    communicator, connected, _ = await connect(judgement.pk, user)
    assert connected
    assert ">Idle</div>" in await communicator.receive_from(timeout=5)
    await change(user)
    await EngineRunner().run_judgement(judgement.pk)
    await expect_closed(communicator, CLOSE_UNAUTHENTICATED)


async def test_the_resync_closes_a_socket_whose_session_is_gone(make_judgement, user, settings):
    settings.MAGI_WS_RESYNC_SECONDS = 0.05
    judgement = await sync_to_async(make_judgement)(creator=user)
    cookie = await session_cookie(user)
    communicator, connected, _ = await connect(judgement.pk, user, cookie=cookie)
    assert connected
    assert ">Idle</div>" in await communicator.receive_from(timeout=5)
    await forget_session(cookie)  # and no engine event follows
    await expect_closed(communicator, CLOSE_UNAUTHENTICATED)


async def test_a_story_s_first_page_follows_each_later_level_live(
    fake_llm, make_panel, make_judgement, user
):
    """The first judgement's page shows each later level as its own triangle, in order
    (docs/escalation.md), and its socket follows those levels: the level's own events
    redraw it (nothing else would: the first level has ended)."""
    fake_llm.script("model-c", votes="RRR")  # Casper rejects: split 2-1, contested
    fake_llm.script("model-d")
    cheap = await sync_to_async(make_panel)(name="Cheap")
    strong = await sync_to_async(make_panel)(name="Strong", models=("model-d",) * 3)
    await Panel.objects.filter(pk=cheap.pk).aupdate(escalate_to=strong)
    root = await sync_to_async(make_judgement)(panel="Cheap", agents=None, creator=user)
    assert await EngineRunner().run_judgement(root.pk)
    second = await Judgement.objects.aget(root=root)
    communicator, connected, _ = await connect(root.pk, user)
    assert connected
    drawn = await communicator.receive_from(timeout=5)
    assert 'id="level-2-agent-box-3"' in drawn and 'data-level="2" data-status="idle"' in drawn
    fake_llm.gate.close()
    run = asyncio.create_task(EngineRunner().run_judgement(second.pk))
    await sync_to_async(fake_llm.gate.wait_parked)(("model-d", 1))
    thinking = await receive_until(communicator, 'data-level="2" data-status="judging"')
    assert thinking.split('id="level-2-triangle"', 1)[1].count('data-thinking="true"') == 3
    fake_llm.gate.open()
    assert await run
    decided = await receive_until(communicator, 'data-level="2" data-status="approved"')
    assert decided.split('id="level-2-triangle"', 1)[1].count('data-state="approve"') == 3
    await communicator.disconnect()


async def test_every_level_s_page_follows_the_story_s_later_levels_live(
    fake_llm, make_panel, make_judgement, user
):
    """Issue 70: the first page's "last level" link stayed on level 2 after level 3
    started, until a reload; and a middle level's page did not follow the levels after
    it. Cheap → Middle → Strong, the first two contested: once level 3 starts, the first
    page names it where the story is reviewed, and level 2's page shows the story's
    status moving with level 3 while saying its own decision."""
    fake_llm.script("model-c", votes="RRR")  # Cheap splits 2-1: contested
    fake_llm.script("model-d")
    fake_llm.script("model-e", votes="RRR")  # Middle splits 2-1: contested
    fake_llm.script("model-f")
    cheap = await sync_to_async(make_panel)(name="Cheap")
    middle = await sync_to_async(make_panel)(
        name="Middle", models=("model-d", "model-d", "model-e")
    )
    strong = await sync_to_async(make_panel)(name="Strong", models=("model-f",) * 3)
    await Panel.objects.filter(pk=cheap.pk).aupdate(escalate_to=middle)
    await Panel.objects.filter(pk=middle.pk).aupdate(escalate_to=strong)
    root = await sync_to_async(make_judgement)(panel="Cheap", agents=None, creator=user)
    assert await EngineRunner().run_judgement(root.pk)
    second = await Judgement.objects.aget(root=root, level=2)
    first_page, connected, _ = await connect(root.pk, user)
    assert connected
    drawn = await first_page.receive_from(timeout=5)
    assert "at its last level: <a" in drawn and "Level 2: Middle</a>.</p>" in drawn
    assert await EngineRunner().run_judgement(second.pk)
    third = await Judgement.objects.aget(root=root, level=3)
    moved = await receive_until(first_page, "Level 3: Strong</a>.</p>")
    assert f'<a href="/judgements/{third.pk}/">Level 3: Strong</a>.</p>' in moved
    second_page, connected, _ = await connect(second.pk, user)
    assert connected
    drawn = await second_page.receive_from(timeout=5)
    assert 'data-status="idle"' in drawn.split('id="judgement-status"', 1)[1].split(">", 1)[0]
    fake_llm.gate.close()
    run = asyncio.create_task(EngineRunner().run_judgement(third.pk))
    await sync_to_async(fake_llm.gate.wait_parked)(("model-f", 1))
    judging = await receive_until(second_page, 'data-status="judging" data-panel-status')
    assert "this level decided Approved and escalated" in judging
    fake_llm.gate.open()
    assert await run
    decided = await receive_until(second_page, 'data-status="approved" data-panel-status')
    assert 'data-in-force-level="3"' in decided
    await first_page.disconnect()
    await second_page.disconnect()
