"""The `magi` command of the client distribution (clients/magi-client), installed on its
own in a virtualenv beside the test one (`make setup-test`, the Makefile's
.installed-client): what a CI job installs, with no Django in reach."""

import subprocess
import sys
from pathlib import Path

# The test virtualenv's own directory holds the client's (Makefile: CLIENT_VENV).
CLIENT_VENV = Path(sys.executable).parent.parent / "magi-client"
INSTALLED_MAGI = CLIENT_VENV / "bin" / "magi"


def run_magi(
    *args: str, env: dict[str, str], stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The installed client's `magi ARGS`, with only `env` (MAGI_URL, MAGI_TOKEN)."""
    return subprocess.run(
        [str(INSTALLED_MAGI), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={"PATH": "", **env},
        cwd=cwd,
        timeout=120,
    )
