"""A panel's certificate as the pages show it (judgements/models/certificates.py): the one in
force for its agents, or the newest voided one to say why none holds; its figures in
words; the form that certifies a panel from its page; and its curve drawn as a chart."""

from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib.auth.models import User

from judgements.evaluations import certify
from judgements.evaluations.charts import percent
from judgements.models import Certificate, Panel

CERTIFIED, NOT_CERTIFIED, VOIDED = "certified", "not_certified", "voided"


def shown_certificate(panel: Panel) -> Certificate | None:
    """The certificate a panel's pages show: its newest for its current agents (certified
    or not), else the newest one voided, so the page can say why none holds; None when
    the panel was never certified."""
    found = certify.current(panel)
    if found is None:
        voided = panel.certificates.filter(voided_at__isnull=False)
        found = voided.order_by("-created_at", "-id").first()
    return found


@dataclass(frozen=True)
class CertificateView:
    """A certificate's figures as the pages write them ("91.2 %")."""

    certificate: Certificate

    @property
    def state(self) -> str:
        if self.certificate.voided_at is not None:
            return VOIDED
        return CERTIFIED if self.certificate.certified else NOT_CERTIFIED

    @property
    def rule_words(self) -> str:
        rule = self.certificate.the_rule
        return rule.describe() if rule is not None else ""

    @property
    def bound(self) -> str:
        return percent(self.certificate.bound)

    @property
    def coverage(self) -> str:
        return percent(self.certificate.coverage)

    @property
    def accuracy(self) -> str:
        return percent(self.certificate.accuracy)

    @property
    def target(self) -> str:
        return percent(self.certificate.target)

    @property
    def confidence(self) -> str:
        """The confidence of the bound, 1 - delta."""
        return percent(1 - self.certificate.delta)

    @property
    def test_size(self) -> int:
        return self.certificate.test_size

    @property
    def selection_size(self) -> int:
        return self.certificate.selection_size

    @property
    def seed(self) -> int | None:
        return (self.certificate.split or {}).get("seed")

    @property
    def suite_names(self) -> list[str]:
        """The suites it was measured on, each once, in the order of its runs."""
        names = [entry.get("suite", {}).get("name", "") for entry in self.certificate.suites or []]
        return [name for name in dict.fromkeys(names) if name]

    @property
    def best_bound(self) -> str:
        return percent((self.certificate.best or {}).get("bound"))

    @property
    def best_words(self) -> str:
        """The closest rule an uncertified panel reached, in words."""
        best = self.certificate.best or {}
        if not best:
            return ""
        return (
            f"{best.get('description', 'every verdict')}, keeping "
            f"{percent(best.get('coverage'))} of the held-out verdicts"
        )

    @property
    def summary(self) -> str:
        """One short line for the panel list."""
        if self.state == VOIDED:
            return "Certificate voided"
        if self.state == NOT_CERTIFIED:
            return f"Not certified: best bound {self.best_bound} of {self.target}"
        return f"Certified: at least {self.bound} on {self.coverage} of verdicts"


class CheckWords(certify.Checked):
    """A certificate's check on a run, with its sentence (`check_words`)."""

    words: str


def check_words(check: certify.Checked | None) -> CheckWords | None:
    """A certificate's rule on a run it was not measured on (certify.checked_on), in
    words: "kept 31 of 40, 29 right: 93.5 % (90 % interval 82.0 % to 98.7 %)"."""
    if check is None:
        return None
    if not check["kept"]:
        words = f"kept none of the {check['decided']} decided verdicts"
    else:
        words = (
            f"kept {check['kept']} of {check['decided']} decided verdicts, {check['right']} "
            f"right: {percent(check['accuracy'])} ({percent(check['confidence'])} interval "
            f"{percent(check['low'])} to {percent(check['high'])})"
        )
    return {**check, "words": words}


def view_of(certificate: Certificate | None) -> CertificateView | None:
    return None if certificate is None else CertificateView(certificate)


# --- certifying from the panel's page ---------------------------------------------------


