"""Real PostgreSQL and Redis servers, real worker and web processes, for the fault tests.

One throwaway PostgreSQL cluster and one Redis server for the whole session, each on a
free loopback port in its own temporary directory; a fresh database (from a migrated
template) and an empty Redis for every test. Needs Debian's `postgresql` and
`redis-server` packages. As root, PostgreSQL runs as the `postgres` user (initdb refuses
root).
"""

import shutil

import pytest

from tests.support.services import MODELS, Processes, Redis, database, postgres  # noqa: F401 (fixtures)

# --- Redis --------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_server():
    server = Redis().start()
    yield server
    server.stop()
    shutil.rmtree(server.dir, ignore_errors=True)


@pytest.fixture
def redis_url(redis_server):
    if redis_server.process is None:
        redis_server.start()
    redis_server.flush()
    return redis_server.url


# --- processes ----------------------------------------------------------------------------


@pytest.fixture
def processes(database, redis_url, llm_server, tmp_path):  # noqa: F811 (the fixture)
    procs = Processes(database, redis_url, llm_server.base_url, tmp_path)
    yield procs
    procs.stop_all()


@pytest.fixture
def fake_llm(llm_server):
    llm_server.reset()
    for model in MODELS:
        llm_server.script(model)
    yield llm_server
    llm_server.reset()


# --- the database, as the test sees it ------------------------------------------------------
