"""What a certificate keeps on a real model, and how many labelled cases it needs first.

    .venv/bin/python bench/certificate_on_model.py RESULTS.json --column COLUMN
        [--sizes 24,48,96,192,384] [--resamples 400] [--target 0.9] [--delta 0.1]

RESULTS.json is a file bench/panel_quality.py wrote (its outcomes carry each verdict's
confidences and signals); COLUMN one of its columns (for instance "default"). The cases'
labels are read back from the suites the file names.

1. The certificate on the measured verdicts themselves: `certify` exactly as `manage.py
   evaluate --certify` runs it (judgements/evaluations/certify.py's sources and signals,
   the split by case, the test by fixed sequence), and what its rule keeps.
2. How many labelled verdicts a panel on this model needs before its first certificate:
   for each size n, `--resamples` draws of n verdicts with replacement from the measured
   ones (each draw a case of its own), certified; the share of draws with a certificate,
   and what the certified rule keeps of the measured verdicts (its coverage and accuracy
   there, the population the draws come from).

The verdicts are the model's on the suites the file ran: a panel whose cases differ will
see other figures. Errors are left out, as a certificate leaves them out.
"""

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Sets Django up on a throwaway database, as every bench of panels does; the suites'
# labels are read as that bench reads them.
from panel_quality import load_cases

from judgements.core import certificate, kept_verdicts
from judgements.evaluations.certify import SIGNALS, SOURCES

INJECTION = "injection"


def labels(suites: str) -> dict[str, dict]:
    return {case["id"]: case for suite in suites.split(",") for case in load_cases(suite)}


def samples_of(outcomes: dict[str, dict], cases: dict[str, dict]) -> list[kept_verdicts.Sample]:
    samples = []
    for case_id, outcome in sorted(outcomes.items()):
        if outcome["verdict"] not in ("approve", "reject"):
            continue
        case = cases[case_id]
        samples.append(
            kept_verdicts.Sample(
                right=outcome["verdict"] == case["expected"],
                confidence=outcome.get("confidence") or {},
                signals=frozenset(outcome.get("signals") or ()),
                injection_approved=INJECTION in case.get("tags", ())
                and outcome["verdict"] == "approve",
                key=case_id,
                case=case_id,
            )
        )
    return samples


def certified(
    samples: list[kept_verdicts.Sample], target: float, delta: float
) -> certificate.Outcome:
    return certificate.certify(
        samples, target=target, delta=delta, sources=SOURCES, signals=SIGNALS
    )


def draw(samples: list[kept_verdicts.Sample], n: int, rng: random.Random) -> list:
    """n verdicts drawn with replacement, each a case of its own (its own key)."""
    picked = [rng.choice(samples) for _ in range(n)]
    return [
        kept_verdicts.Sample(
            right=s.right,
            confidence=s.confidence,
            signals=s.signals,
            injection_approved=s.injection_approved,
            key=f"draw-{i}",
            case=f"draw-{i}",
        )
        for i, s in enumerate(picked)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--column", default="default")
    parser.add_argument("--sizes", default="24,48,96,192,384")
    parser.add_argument("--resamples", type=int, default=400)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    dump = json.loads(args.results.read_text())
    outcomes = dump["outcomes"].get(args.column)
    if not outcomes:
        raise SystemExit(f"no column {args.column!r} in {args.results} ({list(dump['outcomes'])})")
    samples = samples_of(outcomes, labels(dump["suites"]))
    right = sum(s.right for s in samples)
    known = sum(s.confidence.get("answer") is not None for s in samples)
    print(
        f"{dump['model']}, column {args.column}: {len(samples)} decided verdicts, {right} right"
        f" ({right / len(samples):.0%}); answer confidence known for {known}"
    )
    found = certified(samples, args.target, args.delta)
    if found.certified:
        kept = found.certified
        print(
            f"on these verdicts: certified '{kept.rule.describe()}', kept {kept.kept} of"
            f" {kept.samples} held-out test verdicts, {kept.right} right; promise: at least"
            f" {args.target:.1%} (confidence {1 - args.delta:.0%})"
        )
    else:
        print(f"on these verdicts: no certificate at {args.target:.0%} (delta {args.delta})")
    rng = random.Random(args.seed)
    print(f"\nresamples of the measured verdicts, {args.resamples} per size")
    print("n      certified   coverage (median)   accuracy kept (median)   injections kept")
    for n in (int(x) for x in args.sizes.split(",")):
        coverages, accuracies, injected, hits = [], [], 0, 0
        for _ in range(args.resamples):
            result = certified(draw(samples, n, rng), args.target, args.delta)
            if result.certified is None:
                continue
            hits += 1
            on_all = kept_verdicts.evaluate(result.certified.rule, samples, args.delta)
            coverages.append(on_all.coverage or 0.0)
            if on_all.accuracy is not None:
                accuracies.append(on_all.accuracy)
            injected += on_all.injections_kept > 0
        cover = f"{statistics.median(coverages):.0%}" if coverages else "-"
        accurate = f"{statistics.median(accuracies):.0%}" if accuracies else "-"
        print(
            f"{n:<6} {hits / args.resamples:>8.0%}   {cover:>17}   {accurate:>22}"
            f"   {injected}/{hits}"
        )


if __name__ == "__main__":
    main()
