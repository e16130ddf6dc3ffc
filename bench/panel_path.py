"""The path of one panel edit through the code, as a reader walks it.

    .venv/bin/python bench/panel_path.py [--calls] [--json] [--escalating]

Makes a user and their saved panel on a fresh SQLite database, then posts the panel's
edit form as the user would (renamed, its agents' criteria changed) and follows the panel
from the view (web/panel_pages.py `panel_edit`) to its row: tests/support/panel_path.py
says how. Prints the figure docs/architecture.md publishes (the files the edit passes
through, and how often it comes back to one it left), the stops, and how often each
file is entered; `--calls` prints every stop (an entry into its file marked `>`), `--json`
the stops as JSON (tests/packaging/test_panel_path.py reads them); `--escalating` posts
the edit naming another of the owner's panels as the one its unkept verdicts go to
(docs/escalation.md), so the walk passes the escalation rule too.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import bench_site, panel_path  # noqa: E402

MODELS = ("path-a", "path-b", "path-c")


def saved_panel() -> int:
    """A user's saved panel, saved the one way panels are saved."""
    from django.contrib.auth.models import User

    from judgements.configuration import saving

    owner = User.objects.create_user("owner", password="walked-pw")
    agents = [
        {"name": name, "model": model, "criteria": f"{name} approves only safe plans."}
        for name, model in zip(("Melchior", "Balthasar", "Casper"), MODELS, strict=True)
    ]
    from judgements.models import Panel

    made = saving.save_panel(owner=owner, name="Desk", description="", agents=agents)
    Panel.objects.filter(pk=made.pk).update(id=panel_path.PANEL_ID)
    return panel_path.PANEL_ID


def stronger_panel() -> int:
    """Another panel of the same owner, for the edit to escalate to."""
    from django.contrib.auth.models import User

    from judgements.configuration import saving

    owner = User.objects.get(username="owner")
    agents = [
        {"name": name, "model": "path-c", "criteria": f"{name} approves only safe plans."}
        for name in ("Melchior", "Balthasar", "Casper")
    ]
    return saving.save_panel(owner=owner, name="Stronger", agents=agents).pk


def figure(walk: panel_path.PanelWalk) -> str:
    """The figure as docs/architecture.md words it."""
    entries = walk.entries()
    return f"{len(entries)} files, {walk.files_left_and_entered_again()} returns"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", action="store_true", help="print every stop")
    parser.add_argument("--json", action="store_true", help="print the stops as JSON")
    parser.add_argument(
        "--escalating", action="store_true", help="the edit names a panel to escalate to"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as var_dir:
        # No model is asked: the models are only named, as a deployment lists them.
        bench_site.setup_django("http://127.0.0.1:9/v1", var_dir, MODELS)
        edited = saved_panel()
        target = stronger_panel() if args.escalating else None
        walk = panel_path.edit(edited, escalate_to=target)
    if args.json:
        print(json.dumps({"stops": walk.stops}))
        return
    walk.report(figure(walk), args.calls)


if __name__ == "__main__":
    main()
