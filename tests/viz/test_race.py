"""The race page's figure and table builders."""
import numpy as np
import pytest

from optbook.core import Trace, Tuning
from optbook.race import Entry, ProblemClass, RaceResult, Solver
from optbook.race.classes import zo_instance
from optbook.viz.race import race_figure, race_table


def _result(logy=True):
    entries = []
    for name, final in (("a", 1e-20), ("b", 0.5)):
        t = Trace(name)
        t.record(objective=1.0, evals=0, seconds=0.0)
        t.record(objective=final, evals=10, seconds=0.1)
        entries.append(Entry(Solver(name, "02", "-", lambda *a: None, {"lr": [1]}),
                             Tuning(name, [{"lr": 1}], np.array([0.0])), [t, t, t]))
    p = ProblemClass("toy", zo_instance, budget=10, unit="call", metric="gap", logy=logy)
    return RaceResult(p, entries, (0, 1, 2), (9,))


def test_one_line_and_one_band_per_method_best_first_floored_on_a_log_axis():
    fig = race_figure(_result())
    lines = [t for t in fig.data if t.mode == "lines" and t.showlegend is not False]
    assert [t.name for t in lines] == ["a (ch02)", "b (ch02)"]
    assert len(fig.data) == 4 and fig.layout.yaxis.type == "log"
    assert min(lines[0].y) == pytest.approx(1e-16)          # 1e-20 drawn at the floor
    assert race_figure(_result(logy=False)).layout.yaxis.type != "log"


def test_table_rows_best_first():
    table = race_table(_result())
    assert [r["method"] for r in table.rows] == ["a (ch02)", "b (ch02)"]
    assert "<table" in table._repr_html_()


@pytest.mark.parametrize("build", [race_figure, race_table])
def test_bad_input(build):
    with pytest.raises(ValueError, match="result"):
        build("not a race")


def test_table_is_cards_on_a_phone_and_drops_the_target_column_without_a_target():
    html = race_table(_result())._repr_html_()
    assert "optbook-cards" in html and 'data-label="method"' in html
    assert not any(k.startswith("calls to") for k in race_table(_result()).rows[0])


def test_table_text_is_escaped_once():
    res = _result()
    res.entries[0].solver = Solver("a", "02", "-", lambda *a: None, {"lr": [1]}, note="ch15's <twin>")
    html = race_table(res)._repr_html_()
    assert "ch15&#x27;s &lt;twin&gt;" in html and "&amp;" not in html
