"""Rows built once for a module and given to each of its tests afresh.

An evaluated run (a panel's judgements of tens of cases, each three rounds on the suite's
fake server through the real engine) takes half a minute; tests that all start from the
same run (same panel, cases and scripted answers) build it once, in a module-scoped
fixture, and each loads its own copy of the rows (Django's dumpdata and loaddata). A
test's changes go when the database is flushed after it (transactional tests), so no
test sees another's.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from django.core import serializers
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection, transaction
from django.db.models import Model
from django.test import override_settings

from tests.support.llm_server import FakeLLM, provider_settings
from tests.support.states import BYPASSES

# What the evaluations write: MAGI's own rows (and the users who own them, where a test
# builds as one).
APPS = ("judgements",)

T = TypeVar("T")


@contextmanager
def serving(server: FakeLLM) -> Iterator[FakeLLM]:
    """The fake server as the only provider, scripts cleared, outside any test (the
    `fake_llm` fixture's settings, for a fixture wider than a test)."""
    server.reset()
    try:
        with override_settings(**provider_settings(server)):
            yield server
    finally:
        server.reset()


def build_once(blocker, path: Path, build: Callable[[], T], apps: tuple[str, ...] = APPS) -> T:
    """Run `build` on the empty test database, dump what it stored in `apps` to `path`,
    and empty the database again (the first test starts from nothing, as every test
    does). `blocker` is pytest-django's django_db_blocker."""
    with blocker.unblock():
        try:
            built = build()
            # Nothing written past its graph while building: what the suite's autouse
            # watch asks of a test, asked of what every test here starts from.
            assert BYPASSES == [], f"states written past their graphs: {BYPASSES}"
            call_command("dumpdata", *apps, output=str(path), verbosity=0)
        finally:
            call_command("flush", interactive=False, verbosity=0)
    return built


def load(path: Path) -> None:
    """This test's own copy of the rows `build_once` stored, inserted as loaddata inserts
    them (foreign keys checked once all are in, sequences moved past them) but by INSERT
    alone: loaddata tries an UPDATE of each row first, and the suite's watch refuses an
    UPDATE of a state column that `transition` did not send (tests/support/states.py).
    These rows reached their states through `transition` when they were built."""
    models: set[type[Model]] = set()
    with transaction.atomic():
        with connection.constraint_checks_disabled():
            for found in serializers.deserialize("json", path.read_text()):
                found.save(force_insert=True)
                models.add(type(found.object))
        connection.check_constraints(table_names=[model._meta.db_table for model in models])
        with connection.cursor() as cursor:
            for statement in connection.ops.sequence_reset_sql(no_style(), list(models)):
                cursor.execute(statement)
