"""Plotly figure builders shared by every chapter.

Importing this package registers the book's plotly renderer during the build (see
:mod:`optbook.viz.renderer`); elsewhere plotly's own renderer choice is left alone.
"""
from .convergence import LOG_FLOOR, Phase, convergence_figure, convergence_traces, phase_layout
from .landscape import grid_values, landscape_figure, landscape_traces, path_traces
from .renderer import building_book, use_book_renderer_if_building
from .slider import SliderStep, slider_figure
from .style import base_layout, color_for
from .tables import ClaimTable, RecordsTable, claim_table, records_table

use_book_renderer_if_building()

__all__ = [
    "LOG_FLOOR", "ClaimTable", "Phase", "RecordsTable", "records_table", "SliderStep", "base_layout", "building_book", "claim_table",
    "color_for", "convergence_figure", "convergence_traces", "grid_values", "landscape_figure",
    "landscape_traces", "path_traces", "phase_layout", "slider_figure", "use_book_renderer_if_building",
]
