"""Every page, API answer and command help of two revisions, rendered the same way and
compared: the check that a refactoring changed no behaviour.

    .venv/bin/python bench/rendered_pages.py --before REV [--after REV] [--keep DIR]

Each revision is exported with `git archive` (the working tree when `--after` is not
given) and run with this virtualenv's Python on a fresh SQLite database: migrated, the
shipped examples loaded, a member and a staff member made, one judgement judged on the
bundled model (`manage.py judge`, one call at a time and no checks beside the vote, so
both sides hold the same nine answers) and an API
token issued. Then Django's test client renders, as the member and as the staff member,
every page without a parameter, the judgement's, the first panel's and suite's pages, the
API's schema and lists, a few 404s and a refused form; `--help` of every `manage.py`
command of MAGI's and of `magi` follows. What differs on every run (CSRF tokens, nonces,
times, durations, the worker's id) is masked. The two dumps are compared line by line and
the differences printed (`--keep DIR` keeps both dumps there); exit status 1 when they
differ.
"""

import argparse
import difflib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from first_judgement import case_file, environment, export

ROOT = Path(__file__).resolve().parent.parent
# The switches of the checks beside the vote, by the same names since before issue 41.
CHECK_SWITCHES = ("MAGI_CONFIDENCE_PROBE", "MAGI_SECOND_OPINION", "MAGI_INJECTION_SCREEN")

# Run inside each revision's tree, after `migrate`, `load_examples` and the judgement.
RENDER = r"""
import json, re, subprocess, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import get_commands
from django.test import Client
from django.urls import get_resolver, URLPattern, URLResolver

MASKS = [
    (r'name="csrfmiddlewaretoken" value="[^"]+"', 'name="csrfmiddlewaretoken" value="…"'),
    (r'nonce="[^"]+"', 'nonce="…"'),
    (r"'nonce-[^']+'", "'nonce-…'"),
    (r'csrftoken=[A-Za-z0-9]+', 'csrftoken=…'),
    (r'\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?', '<time>'),
    (r'\d{4}-\d\d-\d\d', '<date>'),
    (r'\b\d\d?:\d\d( [ap]\.m\.)?', '<clock>'),
    (r'\b\d+(\.\d+)? ?(ms|s)\b', '<duration>'),
    (r'"(duration_ms|seconds|latency_ms|elapsed_ms)": [0-9.]+', r'"\1": <n>'),
    (r'vm:\d+:[0-9a-f]+', 'vm:<worker>'),
    (r'(Nov|Dec|Jan|Feb|Mar|Apr|May|June|July|Aug|Sept|Oct)\.? \d\d?, \d{4}', '<day>'),
    (r'\b(\d+) (second|minute|hour)s?( ago)?', r'<age>'),
    (r'magi_[A-Za-z0-9_-]{8,}', 'magi_<token>'),
]


def masked(text):
    for pattern, replacement in MASKS:
        text = re.sub(pattern, replacement, text)
    return text


def paths_without_parameters(resolver, prefix=''):
    for pattern in resolver.url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if route.startswith('admin'):
                continue
            yield from paths_without_parameters(pattern, route)
        elif not route.startswith('admin') and not set('<^(') & set(route):
            yield '/' + route


User = get_user_model()
member, staff = User.objects.get(username='member'), User.objects.get(username='staff')
token = open(sys.argv[1]).read().strip()
judgement_id = int(sys.argv[2])
with_ids = [
    f'/judgements/{judgement_id}/', f'/judgements/{judgement_id}.json',
    f'/judgements/{judgement_id}.md', '/panels/1/', '/suites/1/', '/suites/1.jsonl',
    '/judgements/999999/', '/panels/999999/', '/evaluations/999999/', '/no-such-page/',
]
seen = set()
pages = [p for p in [*sorted(set(paths_without_parameters(get_resolver()))), *with_ids]
         if not (p in seen or seen.add(p))]
skip = {'/accounts/logout/', '/accounts/oidc/start/', '/accounts/oidc/callback/', '/metrics'}
for who, user in (('member', member), ('staff', staff)):
    client = Client(HTTP_HOST='localhost')
    client.force_login(user)
    for path in pages:
        if path in skip:
            continue
        answer = client.get(path)
        body = answer.content.decode('utf-8', 'replace')
        print(f'== GET {path} as {who}: {answer.status_code} {answer.get("Content-Type", "")}')
        print(masked(body))
    answer = client.post('/', {'title': '', 'content': 'x'})
    print(f'== POST / (no title) as {who}: {answer.status_code}')
    print(masked(answer.content.decode()))
api = Client(HTTP_HOST='localhost', HTTP_AUTHORIZATION=f'Bearer {token}')
for path in ['/api/schema.json', '/api/judgements/', f'/api/judgements/{judgement_id}/',
             '/api/panels/', '/api/suites/', '/api/evaluations/', '/api/reviews/',
             '/api/judgements/999999/', '/api/nothing-here/']:
    answer = api.get(path)
    print(f'== GET {path} with a token: {answer.status_code}')
    print(masked(answer.content.decode()))
answer = api.post('/api/judgements/', data='{"title": ""}', content_type='application/json')
print(f'== POST /api/judgements/ (bad body) with a token: {answer.status_code}')
print(masked(answer.content.decode()))
for name, app in sorted(get_commands().items()):
    if app != 'judgements':
        continue
    command = [sys.executable, 'manage.py', name, '--help']
    done = subprocess.run(command, capture_output=True, text=True)
    print(f'== manage.py {name} --help: {done.returncode}')
    print(masked(done.stdout + done.stderr))
for args in (['--help'], ['gate', '--help'], ['mcp', '--help']):
    command = [sys.executable, '-m', 'judgements.cli', *args]
    done = subprocess.run(command, capture_output=True, text=True)
    print(f'== magi {" ".join(args)}: {done.returncode}')
    print(masked(done.stdout + done.stderr))
"""

