"""A saved panel's prompt variants (core/prompt_variants.py): the setting as it is typed
on a page or a command line and checked, and the variants a judgement started from the
panel runs (its own setting, else the site's default), which its certificates hold for.
"""

from judgements.core import prompt_variants
from judgements.core.errors import InvalidInput
from judgements.models.certificates import agents_fingerprint
from judgements.models.panels import Panel

# How the setting is typed on a page or a command line: names joined with "+", NO_VARIANTS
# for an explicit empty set, nothing at all for "not set".
NO_VARIANTS = "none"
SEPARATOR = "+"


def site_default_variants() -> frozenset[prompt_variants.Variant]:
    """The variants of a judgement started without a saved panel, or from a panel that
    sets none: `prompt_variants.DEFAULT`, where the measured winner is named. The single
    point where intake reads the site's default."""
    return prompt_variants.resolve(None)


def variants_for(panel: Panel | None) -> frozenset[prompt_variants.Variant]:
    """The variants a judgement started from `panel` runs when its caller names none: the
    panel's own setting ([] included: no variant), or the site's default when it has none
    (None) or there is no saved panel. InvalidInput naming `panel` when a stored setting
    no longer parses (a variant removed since it was saved)."""
    if panel is None or panel.prompt_variants is None:
        return site_default_variants()
    try:
        return prompt_variants.parse(panel.prompt_variants)
    except ValueError as exc:
        raise InvalidInput(
            {"panel": [f"The panel's prompt_variants are no longer valid: {exc}."]}
        ) from None


def fingerprint_of(panel: Panel) -> str:
    """What a certificate of the panel holds for: its agents and their variants now."""
    return agents_fingerprint(panel.agents, variants_for(panel))


def checked_variants(value: object) -> list[str] | None:
    """A panel's setting as given (a list of variant names, or None: not set), unchanged
    when valid; ValueError saying what is wrong (an unknown name, a name twice, or
    named_peers with decisions_only)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ValueError("Must be a list of prompt variant names, or null (not set).")
    if len(set(value)) < len(value):
        raise ValueError("A prompt variant is named twice.")
    try:
        prompt_variants.parse(value)
    except ValueError as exc:
        message = str(exc)
        if message.startswith("unknown"):
            raise ValueError("U" + message[1:] + ".") from None
        raise ValueError(f"{message}: choose one.") from None
    return list(value)


def variants_from_text(typed: str) -> list[str] | None:
    """The setting as typed: "decision_first+quote", NO_VARIANTS ([]), or blank (None: not
    set); ValueError as checked_variants."""
    typed = typed.strip()
    if not typed:
        return None
    if typed.lower() == NO_VARIANTS:
        return []
    return checked_variants([name.strip() for name in typed.split(SEPARATOR)])


def named_variants(typed: str) -> list[str]:
    """A command line's --variants: as variants_from_text, but blank is no answer (leave
    the option out for the panel's own)."""
    named = variants_from_text(typed)
    if named is None:
        raise ValueError(f"Name the variants, joined with {SEPARATOR}, or {NO_VARIANTS}.")
    return named


def variants_text(setting: list[str] | None) -> str:
    """The setting as variants_from_text reads it back."""
    if setting is None:
        return ""
    return SEPARATOR.join(setting) or NO_VARIANTS
