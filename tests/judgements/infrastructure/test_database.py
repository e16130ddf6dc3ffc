"""`db_call` (judgements/infrastructure/database.py) keeps the signature of the function it
wraps, so the type checker sees every database call from async code as that function: its
arguments checked, its answer typed, not `Any`. Its behaviour (retries while the database
is away, a request's connections) is tested in durability/ and packaging/test_async_orm.py.

The checker runs here on a few calls through each of db_call's ways (the engine's, a
request's, an executor's) that are wrong in the ways a typed call must catch."""

from mypy import api

SNIPPET = """
from concurrent.futures import ThreadPoolExecutor

from judgements.infrastructure.database import db_call

def stored(judgement_id: int, reason: str = "") -> str:
    return reason

async def caller(pool: ThreadPoolExecutor) -> None:
    fine: str = await db_call(stored)(1, reason="kept")
    answer: int = await db_call(stored)(1)
    await db_call(stored, for_request=True)("1")
    await db_call(stored, executor=pool)(1, because="no such argument")
"""


def type_errors(source: str) -> list[str]:
    """mypy's error lines for `source` alone (what it imports is read, not reported)."""
    out, _, _ = api.run(
        [
            "--config-file=",
            "--no-incremental",
            "--follow-imports=silent",
            "--ignore-missing-imports",
            "--python-version=3.11",
            "--no-error-summary",
            "--hide-error-context",
            "-c",
            source,
        ]
    )
    return [line.split(": error: ", 1)[1] for line in out.splitlines() if ": error: " in line]


def test_a_database_call_is_typed_as_the_function_it_calls():
    assert type_errors(SNIPPET) == [
        'Incompatible types in assignment (expression has type "str", variable has type '
        '"int")  [assignment]',
        'Argument 1 has incompatible type "str"; expected "int"  [arg-type]',
        'Unexpected keyword argument "because"  [call-arg]',
    ]