SETUP = r"""
import django
django.setup()
from django.contrib.auth import get_user_model
User = get_user_model()
User.objects.create_user('member', 'member@example.com', 'a long password 1')
User.objects.create_superuser('staff', 'staff@example.com', 'a long password 2')
"""


def render(tree: Path, case: Path, work: Path) -> str:
    """The masked dump of one tree's pages, answers and helps."""
    var = Path(tempfile.mkdtemp(dir=work))
    env = environment(var, tree) | {"DJANGO_SETTINGS_MODULE": "magi_site.settings"}

    def run(*args: str, env: dict[str, str] = env) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *args], cwd=tree, env=env, text=True, capture_output=True
        )

    for step in (["manage.py", "migrate", "-v0"], ["manage.py", "load_examples"], ["-c", SETUP]):
        done = run(*step)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(step)} failed in {tree}:\n{done.stderr}")
    # One call at a time: batched calls on parallel slots differ in their last digits
    # from run to run, and the page shows each answer's confidence. No checks beside the
    # vote: on this model their answers flip from run to run (docs/contested.md).
    quiet = {"MAGI_LOCAL_PARALLEL": "1"} | dict.fromkeys(CHECK_SWITCHES, "false")
    judged = run("manage.py", "judge", str(case), "--json", env=env | quiet)
    if judged.returncode not in (0, 3):
        raise SystemExit(f"judge failed in {tree}:\n{judged.stderr}")
    token = var / "token"
    token.write_text(run("manage.py", "api_token", "member").stdout)
    done = run("-c", RENDER, str(token), "1")
    if done.returncode != 0:
        raise SystemExit(f"rendering failed in {tree}:\n{done.stderr}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the revision to compare against")
    parser.add_argument("--after", help="a revision in place of the working tree")
    parser.add_argument("--keep", type=Path, help="write both dumps to this directory")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="magi-pages-"))
    try:
        case = case_file(work)
        before = render(export(args.before, Path(tempfile.mkdtemp(dir=work))), case, work)
        after_tree = export(args.after, Path(tempfile.mkdtemp(dir=work))) if args.after else ROOT
        after = render(after_tree, case, work)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / "before.txt").write_text(before)
            (args.keep / "after.txt").write_text(after)
        lines = list(
            difflib.unified_diff(
                before.splitlines(), after.splitlines(), args.before, args.after or "this tree"
            )
        )
        sections = before.count("\n== ")
        print("\n".join(lines))
        print(
            f"{sections} renders, {len(before.splitlines())} lines; differing lines: "
            f"{sum(1 for line in lines if line[:1] in '+-' and line[:3] not in ('+++', '---'))}"
        )
        sys.exit(1 if lines else 0)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
