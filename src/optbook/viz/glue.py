"""Numbers in the prose come from the executed results, never typed by hand.

A chapter glues a measured figure once, ``glue("gd_ratio", ratio, "{:.0f}")``, and its prose
cites it as ``{glue:text}`gd_ratio```; myst-nb replaces the role with the stored text when the
book is built, so the text and the measurement cannot drift apart. Outside a myst-nb kernel
(Colab, a plain Python script) gluing is a no-op that returns the formatted text.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..claims import ClaimResult


def format_value(value: Any, fmt: str | Callable[[Any], str] | None = None) -> str:
    """``fmt`` applied to ``value`` (a format string like ``"{:.2f}"`` or a function); by default
    4 significant digits for a float, the value itself for anything else."""
    if callable(fmt):
        return str(fmt(value))
    if fmt is not None:
        return fmt.format(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _myst_glue() -> Callable | None:
    try:
        from IPython import get_ipython
        from myst_nb import glue as myst_glue
    except ImportError:
        return None
    return myst_glue if get_ipython() is not None else None


def glue(name: str, value: Any, fmt: str | Callable[[Any], str] | None = None) -> str:
    """Store ``value``, formatted, under ``name`` for ``{glue:text}`name``` in the prose, without
    displaying it. Returns the text."""
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"name must be a non-empty string without spaces, got {name!r}")
    text = format_value(value, fmt)
    myst_glue = _myst_glue()
    if myst_glue is not None:
        # Glued as a str: its text/plain is the quoted repr, which {glue:text} unquotes with
        # literal_eval and pastes verbatim ("+0.004", "0.010"); a bare number would be re-parsed
        # and lose its sign or trailing zeros. A format spec in the role still applies.
        myst_glue(name, text, display=False)
    return text


def glue_claim(result: ClaimResult, prefix: str | None = None,
               formats: Mapping[str, str | Callable[[Any], str]] | None = None) -> dict[str, str]:
    """Glue a claim result: every measured value as ``prefix.key`` (``formats`` per key), and
    ``prefix.verdict``, ``prefix.summary``, ``prefix.seeds`` (their number) and, for a
    reproduction, ``prefix.control`` ("fails" or "meets") and ``prefix.control_summary``.
    ``prefix`` defaults to the claim's name. Returns name -> text."""
    prefix = prefix or result.name
    formats = dict(formats or {})
    unknown = set(formats) - set(result.measured)
    if unknown:
        raise ValueError(f"formats names keys that {result.key} did not measure: {sorted(unknown)}")
    out = {f"{prefix}.{k}": glue(f"{prefix}.{k}", v, formats.get(k)) for k, v in result.measured.items()}
    out[f"{prefix}.verdict"] = glue(f"{prefix}.verdict", result.verdict)
    out[f"{prefix}.summary"] = glue(f"{prefix}.summary", result.summary or "-")
    out[f"{prefix}.seeds"] = glue(f"{prefix}.seeds", len(result.seeds))
    if result.control_holds is not None:
        out[f"{prefix}.control"] = glue(f"{prefix}.control", "meets" if result.control_holds else "fails")
        out[f"{prefix}.control_summary"] = glue(f"{prefix}.control_summary", result.control_summary or "-")
    return out
