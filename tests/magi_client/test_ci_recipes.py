"""The CI recipes as shipped, run against a live MAGI: the GitHub Action (action.yml) and
the GitLab CI template (ci/gitlab/magi.gitlab-ci.yml). Their commands are read out of the
files and run with bash as the runners run them, the inputs and variables handed over as
the runners hand them over (environment variables), the client installed by their own
install step from clients/magi-client. So the recipe in the docs is the one tested."""

import os
import shlex
import string
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.live_site import REPO, LiveMagi
from tests.support.magi_client import (
    CREATE_GATE_PANELS,
    MAKE_STAFF,
    PAYMENTS_PANEL,
    client_site,
    script_votes,
    write_files,
)

ACTION = REPO / "action.yml"
GITLAB = REPO / "ci" / "gitlab" / "magi.gitlab-ci.yml"
WORKFLOW = REPO / "ci" / "github" / "magi-config.yml"
CLIENT = str(REPO / "clients" / "magi-client")
# How GitHub runs a composite action's `shell: bash` step.
GITHUB_BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]


def base_environment(work: Path) -> dict[str, str]:
    """A runner's environment: the system's tools and pip's own settings (the package
    index), nothing of this test process's virtualenv."""
    kept = {k: v for k, v in os.environ.items() if k.startswith("PIP_") or k == "HOME"}
    return kept | {"PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": str(work)}


# --- GitHub Actions ---------------------------------------------------------------------


def action_env(step: dict, inputs: dict[str, str], context: str = "inputs") -> dict[str, str]:
    """The step's env with `${{ inputs.NAME }}` filled in; any other expression fails the
    test, so the action's commands read only what the test hands over."""
    env = {}
    for name, value in step.get("env", {}).items():
        for key, given in inputs.items():
            value = value.replace(f"${{{{ {context}.{key} }}}}", given)
        assert "${{" not in value, f"{name}: an expression this test cannot give: {value}"
        env[name] = value
    return env


class Runner:
    """A GitHub runner's files for one job: RUNNER_TEMP, GITHUB_OUTPUT and GITHUB_PATH."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.temp = work / "runner-temp"
        self.temp.mkdir()
        self.output = work / "output"
        self.path_file = work / "path"
        self.path_file.write_text("")
        self.summary = work / "summary.md"

    def run(
        self,
        step: dict,
        inputs: dict[str, str],
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        self.output.write_text("")
        env = base_environment(self.work) | (env or {}) | action_env(step, inputs)
        added = [line for line in self.path_file.read_text().splitlines() if line]
        env["PATH"] = ":".join([*reversed(added), env["PATH"]])
        env |= {
            "RUNNER_TEMP": str(self.temp),
            "GITHUB_OUTPUT": str(self.output),
            "GITHUB_PATH": str(self.path_file),
            "GITHUB_STEP_SUMMARY": str(self.summary),
        }
        script = self.work / "step.sh"
        script.write_text(step["run"])
        return subprocess.run(
            [*GITHUB_BASH, str(script)],
            env=env,
            cwd=cwd or self.work,
            capture_output=True,
            text=True,
            timeout=600,
        )

    def outputs(self) -> dict[str, str]:
        lines = self.output.read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line)


def inputs_for(magi: LiveMagi, **given: str) -> dict[str, str]:
    """The action's inputs with their defaults, as GitHub fills them in."""
    declared = yaml.safe_load(ACTION.read_text())["inputs"]
    values = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    return values | {"url": magi.url, "token": magi.token, "client": CLIENT} | given