class CertifyForm(forms.Form):
    """The panel page's "Certify this panel": the accuracy to reach, in percent, and the
    risk that the bound is wrong (judgements/evaluations/certify.py takes both as
    fractions)."""

    target = forms.FloatField(
        label="Target accuracy (%)",
        initial=round(certify.DEFAULT_TARGET * 100),
        help_text="The accuracy the verdicts kept must reach at least: above 0 and below 100.",
    )
    delta = forms.FloatField(
        label="Risk that the bound is wrong (delta)",
        initial=certify.DEFAULT_DELTA,
        help_text="Above 0 and below 1: 0.1 gives a bound that holds with 90 % confidence.",
    )

    def clean_target(self) -> float:
        value: float = self.cleaned_data["target"]
        if not 0 < value < 100:
            raise forms.ValidationError("Must be above 0 and below 100 (a percentage).")
        return value

    def clean_delta(self) -> float:
        value: float = self.cleaned_data["delta"]
        if not 0 < value < 1:
            raise forms.ValidationError("Must be above 0 and below 1.")
        return value

    def add_refusal(self, errors: dict[str, list[str]]) -> None:
        """certify()'s InvalidInput, each message beside its field: `target` and `delta`
        beside theirs, `runs` (no run to measure on) above the button."""
        for name, messages in errors.items():
            self.add_error(name if name in self.fields else None, messages)


def certify_panel(panel: Panel, user: User, form: CertifyForm) -> Certificate:
    """Measure the panel as the valid form asks; raises InvalidInput as certify() does."""
    return certify.certify(
        panel,
        user=user,
        target=form.cleaned_data["target"] / 100,
        delta=form.cleaned_data["delta"],
    )


# --- the certificate's curve as a chart -----------------------------------------------

CURVE_WIDTH, CURVE_HEIGHT = 560, 300
CURVE_LEFT, CURVE_RIGHT, CURVE_TOP, CURVE_BOTTOM = 56, 130, 24, 52
# End labels closer than this (px) are pushed apart, so none is written over another.
LABEL_GAP = 15
SQUARE = 6  # px, the bound's mark


@dataclass(frozen=True)
class CurvePoint:
    threshold: float
    bound: float | None
    coverage: float | None
    x: float
    bound_y: float
    coverage_y: float
    summary: str

    accuracy: float | None = None

    @property
    def coverage_words(self) -> str:
        return percent(self.coverage)

    @property
    def bound_words(self) -> str:
        return percent(self.bound)

    @property
    def accuracy_words(self) -> str:
        return percent(self.accuracy)

    # The bound's mark is a square centred on its point (the coverage's a dot).
    @property
    def square_x(self) -> float:
        return round(self.x - SQUARE / 2, 1)

    @property
    def square_y(self) -> float:
        return round(self.bound_y - SQUARE / 2, 1)


@dataclass(frozen=True)
class Tick:
    position: float
    text: str


@dataclass(frozen=True)
class EndLabel:
    y: float
    text: str
    series: str


