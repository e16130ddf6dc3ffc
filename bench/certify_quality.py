"""Earned trust, measured: run labelled suites through MAGI's engine with the checks beside
the vote on, certify on some suites, and check the certificate on others.

    .venv/bin/python bench/certify_quality.py run --model NAME --suites starter,redteam \\
        --out calibration.jsonl [--round1]
    .venv/bin/python bench/certify_quality.py run --model NAME --suites holdout,heldout \\
        --out check.jsonl [--interleave]
    .venv/bin/python bench/certify_quality.py analyse --calibrate calibration.jsonl \\
        --check check.jsonl [--target 0.9] [--delta 0.1]
    .venv/bin/python bench/certify_quality.py run --fake --suites starter --out smoke.jsonl

`run` judges each case as an ordinary judgement of its example panel with every agent on
--model (bench/panel_quality.py's judge_case: submit, EngineRunner),
with the confidence probe, the second opinion and the injection screen on, and appends a
JSON line per case: the verdict, the signals, both confidences, what the checks found, and
what the checks cost (seconds and tokens). With --round1 only the first round and the
checks run (a third of the votes): enough for the signals' AUROC, not for a verdict.

`analyse` prints, per suite: each signal's AUROC at telling right verdicts from wrong ones
(a confidence: its value; a signal: 1 when it did not fire), the injection screen's
detection rate on injection cases and false-alarm rate on clean ones, and the second
opinion's accuracy beside the panel's. Then it certifies on the --calibrate rows exactly
as `manage.py evaluate --certify` does (judgements/evaluations/certify.py's sources and
signals) and applies the certified rule, unchanged, to the --check rows: coverage,
accuracy of the kept verdicts against the bound, and injection approvals kept.

Suites: `starter`, `redteam` and `holdout` ship in judgements/examples/suites/;
`heldout` is bench/heldout/. Nothing is chosen on `holdout` or `heldout`.
"""

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contested_analysis import SUITE_FILES, load_cases
from django.core.management import call_command

# Sets Django up on a throwaway SQLite database, as every bench of panels does.
from panel_quality import EXAMPLES, FAKE_MODEL, load_panels, use_fake_server

from judgements.core import certificate, kept_verdicts, rules
from judgements.engine import lifecycle
from judgements.engine.checks import run_checks
from judgements.engine.deliberation import load, run_round
from judgements.engine.lease import HeldLease
from judgements.engine.runner import EngineRunner
from judgements.evaluations import certify, metrics
from judgements.intake.schemas import CaseJson, validated
from judgements.intake.start import Submission, submit
from judgements.models import Judgement, JudgementCheck
from judgements.models.magi_settings import magi_settings
from judgements.outcome import answers, marks

SUITE_FILES["holdout"] = (EXAMPLES / "suites", "holdout-")
INJECTION = "injection"


def row_of(case: dict, judgement: Judgement, seconds: float, verdict: str) -> dict:
    checks = list(JudgementCheck.objects.filter(judgement=judgement))
    return {
        "suite": case["suite"],
        "id": case["id"],
        "panel": case["panel"],
        "expected": case["expected"],
        "tags": case.get("tags", []),
        "verdict": verdict,
        "signals": list(judgement.contest_signals or []),
        "confidence": {"answer": judgement.answer_confidence, "probe": judgement.probe_confidence},
        "checks": answers.ChecksFound.from_record(judgement).model_dump(mode="json"),
        "check_seconds": sum(c.duration_ms for c in checks) / 1000,
        "check_tokens": sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in checks),
        # Per kind (probe: the three agents' together), so each check's cost can be told.
        "check_cost": {
            kind: {
                "seconds": sum(c.duration_ms for c in checks if c.kind == kind) / 1000,
                "tokens": sum(
                    (c.prompt_tokens or 0) + (c.completion_tokens or 0)
                    for c in checks
                    if c.kind == kind
                ),
            }
            for kind in sorted({c.kind for c in checks})
        },
        "vote_tokens": sum(
            (a.prompt_tokens or 0) + (a.completion_tokens or 0)
            for agent in judgement.agents.all()
            for a in agent.attempts.all()
        ),
        "error": judgement.error_message,
        "seconds": round(seconds, 1),
    }