@pytest.fixture(scope="module")
def magi(llm_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ci")
    yield from client_site(folder, llm_server.base_url, 1, CREATE_GATE_PANELS + MAKE_STAFF)


@pytest.fixture(scope="module")
def action(magi, tmp_path_factory):
    """The action's steps, its install step run once (it installs the client alone)."""
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    runner = Runner(tmp_path_factory.mktemp("runner"))
    installed = runner.run(steps[0], inputs_for(magi))
    assert installed.returncode == 0, installed.stderr
    return runner, {step.get("id"): step for step in steps}


def test_the_action_passes_on_an_approval_and_says_so(magi, action, fake_llm):
    script_votes(fake_llm)
    runner, steps = action
    done = runner.run(steps["gate"], inputs_for(magi, panel="deploy", content="v2: ship-it."))
    assert done.returncode == 0, done.stderr
    outputs = runner.outputs()
    assert outputs["verdict"] == "approved" and outputs["status"] == "0"
    assert outputs["url"].startswith(f"{magi.url}/judgements/")
    assert "MAGI: approved" in done.stderr


def test_the_action_fails_on_a_rejection_read_from_a_file(magi, action, fake_llm, tmp_path):
    script_votes(fake_llm)
    runner, steps = action
    change = tmp_path / "change.txt"
    change.write_text("Deploy on Friday night: no-go.")
    given = inputs_for(magi, panel="deploy", file=str(change), key="deploy-abc123")
    done = runner.run(steps["gate"], given)
    assert done.returncode == 3, done.stderr
    assert runner.outputs()["verdict"] == "rejected" and runner.outputs()["status"] == "3"


def test_the_action_fails_closed_on_a_bad_token(magi, action, fake_llm):
    script_votes(fake_llm)
    runner, steps = action
    done = runner.run(steps["gate"], inputs_for(magi, panel="deploy", token="magi_wrong"))
    assert done.returncode == 2
    assert runner.outputs() == {"verdict": "", "url": "", "status": "2"}


# --- GitLab CI --------------------------------------------------------------------------


def gitlab_job(name: str) -> tuple[dict[str, str], list[str]]:
    """A hidden job of the template with what it extends: its variables and commands."""
    template = yaml.safe_load(GITLAB.read_text())
    job = template[name]
    parent = template[job["extends"]] if "extends" in job else {}
    variables = {**parent.get("variables", {}), **job.get("variables", {})}
    commands = [*job.get("before_script", parent.get("before_script", [])), *job["script"]]
    return variables, commands


def installs(command: str) -> bool:
    """A line of the template's that installs the client: its virtualenv, pip's install."""
    return command.startswith("python3 -m venv ") or "/bin/pip install " in command


@pytest.fixture(scope="module")
def gitlab_client(tmp_path_factory) -> Path:
    """A job directory in which the template's .magi-client before_script ran, as a job
    runs it: the client it installed is every later job's (installing takes a runner
    seconds; these tests run seven jobs). Those jobs run the rest of the before_script."""
    work = tmp_path_factory.mktemp("gitlab-client")
    before = yaml.safe_load(GITLAB.read_text())[".magi-client"]["before_script"]
    # Any line but the install and the PATH line would be skipped by run_gitlab: fail here.
    assert [installs(command) for command in before] == [True, True, False], before
    script = "set -eo pipefail\n" + "\n".join([*before, "command -v magi"]) + "\n"
    variables = {"MAGI_CLIENT": CLIENT}
    done = subprocess.run(
        ["bash", "-c", script],
        env=base_environment(work) | variables,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{work}/.magi-client/bin/magi\n", done.stdout
    return work / ".magi-client"


def run_gitlab(
    name: str, work: Path, variables: dict[str, str], client: Path
) -> subprocess.CompletedProcess[str]:
    """The job's commands in one shell, as GitLab's runner runs them, its variables
    expanded against the predefined ones as GitLab expands them; its .magi-client is
    `client`, installed once by the same lines (gitlab_client), which are skipped here."""
    declared, commands = gitlab_job(name)
    if not (work / ".magi-client").exists():
        (work / ".magi-client").symlink_to(client)
    sha = variables.pop("CI_COMMIT_SHA", "abc123" * 7)
    predefined = {"CI_PROJECT_PATH": "team/app", "CI_COMMIT_SHA": sha}
    predefined["CI_COMMIT_SHORT_SHA"] = sha[:8]
    merged = {**declared, **variables}
    expanded = {
        k: string.Template(v).safe_substitute(predefined | merged) for k, v in merged.items()
    }
    kept = [command for command in commands if not installs(command)]
    script = "set -eo pipefail\n" + "\n".join(kept) + "\n"
    return subprocess.run(
        ["bash", "-c", script],
        env=base_environment(work) | predefined | expanded,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_gitlab_template_gates_on_the_panel(magi, gitlab_client, fake_llm, tmp_path):
    script_votes(fake_llm)
    (tmp_path / "change.txt").write_text("Deploy on Friday night: no-go.")
    variables = {
        "MAGI_URL": magi.url,
        "MAGI_TOKEN": magi.token,
        "MAGI_PANEL": "deploy",
        "MAGI_FILE": "change.txt",
        "MAGI_CLIENT": CLIENT,
    }
    rejected = run_gitlab(".magi-gate", tmp_path, variables, gitlab_client)
    assert rejected.returncode == 3, rejected.stderr
    assert rejected.stdout.startswith("rejected  panel=deploy")
    # The next commit: its own key (the template's default), its own judgement.
    (tmp_path / "change.txt").write_text("Deploy v3: ship-it.")
    approved = run_gitlab(
        ".magi-gate", tmp_path, variables | {"CI_COMMIT_SHA": "def456" * 7}, gitlab_client
    )
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.startswith("approved  panel=deploy")


def test_the_templates_pass_secrets_as_variables_never_in_the_command_line():
    _, commands = gitlab_job(".magi-gate")
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    for command in [*commands, *(step["run"] for step in steps)]:
        assert "--token" not in shlex.split(command.replace("\n", " "), posix=False)
        assert "${{" not in command  # expressions only in env: never pasted into a script


# --- a configuration repository ---------------------------------------------------------


def test_the_docs_show_the_configuration_workflow_as_shipped():
    assert WORKFLOW.read_text() in (REPO / "docs" / "config-as-code.md").read_text()


def test_the_configuration_workflow_plans_a_pull_request_and_applies_main(magi, tmp_path):
    """The workflow's steps for each event, as GitHub picks them by their `if`, in a
    checkout of a configuration repository."""
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["magi"]
    given = {"vars.MAGI_URL": magi.url, "secrets.MAGI_TOKEN": magi.token}
    env = {}
    for name, value in job["env"].items():
        for expression, known in given.items():
            value = value.replace(f"${{{{ {expression} }}}}", known)
        env[name] = value
    env["MAGI_CLIENT"] = CLIENT
    checkout = tmp_path / "checkout"
    (tmp_path / "runner").mkdir()
    panel = PAYMENTS_PANEL.replace("- user02", "- user01")
    write_files(
        checkout, {"teams/ci/team.yaml": "members:\n- user01\n", "teams/ci/panels/p.yaml": panel}
    )
    runner = Runner(tmp_path / "runner")
    steps = [step for step in job["steps"] if "run" in step]
    install = "Install the MAGI client"
    ran: list[str] = []  # the names of the steps run on this runner, in order

    def run_for(event: str) -> list[subprocess.CompletedProcess[str]]:
        chosen = [
            s for s in steps if s.get("if", event) in (event, f"github.event_name == '{event}'")
        ]
        done = []
        for step in chosen:
            # The client the first run installed is on this runner's GITHUB_PATH since:
            # each later run uses it (installing takes seconds).
            if step.get("name") == install and install in ran:
                continue
            ran.append(step["name"])
            runner.work = checkout
            done.append(runner.run(step, {}, env))
            assert done[-1].returncode == 0, done[-1].stderr
        return done

    planned = run_for("pull_request")
    assert [s.get("name") for s in steps if s.get("if") != "github.event_name == 'push'"] == [
        install,
        "Plan",
    ]
    assert "+ create panel ci/deploy gate" in planned[-1].stdout
    assert "+ create panel ci/deploy gate" in runner.summary.read_text()
    applied = run_for("push")
    assert applied[-1].stdout.endswith("Applied.\n")
    again = run_for("pull_request")
    assert "No changes: the server matches the directory." in again[-1].stdout
    assert ran == [install, "Plan", "Apply", "Plan"]


def test_the_gitlab_configuration_jobs_plan_then_apply(magi, gitlab_client, tmp_path):
    panel = PAYMENTS_PANEL.replace("name: deploy gate", "name: gitlab").replace("user02", "user01")
    files = {"teams/gl/team.yaml": "members:\n- user01\n", "teams/gl/panels/gitlab.yaml": panel}
    write_files(tmp_path / "config", files)
    variables = {
        "MAGI_URL": magi.url,
        "MAGI_TOKEN": magi.token,
        "MAGI_CLIENT": CLIENT,
        "MAGI_CONFIG_DIR": "config",
    }
    planned = run_gitlab(".magi-plan", tmp_path, dict(variables), gitlab_client)
    assert planned.returncode == 0, planned.stderr  # exit 10 (changes) passes the job
    assert "+ create panel gl/gitlab" in planned.stdout
    applied = run_gitlab(".magi-apply", tmp_path, dict(variables), gitlab_client)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.endswith("Applied.\n")
    (tmp_path / "config/teams/gl/panels/gitlab.yaml").write_text("name: [broken\n")
    broken = run_gitlab(".magi-plan", tmp_path, dict(variables), gitlab_client)
    assert broken.returncode == 2, broken.stdout
    assert "teams/gl/panels/gitlab.yaml:2: Not valid YAML" in broken.stderr
