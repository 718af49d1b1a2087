"""Chapter 06: classifiers whose decision sets are star-shaped polyhedra (Brandenburg and
Jochemko, NeurIPS 2025).

What a user imports lives in :mod:`.model` and is re-exported here, so
``from optbook.classical.starshaped import StarClassifier, fit_star`` needs neither plotly nor
the book's experiments. :mod:`.experiments` holds the chapter's data, baselines, comparison and
claims; :mod:`.figures` its plotly figures and live explorers.
"""
from .model import (
    LAM_GRID,
    U_FLOOR,
    Fan,
    StarClassifier,
    chamber_signs,
    check_labels,
    check_params,
    confusion,
    equiangular_fan,
    fan_2d,
    fit_star,
    kite_coordinates,
    kite_fan,
    kkt_residual,
    line_fan,
    log_likelihood,
    log_likelihood_grad,
    log_likelihood_hess,
    select_lambda,
    star_classify,
    type_b_coordinates,
    type_b_fan,
)

__all__ = [
    "LAM_GRID", "U_FLOOR", "Fan", "StarClassifier", "chamber_signs", "check_labels", "check_params", "confusion",
    "equiangular_fan", "fan_2d", "fit_star", "kite_coordinates", "kite_fan", "kkt_residual", "line_fan",
    "log_likelihood", "log_likelihood_grad", "log_likelihood_hess", "select_lambda", "star_classify",
    "type_b_coordinates", "type_b_fan",
]
