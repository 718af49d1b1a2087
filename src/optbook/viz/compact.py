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
  colour-blind-safe ones (:data:`optbook.viz.style.LEGACY_COLORS`).
"""
from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from .style import LEGACY_COLORS

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


def _share_frame_data(data: list[dict], frames: list[dict]) -> list[dict]:
    """Drop from every frame the trace attributes that all frames share with the figure's own
    traces, and traces left with nothing to change (naming the rest in ``traces``)."""
    if not frames or any("traces" in f for f in frames):
        return frames
    n = len(data)
    if any(len(f.get("data") or []) != n for f in frames):
        return frames
    shared: list[set[str]] = []
    for i, trace in enumerate(data):
        keys = set(trace)
        for f in frames:
            ft = f["data"][i]
            keys &= {k for k in ft if k in trace and _canon(ft[k]) == _canon(trace[k])}
        keys.discard("type")  # kept by plotly anyway; dropping it below costs nothing
        shared.append(keys | {"type"})
    keep = [i for i in range(n) if any(set(f["data"][i]) - shared[i] for f in frames)]
    out = []
    for f in frames:
        g = {k: v for k, v in f.items() if k != "data"}
        g["data"] = [{k: v for k, v in f["data"][i].items() if k not in shared[i]} for i in keep]
        g["traces"] = keep
        out.append(g)
    return out


def compact_figure(fig: dict) -> dict:
    """The figure dict with float32 coordinates, frames that state only what changes, and the
    book's palette in place of plotly's former defaults (see the module's docstring)."""
    fig = _recolor(fig)
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
