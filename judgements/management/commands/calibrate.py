"""Learn a saved panel's calibration from its finished evaluation runs.

    manage.py calibrate PANEL [--variants A+B]

PANEL is a saved panel's name or id (the command line acts as the operator, who may use
every panel). The offsets are learned (judgements/evaluations/calibrate.py) from the
round-1 answers of the panel's finished runs of its current agents asked with its own
prompt variants (`calibrated` aside), or with --variants (names joined with "+", or
`none`), and stored with the panel, where judgements of the `calibrated` variant read
them. The command prints how many runs and labelled answers it used and each agent's
offset.

Exit 0 once it learned an offset for at least one agent; 3 when the runs hold too few
labelled answers for any agent (12, at least 4 of each side: nothing is stored, and a
calibration learned before is kept); 2 for invalid input, naming the field: an unknown
panel, a bad --variants, or no finished run to learn from.
"""

import sys
from typing import TypedDict, Unpack

from django.core.management.base import BaseCommand, CommandParser

from judgements.core import calibration
from judgements.core.errors import InvalidInput
from judgements.evaluations import calibrate
from judgements.management import invalid_input
from judgements.panels import saved_panels, variant_setting

EXIT_LEARNED, EXIT_INVALID, EXIT_TOO_FEW = 0, 2, 3


class CalibrateOptions(TypedDict):
    """What add_arguments parses."""

    panel: str
    variants: str | None


class Command(BaseCommand):
    help = "Learn a saved panel's calibration (the calibrated variant's offsets) from its runs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("panel", help="a saved panel's name or id")
        parser.add_argument(
            "--variants",
            default=None,
            help="learn from runs asked with these prompt variants, joined with + (none: "
            "no variant); default: the panel's own",
        )

    def handle(self, *args: object, **options: Unpack[CalibrateOptions]) -> None:
        try:
            panel = saved_panels.resolve(options["panel"], None)
            variants = None
            if options["variants"] is not None:
                try:
                    variants = variant_setting.named_variants(options["variants"])
                except ValueError as exc:
                    raise InvalidInput({"--variants": [str(exc)]}) from None
            learned = calibrate.learn(panel, variants=variants)
        except InvalidInput as exc:
            invalid_input.refuse(self.stderr, exc)
        names = [agent["name"] for agent in panel.agents]
        self.stdout.write(summary(panel.name, names, learned.calibration))
        if learned.voided:
            listed = ", ".join(str(pk) for pk in learned.voided)
            self.stdout.write(
                f"Voided certificate{'' if len(learned.voided) == 1 else 's'} {listed}: "
                "measured on the decisions the calibration before made."
            )
        if all(offset is None for offset in learned.calibration.offsets):
            sys.exit(EXIT_TOO_FEW)
        sys.exit(EXIT_LEARNED)


def summary(panel_name: str, names: list[str], learned: calibration.PanelCalibration) -> str:
    """What was learned, from how much, agent by agent."""
    runs = ", ".join(str(run) for run in learned.runs)
    answers = sum(learned.samples)
    lines = [
        f"Panel {panel_name}: {len(learned.runs)} run{'' if len(learned.runs) == 1 else 's'} "
        f"({runs}), {answers} labelled round-1 answer{'' if answers == 1 else 's'}."
    ]
    for name, offset, samples in zip(names, learned.offsets, learned.samples, strict=False):
        if offset is None:
            lines.append(
                f"  {name}: nothing learned from {samples} answers (needs "
                f"{calibration.MIN_SAMPLES}, at least {calibration.MIN_EACH} of each side)."
            )
        else:
            lines.append(f"  {name}: offset {offset:+.2f} from {samples} answers.")
    if all(offset is None for offset in learned.offsets):
        lines.append("Too few labelled answers to learn anything: nothing stored.")
    else:
        lines.append("Stored with the panel; judgements of the calibrated variant read it.")
    return "\n".join(lines)
