"""Live explorers: ipywidgets controls redrawing a plotly figure from the same builder as the
static slider figure.

In JupyterLab, Notebook 7 and VS Code the figure is a :class:`optbook.canvas.PlotlyCanvas`, which
redraws in place (``Plotly.react``): replacing the whole figure in an ``ipywidgets.Output`` cost
300-550 ms a move in JupyterLab, most of it plotly building a new plot, for a 25-75 ms callback.
Colab does not load third-party widgets by default, so there the figure is redrawn into an
``Output``; a figure shown inside an ``Output`` cannot find plotly.js in Colab (colabtools #5889),
so it goes into an ``<iframe srcdoc>`` holding a complete page, where the browser loads plotly.js
before the script that draws. During the book build no widget is created: a kernel-less page
cannot drive them, and their saved state would pull scripts from CDNs.

A chapter module declares its explorers once::

    EXPLORER = Explorer("01", "conditioning", figure_fn,
                        {"log_kappa": Slider("log10 kappa", [0, 2, 4, 6, 8], 4)})

and the notebook calls ``EXPLORER.show()``; ``make bench`` and the tests time every registered
explorer's callback.
"""
from __future__ import annotations

import html
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go

from .viz.renderer import building_book

BUILD_MESSAGE = ("Live explorer: run this cell in Binder, Colab or Jupyter to move the controls; "
                 "the slider figure above is its static twin.")


@dataclass
class Slider:
    """A slider over a fixed grid of values (discrete, so results can be cached)."""

    label: str
    values: Sequence[Any]
    value: Any
    fmt: str = "{:g}"

    def __post_init__(self) -> None:
        if len(self.values) < 2:
            raise ValueError(f"slider {self.label!r} needs at least two values")
        if self.value not in list(self.values):
            raise ValueError(f"slider {self.label!r}: value {self.value!r} is not among its values")

    def widget(self):
        import ipywidgets as w

        opts = [(self.fmt.format(v), v) for v in self.values]
        return w.SelectionSlider(options=opts, value=self.value, description=self.label,
                                 continuous_update=False, style={"description_width": "initial"},
                                 layout=w.Layout(width="100%", max_width="480px"))

    def samples(self) -> list[Any]:
        return list(self.values)


@dataclass
class Toggle:
    """A checkbox."""

    label: str
    value: bool = False

    def widget(self):
        import ipywidgets as w

        return w.Checkbox(value=self.value, description=self.label, style={"description_width": "initial"})

    def samples(self) -> list[Any]:
        return [False, True]


@dataclass
class Choice:
    """A drop-down over named options."""

    label: str
    options: Sequence[Any]
    value: Any

    def __post_init__(self) -> None:
        if self.value not in list(self.options):
            raise ValueError(f"choice {self.label!r}: value {self.value!r} is not an option")

    def widget(self):
        import ipywidgets as w

        return w.Dropdown(options=list(self.options), value=self.value, description=self.label,
                          style={"description_width": "initial"})

    def samples(self) -> list[Any]:
        return list(self.options)


Control = Slider | Toggle | Choice
_REGISTRY: dict[tuple[str, str], "Explorer"] = {}


def in_colab() -> bool:
    return "google.colab" in sys.modules


def _display_in_iframe(fig: go.Figure) -> None:
    """Colab's way: the figure as a complete page in an ``<iframe srcdoc>`` (see the module's notes)."""
    from IPython.display import HTML, display

    page = fig.to_html(include_plotlyjs="cdn", full_html=True, default_width="100%")
    height = int(fig.layout.height or 450) + 30
    display(HTML(f'<iframe srcdoc="{html.escape(page)}" style="width:100%;height:{height}px;'
                 'border:none"></iframe>'))


