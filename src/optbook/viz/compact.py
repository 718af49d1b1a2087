"""Lighter figures for the web page: the same picture in fewer bytes.

A slider figure stores one frame per slider position, and plotly writes every number as a
float64; chapter 10's two slider figures weighed 1 MB each. :func:`compact_figure` rewrites a
figure dict (as plotly's ``to_dict`` gives it) so that

- numeric arrays of coordinates are float32 (int where they are integers) in plotly's base64
  typed-array form, where float32 holds the values without loss for the eye (a relative error
  below 1e-7; values beyond float32's range keep float64);
- a frame no longer repeats what every frame shares with the figure (a fixed grid, a trace's
  style, a background contour): plotly merges a frame into the plotted traces, so what is the
  same everywhere need only be stated once;
- colours of plotly's former default palette, which chapters may still name, become the book's
  colour-blind-safe ones (:data:`optbook.viz.style.LEGACY_COLORS`), and lines that only colour
  tells apart get a dash each (:func:`distinct_dashes`).
"""
from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from .style import DASHES, LEGACY_COLORS

#: Trace attributes holding coordinates (the bulk of a figure's bytes).
ARRAY_KEYS = ("x", "y", "z", "customdata", "surfacecolor")
#: Shorter arrays stay as JSON lists (base64 only pays off on longer ones).
MIN_LENGTH = 8
_FLOAT32_MAX, _FLOAT32_TINY = 3.0e38, 1.0e-37
_LEGACY = {k.lower(): v for k, v in LEGACY_COLORS.items()}


def decode_array(value: Any) -> np.ndarray | None:
    """A numeric array from a list or plotly's ``{"dtype", "bdata", "shape"}`` form, else None."""
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
            arr = arr.reshape(dims)
        return arr
    if isinstance(value, np.ndarray):
        return value if value.dtype.kind in "fiub" else None
    if isinstance(value, (list, tuple)) and value:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return None
        # A list of None/strings/dates is not numeric; a ragged list fails the dtype above.
        if any(isinstance(v, (str, bool)) for v in (value if arr.ndim == 1 else value[0])):
            return None
        return arr
    return None


