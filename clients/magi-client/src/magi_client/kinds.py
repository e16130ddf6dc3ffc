"""Where `magi export` reads each kind of configuration, as the server registers
them: written by judgements/api/config_format.py from its registry
(judgements/api/resources.py), never by hand; tests/judgements/api/test_config_format.py
fails when this file differs. Each kind: the path of its list, and the key of the list in
its answer."""

LISTS: dict[str, tuple[str, str]] = {
    "panel": ("/api/panels/", "panels"),
    "budget": ("/api/budgets/", "budgets"),
    "team": ("/api/teams/", "teams"),
    "suite": ("/api/suites/", "suites"),
}
