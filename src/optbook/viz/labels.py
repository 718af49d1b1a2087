"""Words around a figure: readable labels, a caption and a text alternative.

- :func:`pretty` turns the ASCII math that chapters write in labels ("lambda_{t+1}", "A^T A",
  "eta_k <= 1/sqrt k") into what a reader expects (λ<sub>t+1</sub>, A<sup>T</sup> A,
  η<sub>k</sub> ≤ 1/√k), using the small HTML subset plotly draws.
- :func:`caption` is the figure's title (what the book shows under the figure), or a short
  description when a chapter gave none.
- :func:`describe` says in words what the figure shows: the kind of plot, its axes and scales,
  the methods drawn, the labelled regions and the slider, for readers who cannot see it.
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterable

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "eps": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π",
    "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ",
    "Omega": "Ω",
}
_GREEK_RE = re.compile(r"(?<![A-Za-z])(" + "|".join(sorted(GREEK, key=len, reverse=True)) + r")(?![A-Za-z])")
_TAG_RE = re.compile(r"(</?[a-zA-Z][^>]*>)")
# A subscript or superscript attaches to a short symbol (x_t, λ_max, ||z||_2, f(x)^2), never to a
# word, so identifiers such as "log_levels" are left alone.
_BASE = (r"(?<![A-Za-z0-9])([A-Za-z]{1,2}|sum|prod|min|max|inf|sup|lim|det|prox|argmin|argmax"
         r"|[α-ωΑ-Ω]|[)|\]*])")
_SUB_BRACE = re.compile(_BASE + r"_(?:\{([^{}]+)\}|\(([^()]+)\))")
_SUB = re.compile(_BASE + r"_([A-Za-z0-9α-ω]+)")
_SUP_AFTER = r"(?<=[A-Za-z0-9α-ωΑ-Ω)}|\]*])"
_SUP_BRACE = re.compile(_SUP_AFTER + r"\^(?:\{([^{}]+)\}|\(([^()]+)\))")
_SUP = re.compile(_SUP_AFTER + r"\^(-?[A-Za-z0-9*]+)")
_SYMBOLS = (("<=", "≤"), (">=", "≥"), ("!=", "≠"), ("+-", "±"), ("->", "→"))
_SQRT = re.compile(r"\bsqrt\s*(?=[(A-Za-z0-9])")


def _pretty_text(text: str) -> str:
    text = _GREEK_RE.sub(lambda m: GREEK[m.group(1)], text)
    text = _SQRT.sub("√", text)
    for a, b in _SYMBOLS:
        text = text.replace(a, b)
    # Superscripts first: "r_i^2" still has the "i" a superscript attaches to.
    text = _SUP_BRACE.sub(lambda m: f"<sup>{m.group(1) or m.group(2)}</sup>", text)
    text = _SUP.sub(r"<sup>\1</sup>", text)
    text = _SUB_BRACE.sub(lambda m: f"{m.group(1)}<sub>{m.group(2) or m.group(3)}</sub>", text)
    return _SUB.sub(r"\1<sub>\2</sub>", text)


def pretty(text):
    """Greek letters, sub- and superscripts, ≤ ≥ ≠ ± → √ in a plotly label; text inside HTML
    tags and labels typeset as LaTeX (``$...$``) are left as they are. Non-strings pass through."""
    if not isinstance(text, str) or "$" in text or "%{" in text:
        return text
    parts = _TAG_RE.split(text)
    return "".join(p if _TAG_RE.fullmatch(p) else _pretty_text(p) for p in parts)


def plain(text) -> str:
    """A label as plain text (tags dropped, line breaks as spaces, entities decoded)."""
    if text is None:
        return ""
    text = re.sub(r"<br\s*/?>", " ", str(text), flags=re.I)
    return html.unescape(_TAG_RE.sub("", text)).strip()


def title_text(title) -> str:
    if isinstance(title, dict):
        return title.get("text") or ""
    return title or ""


def _axis_name(layout: dict, ref: str) -> str:
    """``x2`` -> layout key ``xaxis2``."""
    return ref[0] + "axis" + ref[1:]


def _axis_words(layout: dict, ref: str, default: str) -> str:
    axis = layout.get(_axis_name(layout, ref)) or {}
    words = plain(title_text(axis.get("title"))) or default
    if axis.get("type") == "log" and "log" not in words.lower():
        words += " (log scale)"
    return words


KINDS = {"contour": "contour map", "heatmap": "heat map", "bar": "bar chart", "histogram": "histogram",
         "box": "box plot", "violin": "violin plot", "surface": "3-D surface", "scatter3d": "3-D curves",
         "histogram2dcontour": "density map", "pie": "pie chart"}


def _kind(traces: list[dict]) -> str:
    types = [t.get("type") or "scatter" for t in traces]
    for t in ("contour", "heatmap", "surface", "bar", "histogram", "box", "violin", "scatter3d"):
        if t in types:
            base = KINDS[t]
            return base
    modes = [t.get("mode") or "lines" for t in traces if (t.get("type") or "scatter") == "scatter"]
    if modes and all("lines" not in m for m in modes):
        return "scatter plot"
    return "line chart"


def _names(traces: Iterable[dict]) -> list[str]:
    seen: list[str] = []
    for t in traces:
        name = plain(t.get("name"))
        if name and t.get("showlegend") is not False and name not in seen:
            seen.append(name)
    return seen


def _join(words: list[str], limit: int = 8) -> str:
    if len(words) > limit:
        words = words[:limit] + [f"{len(words) - limit} more"]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _panels(fig: dict) -> list[tuple[str, list[dict]]]:
    """Traces grouped by subplot: ("x2 y2", traces) for cartesian axes, ("scene2", traces)."""
    groups: dict[str, list[dict]] = {}
    for t in fig.get("data") or []:
        if (t.get("type") or "scatter") in ("scatter3d", "surface", "mesh3d", "cone"):
            key = t.get("scene") or "scene"
        else:
            key = f"{t.get('xaxis') or 'x'} {t.get('yaxis') or 'y'}"
        groups.setdefault(key, []).append(t)
    return list(groups.items())


def _panel_title(fig: dict, key: str) -> str:
    """The make_subplots title over a cartesian panel (an annotation centred above its domain)."""
    layout = fig.get("layout") or {}
    if " " not in key:
        return ""
    xref, yref = key.split()
    xd = (layout.get(_axis_name(layout, xref)) or {}).get("domain") or [0, 1]
    yd = (layout.get(_axis_name(layout, yref)) or {}).get("domain") or [0, 1]
    for a in layout.get("annotations") or []:
        if (a.get("xref") == "paper" and a.get("yref") == "paper" and a.get("showarrow") is False
                and abs(float(a.get("x", -9)) - (xd[0] + xd[1]) / 2) < 0.02
                and abs(float(a.get("y", -9)) - yd[1]) < 0.02):
            return plain(a.get("text"))
    return ""


def _panel_words(fig: dict, key: str, traces: list[dict]) -> str:
    layout = fig.get("layout") or {}
    kind = _kind(traces)
    if " " in key:
        xref, yref = key.split()
        y = _axis_words(layout, yref, "value")
        x = _axis_words(layout, xref, "x")
        words = f"{kind} of {y} against {x}"
        if any(t.get("type") in ("contour", "heatmap") for t in traces):
            bar = next((t.get("colorbar") for t in traces if t.get("colorbar")), {}) or {}
            zname = plain(title_text(bar.get("title")))
            words = f"{kind} of {zname or 'a function'} over {x} and {y}"
    else:
        scene = layout.get(key) or {}
        axes = [plain(title_text((scene.get(a) or {}).get("title"))) or a[0] for a in ("xaxis", "yaxis", "zaxis")]
        words = f"{kind} over axes {', '.join(axes)}"
    names = _names(traces)
    if names:
        over_map = any(t.get("type") in ("contour", "heatmap", "surface") for t in traces)
        words += f", {'with paths of' if over_map else 'showing'} {_join(names)}"
    return words


def _regions(fig: dict) -> list[str]:
    """Labels placed in data coordinates along the top (named phases, marked regions)."""
    out = []
    for a in (fig.get("layout") or {}).get("annotations") or []:
        if str(a.get("xref", "")).startswith("x") and a.get("yref") == "paper" and a.get("showarrow") is False:
            text = plain(a.get("text"))
            if text and text not in out:
                out.append(text)
    return out


def describe(fig: dict, sliders: list[dict] | None = None) -> str:
    """A text alternative of a plotly figure dict: what it plots, against what, for whom."""
    panels = [(k, ts) for k, ts in _panels(fig) if ts]
    if not panels:
        return "An empty figure."
    if len(panels) == 1:
        text = _panel_words(fig, *panels[0])
        text = text[0].upper() + text[1:] + "."
    else:
        parts = []
        for i, (key, traces) in enumerate(panels, 1):
            head = _panel_title(fig, key)
            parts.append(f"panel {i}{f' ({head})' if head else ''}: {_panel_words(fig, key, traces)}")
        text = f"{len(panels)} panels. " + "; ".join(p[0].upper() + p[1:] for p in parts) + "."
    regions = _regions(fig)
    if regions:
        text += f" Labelled regions: {_join(regions)}."
    for s in sliders or []:
        steps = s.get("steps") or []
        if steps:
            label = plain(s.get("label")) or "a parameter"
            text += (f" A slider sets {label} ({len(steps)} positions, from {plain(steps[0]['label'])} "
                     f"to {plain(steps[-1]['label'])}).")
    return text


def caption(fig: dict, sliders: list[dict] | None = None) -> str:
    """The caption as HTML: the figure's title (labels made pretty, LaTeX handed to MathJax), or
    the first sentence of its description when it has no title."""
    title = title_text((fig.get("layout") or {}).get("title"))
    if title:
        if "$" in title:  # plotly's LaTeX labels: let the page's MathJax typeset them
            parts = title.split("$")
            return "".join(sanitize(p) if i % 2 == 0 else f"\\({html.escape(p)}\\)" for i, p in enumerate(parts))
        return sanitize(pretty(title))
    return html.escape(_short_description(fig, sliders))


def _short_description(fig: dict, sliders: list[dict] | None) -> str:
    """One sentence: the description's first for one panel; the panels' titles (or axes) for several."""
    panels = [(k, ts) for k, ts in _panels(fig) if ts]
    if len(panels) <= 1:
        return describe(fig, sliders).split(". ")[0].rstrip(".") + "."
    layout = fig.get("layout") or {}
    heads = []
    for key, traces in panels:
        head = _panel_title(fig, key)
        if not head and " " in key:
            xref, yref = key.split()
            head = f"{_axis_words(layout, yref, 'value')} against {_axis_words(layout, xref, 'x')}"
        heads.append(head or _kind(traces))
    return f"{len(panels)} panels: " + "; ".join(heads) + "."


_ALLOWED = re.compile(r"</?(b|i|em|strong|sub|sup|br)\s*/?>", re.I)


def sanitize(text: str) -> str:
    """Keep plotly's text tags that make sense in a caption (b, i, em, sub, sup, br); escape the
    rest."""
    out, pos = [], 0
    for m in _ALLOWED.finditer(text):
        out.append(html.escape(_TAG_RE.sub("", text[pos:m.start()]), quote=False))
        out.append(m.group(0).lower())
        pos = m.end()
    out.append(html.escape(_TAG_RE.sub("", text[pos:]), quote=False))
    return "".join(out)


def _pretty_title(obj):
    if isinstance(obj, dict) and isinstance(obj.get("title"), dict) and "text" in obj["title"]:
        obj["title"] = {**obj["title"], "text": pretty(obj["title"]["text"])}
    elif isinstance(obj, dict) and isinstance(obj.get("title"), str):
        obj["title"] = pretty(obj["title"])


def _pretty_traces(traces: list[dict]) -> list[dict]:
    out = []
    for t in traces:
        t = dict(t)
        if "name" in t:
            t["name"] = pretty(t["name"])
        if isinstance(t.get("text"), str):  # text drawn on the plot (mode "text"), shown on hover
            t["text"] = pretty(t["text"])
        elif isinstance(t.get("text"), list) and all(isinstance(x, str) for x in t["text"]):
            t["text"] = [pretty(x) for x in t["text"]]
        for key in ("colorbar", "legendgrouptitle"):
            if isinstance(t.get(key), dict):
                t[key] = dict(t[key])
                _pretty_title(t[key]) if key == "colorbar" else t[key].update(text=pretty(t[key].get("text")))
        if isinstance(t.get("marker"), dict) and isinstance(t["marker"].get("colorbar"), dict):
            t["marker"] = {**t["marker"], "colorbar": dict(t["marker"]["colorbar"])}
            _pretty_title(t["marker"]["colorbar"])
        out.append(t)
    return out


def _pretty_layout(layout: dict) -> dict:
    layout = dict(layout)
    for key, value in list(layout.items()):
        if re.fullmatch(r"[xy]axis\d*|coloraxis\d*|legend\d*", key) and isinstance(value, dict):
            layout[key] = dict(value)
            _pretty_title(layout[key])
            if isinstance(layout[key].get("colorbar"), dict):
                layout[key]["colorbar"] = dict(layout[key]["colorbar"])
                _pretty_title(layout[key]["colorbar"])
        elif re.fullmatch(r"scene\d*", key) and isinstance(value, dict):
            layout[key] = dict(value)
            for ax in ("xaxis", "yaxis", "zaxis"):
                if isinstance(value.get(ax), dict):
                    layout[key][ax] = dict(value[ax])
                    _pretty_title(layout[key][ax])
    if layout.get("annotations"):
        layout["annotations"] = [{**a, "text": pretty(a.get("text"))} if "text" in a else a
                                 for a in layout["annotations"]]
    return layout


def pretty_figure(fig: dict) -> dict:
    """The figure dict with :func:`pretty` labels: trace names, axis, colour-bar and legend
    titles and annotations, in the figure and in its frames (hover templates are left alone)."""
    out = dict(fig)
    out["data"] = _pretty_traces(fig.get("data") or [])
    out["layout"] = _pretty_layout(fig.get("layout") or {})
    if fig.get("frames"):
        frames = []
        for f in fig["frames"]:
            f = dict(f)
            if f.get("data"):
                f["data"] = _pretty_traces(f["data"])
            if f.get("layout"):
                f["layout"] = _pretty_layout(f["layout"])
            frames.append(f)
        out["frames"] = frames
    return out
