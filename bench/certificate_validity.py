"""Does a certificate keep its promise, and how much does it keep? Synthetic suites from
known distributions (tests/support/certificate_simulation.py), certified by the shipped
method and, side by side, by the search of an earlier commit, which stated the winning
rule's own bound after trying thousands.

    .venv/bin/python bench/certificate_validity.py [--suites 1000] [--sizes 64,128,256]
        [--against 76cc4d7] [--shares 0.5,0.25]

For each distribution and suite size it prints, per method: how many suites certified a
rule, the rate at which a certified rule's true kept accuracy was below its stated bound
(the promise allows delta), and the mean share of verdicts the certified rules keep
(coverage: a method that certifies nothing is valid and useless). --against loads
judgements/core/certificate.py as it was at that commit (git show), so the comparison
needs no copy of the old code.
"""

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judgements.core import certificate  # noqa: E402 - after the path is set
from tests.support.certificate_simulation import (  # noqa: E402 - after the path is set
    DISTRIBUTIONS,
    SIGNALS,
    SOURCES,
    Certifier,
    tally,
)

TARGET, DELTA = 0.9, 0.1


def shipped(share: float) -> Certifier:
    def run(samples: Sequence[certificate.Sample]) -> tuple[certificate.Rule, float] | None:
        outcome = certificate.certify(
            samples,
            target=TARGET,
            delta=DELTA,
            sources=SOURCES,
            signals=SIGNALS,
            selection_share=share,
        )
        if outcome.certified is None or outcome.guarantee is None:
            return None
        return outcome.certified.rule, outcome.guarantee

    return run


def old_module(commit: str) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{commit}:judgements/core/certificate.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "old_certificate.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_certificate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def searched(module: ModuleType) -> Certifier:
    def run(samples: Sequence[certificate.Sample]) -> tuple[certificate.Rule, float] | None:
        old = [
            module.Sample(
                right=s.right,
                confidence=s.confidence,
                signals=s.signals,
                injection_approved=s.injection_approved,
            )
            for s in samples
        ]
        outcome = module.certify(old, target=TARGET, delta=DELTA, sources=SOURCES, signals=SIGNALS)
        if outcome.certified is None:
            return None
        rule = certificate.Rule.from_dict(outcome.certified.rule.as_dict())
        return rule, outcome.certified.bound

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", type=int, default=1000)
    parser.add_argument("--sizes", default="64,128,256")
    parser.add_argument(
        "--shares", default="", help="selection shares to compare (default: the shipped one)"
    )
    parser.add_argument("--against", default=None, help="a commit whose certify to compare")
    parser.add_argument("--seed", type=int, default=7)
    arguments = parser.parse_args()
    methods: dict[str, Certifier] = {
        f"split {float(share):.2f}": shipped(float(share))
        for share in (arguments.shares or str(certificate.DEFAULT_SELECTION)).split(",")
    }
    if arguments.against:
        methods[f"search@{arguments.against}"] = searched(old_module(arguments.against))
    print(f"target {TARGET}, delta {DELTA}, {arguments.suites} suites per cell")
    print("| distribution | size | method | certified | true accuracy below bound | coverage |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in DISTRIBUTIONS:
        for size in (int(s) for s in arguments.sizes.split(",")):
            for label, method in methods.items():
                started = time.perf_counter()
                found = tally(name, method, suites=arguments.suites, size=size, seed=arguments.seed)
                print(
                    f"| {name} | {size} | {label} | {found.certified} | "
                    f"{found.broken_rate:.1%} | {found.coverage:.1%} |"
                    f" <!-- {time.perf_counter() - started:.1f} s -->",
                    flush=True,
                )


if __name__ == "__main__":
    main()
