"""Every registered live explorer answers a control move within budget, and builds its widgets."""
import pytest

from optbook.widgets import BUILD_MESSAGE, Choice, Explorer, Slider, Toggle, registered_explorers

EXPLORERS = registered_explorers()


@pytest.mark.parametrize("e", EXPLORERS, ids=lambda e: f"{e.chapter}.{e.name}")
def test_explorer_latency(e):
    lat = e.latency_ms()
    # Budget 150 ms per move (DESIGN.md); the median over a sweep of every control. Judged on CPU
    # time, which a shared, loaded machine does not inflate (wall time is reported beside it).
    assert lat["median_cpu_ms"] < 150, lat


@pytest.mark.parametrize("e", EXPLORERS, ids=lambda e: f"{e.chapter}.{e.name}")
def test_explorer_builds_live_widgets(e, monkeypatch):
    monkeypatch.delenv("OPTBOOK_BUILD", raising=False)
    box = e.show()
    assert box is not None and len(box.children) == 3


def test_explorer_prints_a_note_during_the_build(monkeypatch, capsys):
    monkeypatch.setenv("OPTBOOK_BUILD", "1")
    assert EXPLORERS[0].show() is None
    assert BUILD_MESSAGE in capsys.readouterr().out


def test_controls_validate():
    with pytest.raises(ValueError, match="at least two"):
        Slider("s", [1], 1)
    with pytest.raises(ValueError, match="not among"):
        Slider("s", [1, 2], 3)
    with pytest.raises(ValueError, match="not an option"):
        Choice("c", ["a"], "b")
    with pytest.raises(ValueError, match="controls"):
        Explorer("98", "empty", lambda: None, {})
    e = Explorer("98", "t", lambda flag: flag, {"flag": Toggle("flag")})
    with pytest.raises(ValueError, match="unknown controls"):
        e.render(other=1)


def test_the_canvas_holds_the_whole_figure_and_ships_plotly_js():
    import json

    import numpy as np
    import plotly.graph_objects as go

    from optbook.canvas import PlotlyCanvas

    first = go.Figure(go.Scatter(x=[0, 1], y=[1, 2], marker={"color": "red"}), layout={"title": {"text": "a"}})
    canvas = PlotlyCanvas(first)
    assert json.loads(canvas.figure) == json.loads(first.to_json())
    second = go.Figure(go.Bar(x=np.arange(3), y=[3, 1, 2]), layout={"title": {"text": "b"}})
    canvas.draw(second)      # the whole state each time: nothing of the first figure is left over
    assert json.loads(canvas.figure) == json.loads(second.to_json())
    assert "window.Plotly" in canvas._esm and "Plotly.react" in canvas._esm and "export default" in canvas._esm
    with pytest.raises(ValueError, match="fig must be a plotly"):
        canvas.draw({"data": []})
    with pytest.raises(ValueError, match="fig has animation frames"):
        canvas.draw(go.Figure(second.data, frames=[go.Frame(data=second.data)]))


@pytest.mark.filterwarnings("ignore:Consider using IPython.display.IFrame")  # Colab's iframe page, on purpose
def test_live_figure_draws_in_place_except_in_colab(monkeypatch):
    import json
    import sys
    import types

    import ipywidgets as w

    from optbook.canvas import PlotlyCanvas

    monkeypatch.delenv("OPTBOOK_BUILD", raising=False)
    e = EXPLORERS[0]
    box = e.show()
    canvas = box.children[2]
    assert isinstance(canvas, PlotlyCanvas)
    before = canvas.figure
    key, control = next(iter(e.controls.items()))
    other = next(v for v in control.samples() if v != control.value)
    box.children[0].children[0].value = other             # a move: the same widget, the new figure
    assert canvas.figure != before
    assert json.loads(canvas.figure) == json.loads(e.render(**{key: other}).to_json())
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    assert isinstance(e.show().children[2], w.Output)
