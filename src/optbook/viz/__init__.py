"""Plotly figure builders shared by every chapter.

Importing this package registers the book's plotly renderer during the build (see
:mod:`optbook.viz.renderer`); elsewhere plotly's own renderer choice is left alone.
"""
from .convergence import LOG_FLOOR, Phase, convergence_figure, convergence_traces, phase_layout
from .landscape import grid_values, landscape_figure, landscape_traces, path_traces
from .renderer import building_book, use_book_renderer_if_building
from .slider import SliderStep, frame_note, slider_figure
from .style import base_layout, color_for
from .glue import glue, glue_claim
from .scoreboard import ChapterTable, IdentityTable, margin_figure
from .tables import ClaimTable, RecordsTable, claim_table, records_table
from .tuning import tuning_figure

use_book_renderer_if_building()

__all__ = [
    "LOG_FLOOR", "ChapterTable", "ClaimTable", "IdentityTable", "Phase", "RecordsTable", "SliderStep",
    "base_layout", "building_book", "claim_table", "color_for", "convergence_figure", "convergence_traces",
    "glue", "glue_claim", "grid_values", "landscape_figure", "landscape_traces", "margin_figure",
    "frame_note", "path_traces", "phase_layout", "records_table", "slider_figure", "tuning_figure",
    "use_book_renderer_if_building",
]
