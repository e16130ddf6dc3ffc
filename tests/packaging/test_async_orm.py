"""Async code reaches the ORM through one helper, `db_call` (judgements/infrastructure/
database.py): a read queued on the wrong thread held /healthz for seconds once, and a
retry while the database is away lives only there. This reads every module of
`judgements/` and fails on an async QuerySet or model method anywhere else."""

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "judgements"
THE_HELPER = APP / "infrastructure" / "database.py"
# Django's async ORM API (QuerySet and Model methods with an "a" in front).
ASYNC_ORM = {
    "aaggregate", "abulk_create", "abulk_update", "acontains", "acount", "acreate",
    "adelete", "aearliest", "aexists", "aexplain", "afirst", "aget", "aget_or_create",
    "ain_bulk", "aiterator", "alast", "alatest", "arefresh_from_db", "asave", "aupdate",
    "aupdate_or_create",
}  # fmt: skip
# An `async for` over an expression that names one of these is iterating a QuerySet.
QUERYSET_WORDS = (".objects", ".filter(", ".exclude(", ".order_by(", ".values_list(", ".all(")


def async_orm_uses(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ASYNC_ORM
        ):
            found.append(f"line {node.lineno}: .{node.func.attr}()")
        iterated = (
            node.iter
            if isinstance(node, ast.AsyncFor)
            else node.generators[0].iter
            if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp)
            and node.generators[0].is_async
            else None
        )
        if iterated is not None and any(w in ast.unparse(iterated) for w in QUERYSET_WORDS):
            found.append(f"line {iterated.lineno}: async for over {ast.unparse(iterated)}")
    return found


def test_only_the_helper_calls_the_async_orm():
    found = {
        str(path.relative_to(APP)): uses
        for path in sorted(APP.rglob("*.py"))
        if path != THE_HELPER and (uses := async_orm_uses(path.read_text()))
    }
    assert found == {}


def test_the_check_finds_each_kind_of_use():
    assert async_orm_uses("async def f():\n    await Judgement.objects.aget(pk=1)\n")
    assert async_orm_uses("async def f():\n    await judgement.asave()\n")
    assert async_orm_uses(
        "async def f():\n    async for j in Judgement.objects.all():\n        pass\n"
    )
    assert async_orm_uses("async def f():\n    return [p async for p in qs.values_list('pk')]\n")
    assert not async_orm_uses(
        "async def f():\n    async for _ in events.changes(1, 2):\n        pass\n"
    )
