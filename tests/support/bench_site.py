"""What the bench scripts share: the suite's OpenAI-compatible server in a process of its
own (its CPU is not the bench's), Django on a fresh SQLite database pointed at it, and
the CPU a group of processes has used (/proc), a throwaway PostgreSQL's included."""

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start_llm_server(models: Sequence[str], latency: float = 0.0) -> subprocess.Popen:
    """The server, answering `models` after `latency` seconds a call; its base URL is the
    first line it prints."""
    command = [
        sys.executable,
        "-m",
        "tests.support.llm_server",
        "--models",
        ",".join(models),
        "--delay",
        str(latency),
    ]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)


def setup_django(
    base_url: str, var_dir: str, models: Sequence[str], *, migrate: bool = True, **settings: str
) -> None:
    """Django configured from the environment as a deployment is, on SQLite in `var_dir`
    with the in-memory channel layer, migrated (unless the bench keeps its rows elsewhere);
    `settings` are more MAGI_* variables."""
    os.environ.update(
        SECRET_KEY="bench",
        MAGI_VAR_DIR=var_dir,
        MAGI_DEFAULT_BASE_URL=base_url,
        MAGI_DEFAULT_API_KEY="bench",
        MAGI_MODELS=",".join(models),
        DJANGO_SETTINGS_MODULE="magi_site.settings",
        LOG_LEVEL="WARNING",
        **settings,
    )
    os.environ.pop("REDIS_URL", None)
    os.environ.pop("DATABASE_URL", None)
    import django
    from django.core.management import call_command

    django.setup()
    if migrate:
        call_command("migrate", verbosity=0)


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these processes so far (/proc/PID/stat fields 14 and 15); a
    process that has ended counts nothing."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def postgres_pids(data: Path) -> list[int]:
    """The postmaster of the cluster in `data` and every process it forked."""
    master = int((data / "postmaster.pid").read_text().split()[0])
    children = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True)
    return [master, *map(int, children.stdout.split())]
