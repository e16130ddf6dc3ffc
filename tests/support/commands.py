"""Running a manage.py command as an operator would, and what it printed and exited with."""

import io
import json

import pytest
from django.core.management import call_command


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
