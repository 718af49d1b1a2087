"""What several chapters share: the run record, test problems, line searches, checks, seeding."""
from .fdcheck import DerivativeCheck, check_derivatives, fd_gradient, fd_hessian
from .fits import loglog_slope, semilog_slope
from .linesearch import LineSearchResult, armijo_backtracking, strong_wolfe, weak_wolfe
from .parallel import BACKENDS, pmap
from .projections import project_ball, project_simplex
from .problems import (
    AffineComposition,
    CubicRegularized,
    LogisticRegression,
    Problem,
    Quadratic,
    Rosenbrock,
    conditioning_map,
    make_cubic,
    make_logistic,
    quadratic_with_condition,
    random_orthogonal,
)
from .trace import Result, RunRecorder, Trace, thin_indices
from .tuning import Tuning, grid_search
from .validate import (
    RngLike,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
    check_real,
    check_spd,
    check_vector,
)

__all__ = [
    "AffineComposition", "BACKENDS", "CubicRegularized", "DerivativeCheck", "LineSearchResult",
    "LogisticRegression", "Problem", "Quadratic", "Result", "RunRecorder", "RngLike", "Rosenbrock", "Trace",
    "Tuning", "armijo_backtracking", "as_rng", "check_choice", "check_derivatives", "check_in_range",
    "check_int", "check_matrix", "check_positive", "check_real", "check_spd", "check_vector",
    "conditioning_map", "fd_gradient", "fd_hessian", "grid_search", "loglog_slope", "semilog_slope", "thin_indices", "make_cubic", "make_logistic", "pmap", "project_ball", "project_simplex",
    "quadratic_with_condition", "random_orthogonal", "strong_wolfe", "weak_wolfe",
]
