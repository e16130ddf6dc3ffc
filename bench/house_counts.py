"""What the house is made of (issues 57 and 71), counted from a checkout:

    .venv/bin/python bench/house_counts.py [--json]

- in judgements/ with the client, in magi_site/ and in bench/, each on its own:
  annotations naming `Any`, those saying `dict[str, Any]`, the annotations using an
  alias of `Any` (`Scope = dict[str, Any]` counted where `Scope` is used), the `object`
  bags (`dict[str, object]`, `Mapping[str, object]`, an alias of one where it is used),
  the parameters typed `object`, and the `type: ignore`s
  (tests/support/house_counts.py says how each is counted);
- import cycles among the app, the site and the client (an import only for the type
  checker, or inside a function, counts), module by module and folded to folders (an
  area of the app, the site, the client: a loop there is an arrow of the drawing running
  back up; `--drawing` prints that drawing alone, as docs/architecture.md shows it);
- `mypy --strict judgements magi_site clients/magi-client/src/magi_client`: as
  pyproject.toml configures it (what `make typecheck` and CI hold), and "to the letter",
  without any override that relaxes a module (none is left: the untyped classes the app
  subclasses are typed by stubs/), each error counted by module;
- the files a panel edit passes through and how often it comes back to one it left
  (bench/panel_path.py).

tests/packaging/test_house_counts.py holds the counts to their caps.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import house_counts  # noqa: E402

TYPED = ["judgements", "magi_site", "clients/magi-client/src/magi_client"]
ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):\d+: error: ")


def mypy_errors(config: Path) -> Counter[str]:
    """`mypy --strict` over the app, the site and the client with `config`: errors by file."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(config), *TYPED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"DEBUG": "1", "PATH": "/usr/bin:/bin"},
    )
    return Counter(m["path"] for line in done.stdout.splitlines() if (m := ERROR.match(line)))


def to_the_letter() -> Path:
    """pyproject.toml's mypy configuration without the overrides that relax a module
    (an override that sets a check to false), as a file of its own."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    mypy = dict(config["mypy"])
    mypy["overrides"] = [
        override
        for override in mypy.get("overrides", [])
        if not any(value is False for value in override.values())
    ]
    lines = ["[tool.mypy]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in mypy.items() if key != "overrides"]
    for override in mypy["overrides"]:
        lines += ["", "[[tool.mypy.overrides]]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in override.items()]
    lines += ["", "[tool.django-stubs]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in config["django-stubs"].items()]
    written = Path(tempfile.mkdtemp()) / "strict.toml"
    written.write_text("\n".join(lines) + "\n")
    return written


def panel_edit() -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "bench/panel_path.py", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    stops = json.loads(done.stdout)["stops"]
    entries = Counter(path for path, _, entered in stops if entered)
    return {"stops": len(stops), "files": len(entries), "returns": entries.total() - len(entries)}


def counted() -> dict[str, object]:
    configured = mypy_errors(ROOT / "pyproject.toml")
    letter = mypy_errors(to_the_letter())
    graph = house_counts.import_graph()
    return {
        **{place: house_counts.counts(place) for place in house_counts.PLACES},
        "import cycles": len(house_counts.cycles(graph)),
        "folder loops": len(house_counts.cycles(house_counts.folded(graph))),
        "arrows running back up": len(house_counts.back_arrows(house_counts.folded(graph))),
        "mypy --strict errors (as configured)": configured.total(),
        "mypy --strict errors (to the letter)": letter.total(),
        "to the letter, by file": dict(letter.most_common()),
        "panel edit": panel_edit(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument(
        "--drawing", action="store_true", help="print the house drawn from its imports only"
    )
    given = parser.parse_args()
    if given.drawing:
        print("\n".join(house_counts.drawing(house_counts.folded(house_counts.import_graph()))))
        return
    found = counted()
    if given.json:
        print(json.dumps(found, indent=2))
        return
    for name, value in found.items():
        if isinstance(value, dict):
            print(f"{name}:")
            for key, number in value.items():
                print(f"  {key}: {number}")
        else:
            print(f"{name}: {value}")


if __name__ == "__main__":
    main()