def judge(case: dict, panel: dict, model: str, round1: bool) -> dict:
    agents = [{**agent, "model": model} for agent in panel["agents"]]
    valid = {"title": case["title"], "content": case["content"], "agents": agents}
    judgement = submit([validated(CaseJson, valid).case()], Submission()).judgement
    runner = EngineRunner()
    began = time.perf_counter()
    if not round1:
        asyncio.run(runner.run_judgement(judgement.pk))
        judgement = Judgement.objects.prefetch_related("agents__decisions", "checks").get(
            pk=judgement.pk
        )
        verdict = {"approved": "approve", "rejected": "reject"}.get(judgement.status, "error")
        return row_of(case, judgement, time.perf_counter() - began, verdict)

    async def first_round() -> None:
        await lifecycle.aclaim(runner.worker_id, Judgement.objects.filter(pk=judgement.pk), 1)
        deliberation = await load(judgement.pk)
        lease = HeldLease(judgement.pk, runner.worker_id)
        await asyncio.gather(
            run_round(deliberation, 1, lease, runner.clients),
            run_checks(deliberation, lease, runner.clients),
        )

    asyncio.run(first_round())
    judgement = Judgement.objects.prefetch_related("agents__decisions", "checks").get(
        pk=judgement.pk
    )
    firsts = [d.decision for a in judgement.agents.all() for d in a.ordered_decisions()]
    verdict = rules.panel_decision(firsts).value if len(firsts) == 3 else "error"
    # Round 1 alone: the verdict's confidences as the engine would store them.
    confidences = marks.confidences(judgement, verdict) if verdict != "error" else {}
    judgement.answer_confidence = confidences.get("answer")
    judgement.probe_confidence = confidences.get("probe")
    # The record signals need three rounds; the checks' two need only the verdict.
    found = {checked.kind: checked.found for checked in marks.checks_found(judgement)}
    opinion, screen = found.get("second_opinion"), found.get("screen")
    judgement.contest_signals = [
        *(["second_opinion"] if opinion and opinion.decision not in (None, verdict) else []),
        *(["injection"] if screen and screen.flagged else []),
    ]
    return row_of(case, judgement, time.perf_counter() - began, verdict) | {"round1_only": True}


def run(args: argparse.Namespace) -> None:
    server = use_fake_server() if args.fake else None
    model = FAKE_MODEL if args.fake else args.model
    if not model:
        raise SystemExit("--model is required (or --fake)")
    magi_settings.MAGI_CONFIDENCE_PROBE = magi_settings.MAGI_SECOND_OPINION = True
    magi_settings.MAGI_INJECTION_SCREEN = True
    call_command("migrate", verbosity=0)
    panels = load_panels()
    cases = [case for suite in args.suites.split(",") for case in load_cases(suite)]
    if args.interleave:
        # One case of each panel in turn, each panel's in a fixed shuffled order: a run
        # stopped early is still a fair sample of every panel and every kind of case.
        by_panel: dict[str, list[dict]] = {}
        for case in cases:
            by_panel.setdefault(case["panel"], []).append(case)
        columns = list(by_panel.values())
        for column in columns:
            random.Random(0).shuffle(column)
        cases = [c[i] for i in range(max(map(len, columns))) for c in columns if i < len(c)]
    done = set()
    if args.out.exists():
        done = {json.loads(line)["id"] for line in args.out.read_text().splitlines() if line}
    with args.out.open("a") as out:
        for index, case in enumerate(cases, 1):
            if case["id"] in done:
                continue  # resumed: judged in an earlier invocation
            row = judge(case, panels[case["panel"]], model, args.round1)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            print(
                f"[{index}/{len(cases)}] {row['id']:<9} expected {row['expected']:<7} "
                f"{row['verdict']:<7} conf={row['confidence']} {','.join(row['signals'])} "
                f"{row['seconds']}s {row['error'][:80]}",
                flush=True,
            )
    if server is not None:
        server.stop()


# --- analysing ---------------------------------------------------------------------------


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def decided(rows: list[dict]) -> list[dict]:
    return [row for row in rows if row["verdict"] in ("approve", "reject")]


def sample(row: dict) -> kept_verdicts.Sample:
    return kept_verdicts.Sample(
        right=row["verdict"] == row["expected"],
        confidence=row["confidence"],
        signals=frozenset(row["signals"]),
        injection_approved=INJECTION in row["tags"]
        and row["expected"] == "reject"
        and row["verdict"] == "approve",
    )


def signal_aurocs(rows: list[dict]) -> dict[str, str]:
    found = {}
    right = [row for row in rows if row["verdict"] == row["expected"]]
    wrong = [row for row in rows if row["verdict"] != row["expected"]]
    for source in certify.SOURCES:
        a = [r["confidence"][source] for r in right if r["confidence"][source] is not None]
        b = [r["confidence"][source] for r in wrong if r["confidence"][source] is not None]
        value = metrics.auroc(a, b)
        found[f"{source} confidence"] = (
            "-" if value is None else f"{value:.2f} ({len(a) + len(b)} known)"
        )
    for signal in certify.SIGNALS:
        value = metrics.auroc(
            [0.0 if signal in r["signals"] else 1.0 for r in right],
            [0.0 if signal in r["signals"] else 1.0 for r in wrong],
        )
        found[signal] = "-" if value is None else f"{value:.2f}"
    return found


def screened(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["checks"]["injection_screen"]]


def steered(rows: list[dict]) -> int:
    return sum(r["checks"]["injection_screen"]["steered"] is True for r in rows)


def per_judgement(rows: list[dict], key: str) -> float:
    return sum(r[key] for r in rows) / max(len(rows), 1)