def encode_array(arr: np.ndarray) -> dict | list:
    """plotly's typed-array form of ``arr`` in the smallest faithful dtype."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.uint8)
    if arr.dtype.kind in "iu":
        lo, hi = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
        for dt in ("i1", "u1", "i2", "u2", "i4", "u4"):
            info = np.iinfo(np.dtype(dt))
            if info.min <= lo and hi <= info.max:
                arr = arr.astype(dt)
                break
        else:
            arr = arr.astype("f8")
    else:
        arr = arr.astype(float)
        finite = np.abs(arr[np.isfinite(arr)])
        nonzero = finite[finite > 0]
        fits = nonzero.size == 0 or (nonzero.max() < _FLOAT32_MAX and nonzero.min() > _FLOAT32_TINY)
        arr = arr.astype("f4" if fits else "f8")
    out = {"dtype": arr.dtype.str.lstrip("<>|="), "bdata": base64.b64encode(arr.tobytes()).decode("ascii")}
    if arr.ndim > 1:
        out["shape"] = ", ".join(str(s) for s in arr.shape)
    return out


def _compact_trace(trace: dict) -> dict:
    out = dict(trace)
    for key in ARRAY_KEYS:
        arr = decode_array(out.get(key))
        if arr is not None and arr.size >= MIN_LENGTH and arr.dtype.kind in "fiub":
            out[key] = encode_array(arr)
    return out


def _recolor(value: Any) -> Any:
    if isinstance(value, str):
        return _LEGACY.get(value.lower(), value)
    if isinstance(value, dict):
        return {k: _recolor(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_recolor(v) for v in value]
    return value


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


_MISSING = object()
_SHARED = object()


def _strip_shared(values: list, base: Any) -> Any:
    """``values`` (one per frame) with what every frame shares with ``base`` taken out: _SHARED
    when all equal ``base``, else the per-frame values, dicts stripped key by key (plotly merges a
    frame's nested attributes into the trace, so a shared ``marker.colorbar`` can go while a
    changing ``marker.color`` stays)."""
    canon_base = _canon(base) if base is not _MISSING else None
    if canon_base is not None and all(v is not _MISSING and _canon(v) == canon_base for v in values):
        return _SHARED
    nested = [base, *values]
    if all(isinstance(v, dict) and "bdata" not in v for v in nested):  # a typed array is one value
        out: list[dict] = [{} for _ in values]
        for key in dict.fromkeys(k for v in values for k in v):
            sub = _strip_shared([v.get(key, _MISSING) for v in values], base.get(key, _MISSING))
            if sub is _SHARED:
                continue
            for o, s in zip(out, sub):
                if s is not _MISSING:
                    o[key] = s
        return out
    return values


def _share_frame_data(data: list[dict], frames: list[dict]) -> list[dict]:
    """Drop from every frame what all frames share with the figure's own traces, and traces left
    with nothing to change (the frames then name the traces they change in ``traces``)."""
    if not frames or any("traces" in f for f in frames):
        return frames
    n = len(data)
    if any(len(f.get("data") or []) != n for f in frames):
        return frames
    per_trace = []
    for i, trace in enumerate(data):
        values = [{k: v for k, v in f["data"][i].items() if k != "type"} for f in frames]
        stripped = _strip_shared(values, {k: v for k, v in trace.items() if k != "type"})
        per_trace.append(None if stripped is _SHARED or not any(stripped) else stripped)
    keep = [i for i in range(n) if per_trace[i] is not None]
    out = []
    for k, f in enumerate(frames):
        g = {key: v for key, v in f.items() if key != "data"}
        g["data"] = [per_trace[i][k] for i in keep]
        g["traces"] = keep
        out.append(g)
    return out


def distinct_dashes(fig: dict, max_methods: int = 6) -> dict:
    """Give each named line a dash of its own where a chapter drew several in solid colour only
    (lines told apart by colour alone are lost to colour-blind readers and in greyscale). A name
    (or legend group) keeps one dash across panels and frames; explicit dashes, and figures with
    more than ``max_methods`` such lines (a sweep coloured along a scale), are left alone."""
    def plain_line(t: dict) -> bool:
        return ((t.get("type") or "scatter") == "scatter" and "lines" in (t.get("mode") or "lines")
                and not (t.get("line") or {}).get("dash") and bool(t.get("legendgroup") or t.get("name")))

    def key(t: dict) -> str:
        return t.get("legendgroup") or t.get("name")

    data = fig.get("data") or []
    names = list(dict.fromkeys(key(t) for t in data if plain_line(t) and t.get("showlegend") is not False))
    if not 2 <= len(names) <= max_methods:
        return fig
    dash = {n: DASHES[k % len(DASHES)] for k, n in enumerate(names)}

    def restyle(traces: list[dict]) -> list[dict]:
        return [{**t, "line": {**(t.get("line") or {}), "dash": dash[key(t)]}} if plain_line(t) and key(t) in dash
                else t for t in traces]

    out = {**fig, "data": restyle(data)}
    if fig.get("frames"):
        out["frames"] = [{**f, "data": restyle(f["data"])} if f.get("data") else f for f in fig["frames"]]
    return out


def compact_figure(fig: dict) -> dict:
    """The figure dict with float32 coordinates, frames that state only what changes, and the
    book's palette in place of plotly's former defaults (see the module's docstring)."""
    fig = distinct_dashes(_recolor(fig))
    data = [_compact_trace(t) for t in fig.get("data") or []]
    frames = []
    for f in fig.get("frames") or []:
        f = dict(f)
        if f.get("data"):
            f["data"] = [_compact_trace(t) for t in f["data"]]
        frames.append(f)
    out = {**fig, "data": data}
    if frames:
        out["frames"] = _share_frame_data(data, frames)
    return out
