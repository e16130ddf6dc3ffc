import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.contrib.auth import get_user_model
from django.db.backends.signals import connection_created

from judgements.llm.local import files as local_files
from judgements.models import Judgement
from tests.support.cases import DEFAULT_MODELS, case_for, saved_panel
from tests.support.llm_server import FakeLLM, provider_settings
from tests.support.states import BYPASSES, refuse_states_written_past_their_graphs


def watch_states(connection, **kwargs):
    """Every connection the suite opens, in any thread, refuses a state column written
    past its graph (tests/support/states.py): raw SQL has no other hook."""
    if refuse_states_written_past_their_graphs not in connection.execute_wrappers:
        connection.execute_wrappers.append(refuse_states_written_past_their_graphs)


connection_created.connect(watch_states, dispatch_uid="tests.watch_states")


@pytest.fixture(autouse=True)
def no_state_written_past_its_graph():
    """Fails a test whose code wrote a state past its graph, even where that code caught
    the refusal (a worker logs what failed and goes on)."""
    BYPASSES.clear()
    yield
    written, BYPASSES[:] = list(BYPASSES), []
    assert written == [], f"states written past their graphs: {written}"


@pytest.fixture(scope="session")
def llm_server():
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture
def fake_llm(llm_server, settings):
    """The suite's OpenAI-compatible server as this deployment's only remote provider."""
    llm_server.reset()
    for model in DEFAULT_MODELS:
        llm_server.script(model)
    for name, value in provider_settings(llm_server).items():
        setattr(settings, name, value)
    yield llm_server
    llm_server.reset()


@pytest.fixture
def make_judgement(fake_llm, db, settings):
    """A queued judgement whose three agents use the given scripted models, started the
    one way judgements start. Tests build many for one user: the per-user limits are off
    unless a test sets them (they are tested where they bite)."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0

    def make(models=DEFAULT_MODELS, creator=None, **overrides) -> Judgement:
        from judgements.intake.json_cases import validate_case
        from judgements.intake.start import Submission, submit

        # A key given as None is left out (agents=None with a saved panel's name). Checked
        # as the operator (None) would: a test's creator may name any saved panel.
        case = {k: v for k, v in case_for(models, **overrides).items() if v is not None}
        return submit([validate_case(case, None)], Submission(creator=creator)).judgement

    return make


@pytest.fixture
def make_panel(fake_llm, db):
    """A saved panel of `owner` (None: an example), validated like any, whose agents use
    the given scripted models."""

    def make(name="Travel desk", owner=None, models=DEFAULT_MODELS, description=""):
        return saved_panel(name=name, owner=owner, models=models, description=description)

    return make


@pytest.fixture
def example_panels(fake_llm, db) -> dict:
    """The shipped example panels by name, their bundled model served by the fake server."""
    from judgements.configuration import saving
    from judgements.models import Panel

    fake_llm.script(local_files.BUNDLED_MODEL_NAME)
    saving.ensure_examples()
    return {panel.name: panel for panel in Panel.objects.filter(owner=None)}


@pytest.fixture
def runner():
    """The engine of one process, as a worker runs it; tests drive it step by step."""
    from judgements.engine.runner import EngineRunner

    return EngineRunner(worker_id="test-worker")


@pytest.fixture
def logged_in(client, user):
    """The test client, logged in as `user`."""
    client.force_login(user)
    return client


@pytest.fixture
def admin_user(db):
    """pytest-django's superuser (admin_client signs in as them), made as `manage.py
    createsuperuser` makes one: audited, so a log verified after it is clean."""
    from judgements.configuration import people

    made = get_user_model().objects.create_superuser("admin", "admin@example.com", "password")
    people.record_made(made, None, "tests")
    return made


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("ada", password="correct horse battery")


@pytest.fixture
def other_user(db):
    return get_user_model().objects.create_user("bob", password="correct horse battery")


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # Real hashing costs a quarter second per user; the suite makes many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    """Every test starts with an empty in-process channel layer: wake-ups another test
    left there (an evaluation run wakes the engine when it commits) must not be served
    as this test's."""
    layer = get_channel_layer()
    if isinstance(layer, InMemoryChannelLayer):
        # On a thread of its own: a browser test's Playwright runs an event loop in this
        # one, where async_to_sync refuses to run.
        with ThreadPoolExecutor(max_workers=1) as thread:
            thread.submit(asyncio.run, layer.flush()).result()


@pytest.fixture
async def empty_engine_channel():
    """Wake-ups left on the in-memory layer by one test must not start another's work."""
    await get_channel_layer().flush()
    yield
    await get_channel_layer().flush()


@pytest.fixture
def no_in_process_engine(settings):
    """Websocket tests drive the engine themselves, in the test's own event loop."""
    settings.MAGI_ENGINE_IN_PROCESS = False


@pytest.fixture(autouse=True)
def static_files_found_on_request(settings):
    """Every test client loads the middleware afresh, and WhiteNoise without autorefresh
    walks every static file as it loads (a third of a quick test's time). Here it finds
    a file when one is asked for; the daphne-served tests keep the production lookup."""
    settings.WHITENOISE_AUTOREFRESH = True