@dataclass
class Explorer:
    """A figure function of named controls, shown live with ipywidgets.

    ``figure(**values)`` must return a ``plotly.graph_objects.Figure`` quickly (under 150 ms):
    precompute or cache what it needs.
    """

    chapter: str
    name: str
    figure: Callable[..., go.Figure]
    controls: dict[str, Control]
    description: str = ""
    last_ms: float = field(default=float("nan"), init=False)
    last_cpu_ms: float = field(default=float("nan"), init=False)

    def __post_init__(self) -> None:
        if not self.controls:
            raise ValueError("controls must not be empty")
        _REGISTRY[(self.chapter, self.name)] = self

    def defaults(self) -> dict[str, Any]:
        return {k: c.value for k, c in self.controls.items()}

    def render(self, **values: Any) -> go.Figure:
        """The figure for these control values (defaults for the rest), timed in ``last_ms`` (wall)
        and ``last_cpu_ms`` (this thread's CPU time)."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise ValueError(f"unknown controls {sorted(unknown)}; this explorer has {sorted(self.controls)}")
        t0, c0 = time.perf_counter(), time.thread_time()
        fig = self.figure(**{**self.defaults(), **values})
        self.last_ms = 1e3 * (time.perf_counter() - t0)
        self.last_cpu_ms = 1e3 * (time.thread_time() - c0)
        return fig

    def latency_ms(self) -> dict[str, float]:
        """Callback time over a sweep of each control in turn (others at defaults), first call
        excluded as warm-up. Returns median and max wall time and median CPU time, in
        milliseconds (on a loaded machine the wall time also counts the wait for a core; the CPU
        time is what a move costs, measured on one torch thread: idle intra-op workers spin while
        they wait for a core, and the spinning counts as CPU time; on a loaded 2-core machine a
        93 ms move of ch17's overlap explorer measured 450 ms)."""
        torch = sys.modules.get("torch")  # only if a chapter already uses it: no import for this
        threads = torch.get_num_threads() if torch else None
        if torch:
            torch.set_num_threads(1)
        try:
            self.render()
            times, cpu = [], []
            for key, control in self.controls.items():
                for value in control.samples():
                    self.render(**{key: value})
                    times.append(self.last_ms)
                    cpu.append(self.last_cpu_ms)
        finally:
            if torch:
                torch.set_num_threads(threads)
        return {"median_ms": statistics.median(times), "max_ms": max(times),
                "median_cpu_ms": statistics.median(cpu), "n": len(times)}

    def show(self):
        """Display the live explorer (returns the widget box); during the book build only a note."""
        if building_book():
            print(BUILD_MESSAGE)
            return None
        import ipywidgets as w
        from IPython.display import display

        inputs = {k: c.widget() for k, c in self.controls.items()}
        status = w.HTML()
        fig = self.render()
        if in_colab():
            canvas = w.Output(layout=w.Layout(min_height="420px"))

            def draw(fig):
                with canvas:
                    canvas.clear_output(wait=True)
                    _display_in_iframe(fig)
        else:
            from .canvas import PlotlyCanvas

            canvas = PlotlyCanvas(fig)
            draw = canvas.draw

        def redraw(_change=None):
            t0 = time.perf_counter()  # the kernel's whole move: the callback and sending the figure
            draw(self.render(**{k: wid.value for k, wid in inputs.items()}))
            status.value = f"<small>redrawn in {1e3 * (time.perf_counter() - t0):.0f} ms</small>"

        for wid in inputs.values():
            wid.observe(redraw, names="value")
        box = w.VBox([w.HBox(list(inputs.values()), layout=w.Layout(flex_flow="row wrap")), status, canvas])
        display(box)
        if in_colab():
            draw(fig)
        status.value = f"<small>drawn in {self.last_ms:.0f} ms</small>"
        return box


def registered_explorers(chapter: str | None = None) -> list[Explorer]:
    """Every explorer declared by an imported chapter module."""
    from .claims import load_all

    load_all()
    return [e for (ch, _), e in sorted(_REGISTRY.items()) if chapter is None or ch == chapter]
