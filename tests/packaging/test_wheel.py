"""A wheel built from the repo carries the whole app: installed in a fresh virtualenv
outside the repo, it migrates, loads its example panels and suites, and finds its
templates and static files."""

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(command: list, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, **kwargs)
    assert done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"
    return done


# What a build reads: the rest of the repo (tests, docs, var/) is not the app.
# clients/: the client package (magi_client), which the server packages from its one home.
SOURCES = (
    "pyproject.toml",
    "README.md",
    "magi_site",
    "judgements",
    "templates",
    "static",
    "clients",
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Built from a copy: setuptools leaves build/ and *.egg-info in the tree it builds.
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name,
                source / name,
                ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"),
            )
        else:
            shutil.copy(REPO / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation: the build needs only setuptools, which the test environment has.
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            out,
            source,
        ]
    )
    (built,) = out.glob("magi-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv outside the repo with the wheel installed; its dependencies come
    from this environment's site-packages (a path entry, not a site directory, so this
    environment's editable install of MAGI stays out)."""
    root = tmp_path_factory.mktemp("installed")
    venv.create(root / "venv", with_pip=True)
    python = root / "venv" / "bin" / "python"
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    Path(site.stdout.strip(), "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    run([python, "-m", "pip", "install", "--no-deps", "--no-index", wheel])
    return python


def in_wheel(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {name for name in archive.namelist() if not name.startswith("magi-")}


def test_the_wheel_carries_every_module_and_data_file_of_the_app(wheel):
    shipped = in_wheel(wheel)
    for package in ("judgements", "magi_site"):
        for path in (REPO / package).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                assert str(path.relative_to(REPO)) in shipped, path
    client = ("clients/magi-client/src/magi_client", "magi_client")
    for directory, inside in (
        ("templates", "magi_site/templates"),
        ("static", "magi_site/static"),
        client,
    ):
        for path in (REPO / directory).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                assert f"{inside}/{path.relative_to(REPO / directory)}" in shipped, path


def test_the_installed_app_migrates_and_serves_its_files(installed, tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("MAGI_", "DJANGO_"))},
        "DJANGO_SETTINGS_MODULE": "magi_site.settings",
        "SECRET_KEY": "installed-wheel-test-key-" + "x" * 30,
        "MAGI_VAR_DIR": str(tmp_path / "var"),
        "PYTHONPATH": "",
    }
    django = [installed, "-m", "django"]
    where = run(
        [installed, "-c", "import judgements; print(judgements.__file__)"], env=env, cwd=tmp_path
    )
    assert not where.stdout.strip().startswith(str(REPO)), where.stdout
    run([*django, "migrate", "--no-input", "-v0"], env=env, cwd=tmp_path)
    run([*django, "load_examples", "-v0"], env=env, cwd=tmp_path)
    shown = run(
        [
            *django,
            "shell",
            "-c",
            "from django.template.loader import get_template;"
            "from django.contrib.staticfiles import finders;"
            "from judgements.models import Panel, Suite;"
            "get_template('judgements/new.html');"
            "print(bool(finders.find('magi.css')), Panel.objects.count(), Suite.objects.count())",
        ],
        env=env,
        cwd=tmp_path,
    )
    # The console script for pipelines comes with it and starts without Django settings.
    gate_help = run([installed.with_name("magi"), "gate", "--help"], cwd=tmp_path)
    assert "exit status: 0 approved" in gate_help.stdout.replace("\n", " ")
    # The client's commands and the server's own `magi mcp`, with the client's schemas.
    commands = run([installed.with_name("magi"), "--help"], cwd=tmp_path).stdout
    assert "{gate,plan,apply,export,verify,audit,mcp}" in commands
    schemas = (
        "from importlib.resources import files;"
        "print(sorted(p.name for p in files('magi_client.schemas').iterdir()))"
    )
    listed = run([installed, "-c", schemas], env=env, cwd=tmp_path).stdout
    assert "magi-panel.schema.json" in listed
    # The last line: Django's shell first says how many names it imported.
    assert shown.stdout.splitlines()[-1].split() == ["True", "4", "12"]