@dataclass(frozen=True)
class CurveChart:
    """Bound and coverage against the confidence threshold (Certificate.curve), with the
    target as a line: geometry only, the template draws it (and lists every point)."""

    title: str
    description: str
    width: int
    height: int
    plot_left: float
    plot_right: float
    plot_top: float
    plot_bottom: float
    bound_points: str  # SVG polyline points, "x,y x,y ..."
    coverage_points: str
    target_y: float
    points: tuple[CurvePoint, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    labels: tuple[EndLabel, ...]
    label_x: float
    tick_label_x: float
    axis_label_y: float
    # The threshold of the certified rule (or of the best one), marked by a vertical line.
    chosen_x: float | None
    chosen_text: str


def spread(labels: list[EndLabel], top: float, bottom: float) -> tuple[EndLabel, ...]:
    """The labels in order down the chart, each at least LABEL_GAP below the one above."""
    placed: list[EndLabel] = []
    for label in sorted(labels, key=lambda label: label.y):
        y = max(label.y, placed[-1].y + LABEL_GAP) if placed else label.y
        placed.append(EndLabel(y=y, text=label.text, series=label.series))
    overflow = placed[-1].y - bottom if placed else 0
    if overflow > 0:  # pushed below the chart: move the whole stack up
        placed = [EndLabel(max(p.y - overflow, top), p.text, p.series) for p in placed]
    return tuple(placed)


@dataclass(frozen=True)
class CurveAxes:
    """Where a threshold and a share go on the curve's chart."""

    low: float
    high: float
    left: float = CURVE_LEFT
    right: float = CURVE_WIDTH - CURVE_RIGHT
    top: float = CURVE_TOP
    bottom: float = CURVE_HEIGHT - CURVE_BOTTOM

    def x_of(self, threshold: float) -> float:
        return round(
            self.left + (threshold - self.low) / (self.high - self.low) * (self.right - self.left),
            1,
        )

    def y_of(self, share: float | None) -> float:
        share = min(max(share or 0.0, 0.0), 1.0)
        return round(self.bottom - share * (self.bottom - self.top), 1)


def curve_axes(thresholds: list[float]) -> CurveAxes:
    low = min(thresholds)
    high = max(thresholds)
    if high - low < 0.05:  # one threshold, or a few close together: widen the axis
        middle = (low + high) / 2
        low, high = max(0.0, middle - 0.05), min(1.0, middle + 0.05)
    return CurveAxes(low, high)


def curve_point(point: dict[str, Any], axes: CurveAxes) -> CurvePoint:
    threshold = float(point["threshold"])
    return CurvePoint(
        threshold=threshold,
        bound=point.get("bound"),
        coverage=point.get("coverage"),
        accuracy=point.get("accuracy"),
        x=axes.x_of(threshold),
        bound_y=axes.y_of(point.get("bound")),
        coverage_y=axes.y_of(point.get("coverage")),
        summary=(
            f"Threshold {threshold:.3g}: bound {percent(point.get('bound'))}, "
            f"coverage {percent(point.get('coverage'))}, "
            f"accuracy {percent(point.get('accuracy'))}."
        ),
    )


def curve_chart(certificate: Certificate) -> CurveChart | None:
    """The chart of a certificate's curve; None when it has no curve (its rule reads no
    confidence, so there is no threshold to draw against)."""
    curve = [point for point in certificate.curve or [] if point.get("threshold") is not None]
    if not curve:
        return None
    axes = curve_axes([float(point["threshold"]) for point in curve])
    low, high, x_of, y_of = axes.low, axes.high, axes.x_of, axes.y_of
    points = tuple(
        curve_point(point, axes)
        for point in sorted(curve, key=lambda point: float(point["threshold"]))
    )
    # Each line is named at its right end, beside its last value.
    last = points[-1]
    labels = spread(
        [
            EndLabel(last.bound_y, f"bound {percent(last.bound)}", "bound"),
            EndLabel(last.coverage_y, f"coverage {percent(last.coverage)}", "coverage"),
            EndLabel(y_of(certificate.target), f"target {percent(certificate.target)}", "target"),
        ],
        axes.top,
        axes.bottom,
    )
    rule = certificate.rule or (certificate.best or {}).get("rule") or {}
    chosen = rule.get("threshold")
    return CurveChart(
        title="Bound and coverage against the confidence threshold",
        description=(
            f"For each threshold on the {rule.get('source') or 'panel'} confidence: the share "
            "of labelled verdicts kept (coverage) and the lower bound on their accuracy, "
            f"against the target of {percent(certificate.target)}. A higher threshold keeps "
            "fewer verdicts; the bound must reach the target."
        ),
        width=CURVE_WIDTH,
        height=CURVE_HEIGHT,
        plot_left=axes.left,
        plot_right=axes.right,
        plot_top=axes.top,
        plot_bottom=axes.bottom,
        bound_points=" ".join(f"{p.x},{p.bound_y}" for p in points),
        coverage_points=" ".join(f"{p.x},{p.coverage_y}" for p in points),
        target_y=y_of(certificate.target),
        points=points,
        x_ticks=tuple(Tick(x_of(t), f"{t:.2f}") for t in (low, (low + high) / 2, high)),
        y_ticks=tuple(Tick(y_of(share), percent(share)) for share in (0, 0.25, 0.5, 0.75, 1)),
        labels=labels,
        label_x=axes.right + 8,
        tick_label_x=axes.left - 6,
        axis_label_y=axes.bottom + 40,
        chosen_x=x_of(float(chosen)) if chosen is not None and low <= chosen <= high else None,
        chosen_text="certified threshold" if certificate.certified else "best threshold",
    )
