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
