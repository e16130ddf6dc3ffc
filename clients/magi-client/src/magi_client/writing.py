"""A configuration directory written from what the server holds (`magi export`): the
layout directory.py reads, every panel field written, so that reading it back gives the
same state and applying it changes nothing."""

import re
import shutil
from collections.abc import Mapping
from pathlib import Path

import yaml

from magi_client.directory import DirectoryState, ScopeSpec, SlackFile, TeamFile

MANAGED = ("panels", "suites", "teams")


def unwritable(state: DirectoryState) -> list[str]:
    """Team and suite names that cannot be a folder's or a file's name (they name them)."""
    names = [("team", team) for team in state.get("teams", {})]
    scopes = [state.get("examples", {}), *state.get("teams", {}).values()]
    names += [("suite", suite["name"]) for scope in scopes for suite in scope.get("suites", [])]
    return [
        f"the {kind} {name!r} cannot be written as a file name (a '/', or a leading '.')"
        for kind, name in names
        if "/" in name or "\x00" in name or name.startswith(".") or not name
    ]


def write(root: Path, state: DirectoryState) -> list[Path]:
    """Write `state` (the server's, server_state.as_directory) as a directory, replacing
    its panels/, suites/ and teams/ and leaving every other file; the files written.
    Check `unwritable` first."""
    root.mkdir(parents=True, exist_ok=True)
    for name in MANAGED:
        if (root / name).is_dir():
            shutil.rmtree(root / name)
    written: list[Path] = []
    if "examples" in state:
        written += write_scope(root, state["examples"])
    for team, spec in sorted(state.get("teams", {}).items()):
        folder = root / "teams" / team
        folder.mkdir(parents=True)
        settings: TeamFile = {}
        if "members" in spec:
            settings["members"] = spec["members"]
        if "budgets" in spec:
            settings["budgets"] = spec["budgets"]
        if "slack" in spec:
            # Where it posts; its secrets never: the file names none, so an apply of the
            # export keeps the ones set.
            slack: SlackFile = (
                {"channel": spec["slack"]["channel"]} if spec["slack"]["channel"] else {}
            )
            if spec["slack"]["direct_messages"]:
                slack["direct_messages"] = True
            settings["slack"] = slack
        written.append(dump(folder / "team.yaml", settings))
        written += write_scope(folder, spec)
    return written


def write_scope(folder: Path, spec: ScopeSpec) -> list[Path]:
    written = []
    used: set[str] = set()
    for panel in spec.get("panels", []):
        stem = file_stem(panel["name"], used)
        written.append(dump(folder / "panels" / f"{stem}.yaml", panel))
    for suite in spec.get("suites", []):
        path = folder / "suites" / f"{suite['name']}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(suite["cases"], encoding="utf-8")
        written.append(path)
    return written


def file_stem(name: str, used: set[str]) -> str:
    """A file name for a panel: its name with anything but letters, digits, `.`, `_`, `-`
    as `-`, numbered when two names come out alike."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "panel"
    candidate, number = stem, 1
    while candidate.casefold() in used:
        number += 1
        candidate = f"{stem}-{number}"
    used.add(candidate.casefold())
    return candidate


class Dumper(yaml.SafeDumper):
    """YAML as a person writes it: a text of several lines as a block scalar (`|-`)."""


def text_of(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # A block scalar cannot hold every text (trailing spaces on a line, some controls):
    # PyYAML falls back to quotes for those by itself.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


Dumper.add_representer(str, text_of)


def dump(path: Path, data: Mapping[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(text, encoding="utf-8")
    return path
