"""Loaded as a pytest plugin (see pyproject) before Django's settings are read, so the
suite runs on a fresh machine with no environment at all."""

import os

import pytest

os.environ.setdefault("SECRET_KEY", "magi-test-secret-key-not-for-production")
# The audit log's signing key (docs/evidence.md): a fixed one, so no test writes var/.
os.environ.setdefault("MAGI_AUDIT_SIGNING_KEY", "bWFnaS10ZXN0LWF1ZGl0LWtleS1ub3QtZm9yLXVzZSE")
# Tests configure their own providers; the developer's real keys must not leak in.
for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "REDIS_URL", "DATABASE_URL", "MAGI_MODELS"):
    os.environ.pop(name, None)


# What a test needs beyond Python, told by the fixtures it uses: `make test-fast` leaves
# out the tests that drive Chromium, start PostgreSQL or Redis, load a real model or
# fuzz the live API for a minute.
NEEDS = {
    "browser": {"browser", "page", "new_context", "log_in_as", "live_magi"},
    "postgres": {"postgres", "database", "processes"},
    "redis": {"redis_server", "redis_url", "processes"},
}
# Files that start a llama.cpp server on a real GGUF model (minutes on two cores).
REAL_MODEL_FILES = {
    "test_bundled_file.py",
    "test_servers.py",
    "test_warm_rules.py",
    "test_installed_rules.py",
}
# Files that run schemathesis against a live MAGI (a minute of a core's time).
FUZZ_FILES = {"test_schema_contract.py"}


def pytest_configure(config):
    for marker, why in (
        ("browser", "drives Debian's Chromium through Playwright"),
        ("postgres", "starts a PostgreSQL server"),
        ("redis", "starts a Redis server"),
        ("real_model", "serves a real GGUF model with llama.cpp"),
        ("fuzz", "fuzzes the live API with schemathesis"),
        ("one_at_a_time", "needs one of a kind: runs in make test's one-at-a-time session"),
    ):
        config.addinivalue_line("markers", f"{marker}: {why}")


# What needs one of a kind (the browser session's live site and its pooled users, the
# PostgreSQL and Redis servers, the llama.cpp server, the fuzzer's minute of a core) is
# marked `one_at_a_time`: `make test` (scripts/run_tests.py) runs those in one pytest
# session, one test at a time in the order collected, and every other test in a second
# session beside it.
ONE_AT_A_TIME = ("browser", "postgres", "redis", "real_model", "fuzz")


# As each test is collected, so that `-m` selects by these marks.
def pytest_itemcollected(item):
    used = set(getattr(item, "fixturenames", ()))
    for marker, fixtures in NEEDS.items():
        if used & fixtures:
            item.add_marker(getattr(pytest.mark, marker))
    if "browser" in item.path.parts or item.path.name.endswith("_browser.py"):
        item.add_marker(pytest.mark.browser)
    if item.path.name in REAL_MODEL_FILES:
        item.add_marker(pytest.mark.real_model)
    if item.path.name in FUZZ_FILES:
        item.add_marker(pytest.mark.fuzz)
    if any(item.get_closest_marker(marker) for marker in ONE_AT_A_TIME):
        item.add_marker(pytest.mark.one_at_a_time)
