"""Running a manage.py command as an operator would, and what it printed and exited with."""

import io
import json
import os
from pathlib import Path

import pytest
from django.core.management import call_command


def deployment_environment(var_dir: Path, **variables: str) -> dict[str, str]:
    """This process's environment as a deployment on MAGI's defaults has it, for a process
    of its own: no MAGI_* setting, key, DEBUG or settings module of the suite's; `var_dir`
    its var directory, then `variables`."""
    suite_only = {"SECRET_KEY", "DEBUG", "DJANGO_SETTINGS_MODULE"}
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("MAGI_") and name not in suite_only
    }
    return env | {"MAGI_VAR_DIR": str(var_dir), **variables}


def run_command(*args) -> tuple[int, str, str]:
    """The command's exit code, standard output and standard error; it must exit."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command(*args, stdout=out, stderr=err)
    code = exited.value.code
    assert isinstance(code, int), code  # the commands exit with a status number
    return code, out.getvalue(), err.getvalue()


def run_judge(tmp_path, case, *args) -> tuple[int, str, str]:
    """`manage.py judge` on the case (a dict, or the file's text as given) written to a file."""
    path = tmp_path / "case.json"
    path.write_text(case if isinstance(case, str) else json.dumps(case))
    return run_command("judge", str(path), *args)