def checks_figures(rows: list[dict]) -> dict[str, str]:
    attacks = [r for r in rows if INJECTION in r["tags"]]
    clean = [r for r in rows if INJECTION not in r["tags"]]
    opinions = [r for r in rows if r["checks"]["second_opinion"]]
    return {
        "screen: injections detected": share(steered(screened(attacks)), len(screened(attacks))),
        "screen: clean cases flagged (false alarms)": share(
            steered(screened(clean)), len(screened(clean))
        ),
        "second opinion right": share(
            sum(r["checks"]["second_opinion"]["decision"] == r["expected"] for r in opinions),
            len(opinions),
        ),
        "panel right": share(sum(r["verdict"] == r["expected"] for r in rows), len(rows)),
        "checks: seconds per judgement": f"{per_judgement(rows, 'check_seconds'):.1f}",
        "checks: tokens per judgement": f"{per_judgement(rows, 'check_tokens'):.0f}",
        "votes: tokens per judgement": f"{per_judgement(rows, 'vote_tokens'):.0f}",
        "seconds per judgement (wall)": f"{per_judgement(rows, 'seconds'):.1f}",
        **cost_by_kind(rows),
    }


def cost_by_kind(rows: list[dict]) -> dict[str, str]:
    """Each check's call time and tokens per judgement (rows that recorded them)."""
    costed = [r for r in rows if "check_cost" in r]
    kinds = sorted({kind for r in costed for kind in r["check_cost"]})
    return {
        f"{kind}: per judgement": "{:.1f} s of calls, {:.0f} tokens".format(
            sum(r["check_cost"].get(kind, {}).get("seconds", 0) for r in costed) / len(costed),
            sum(r["check_cost"].get(kind, {}).get("tokens", 0) for r in costed) / len(costed),
        )
        for kind in kinds
    }


def kept_figures(rule: kept_verdicts.Rule, rows: list[dict], delta: float) -> dict[str, str]:
    kept = [r for r in rows if rule.keeps(sample(r))]
    right = sum(r["verdict"] == r["expected"] for r in kept)
    low, high = kept_verdicts.interval(right, len(kept), delta)
    return {
        "coverage": share(len(kept), len(rows)),
        "kept right": share(right, len(kept)),
        f"{1 - delta:.0%} interval": f"{low:.1%} to {high:.1%}" if kept else "n/a",
        "injection approvals kept": str(sum(sample(r).injection_approved for r in kept)),
    }


def read_rows(paths: list[Path] | None) -> list[dict]:
    return [
        json.loads(line) for path in paths or [] for line in path.read_text().splitlines() if line
    ]


def analyse(args: argparse.Namespace) -> None:
    calibration = decided(read_rows(args.calibrate))
    check = decided(read_rows(args.check))
    for name, rows in (("calibration", calibration), ("check", check)):
        by_suite: dict[str, list[dict]] = {}
        for row in rows:
            by_suite.setdefault(row["suite"], []).append(row)
        for suite, suite_rows in by_suite.items():
            print(f"\n## {name}: {suite} ({len(suite_rows)} decided)")
            for key, value in (signal_aurocs(suite_rows) | checks_figures(suite_rows)).items():
                print(f"- {key}: {value}")
    full = [r for r in calibration if not r.get("round1_only")]
    if not full:
        return
    outcome = certificate.certify(
        [sample(r) for r in full],
        target=args.target,
        delta=args.delta,
        sources=certify.SOURCES,
        signals=certify.SIGNALS,
    )
    print(
        f"\n## certificate (target {args.target:.0%}, delta {args.delta}) on {len(full)} verdicts"
    )
    if outcome.certified is None:
        best = outcome.best
        print(
            f"- not certified; the first rule tested ({best.rule.describe()}) reached a bound "
            f"of {best.bound:.1%} on {best.kept} kept held-out verdicts"
            if best
            else "- nothing"
        )
        return
    chosen = outcome.certified
    print(
        f"- rule: {chosen.rule.describe()}; on the {chosen.samples} held-out verdicts: "
        f"coverage {chosen.coverage:.0%}, kept {chosen.right}/{chosen.kept} right; promised "
        f"at least {outcome.guarantee:.0%} (method {outcome.method})"
    )
    for suite in sorted({r["suite"] for r in check}):
        figures = kept_figures(chosen.rule, [r for r in check if r["suite"] == suite], args.delta)
        print(f"- on {suite}: " + ", ".join(f"{k} {v}" for k, v in figures.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--model")
    run_parser.add_argument("--fake", action="store_true")
    run_parser.add_argument("--suites", default="starter,redteam")
    run_parser.add_argument("--round1", action="store_true")
    run_parser.add_argument(
        "--interleave", action="store_true", help="panels in turn, each shuffled (seed 0)"
    )
    run_parser.add_argument("--out", type=Path, required=True)
    analyse_parser = sub.add_parser("analyse")
    analyse_parser.add_argument("--calibrate", type=Path, nargs="+", required=True)
    analyse_parser.add_argument("--check", type=Path, nargs="*")
    analyse_parser.add_argument("--target", type=float, default=certify.DEFAULT_TARGET)
    analyse_parser.add_argument("--delta", type=float, default=certify.DEFAULT_DELTA)
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    else:
        analyse(args)


if __name__ == "__main__":
    main()
