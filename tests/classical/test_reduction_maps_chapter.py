"""Tests of chapter 03's experiments, claims and figures (optbook.classical.reduction_maps_chapter)."""
import numpy as np
import pytest

from optbook.classical import reduction_maps_chapter as ex
from optbook.classical import reduction_maps as rm

NAN, INF = float("nan"), float("inf")


# --------------------------------------------------------------------------- block quadratics


def test_kept_sweep_gain_falls_as_fewer_coordinates_are_eliminated():
    sw = ex.kept_sweep()
    speed = sw["speedup_gd"]
    assert np.all(np.diff(speed) < 0) and speed[0] > 30 and speed[-1] < 1.5
    assert np.all(sw["kappa_F"] <= sw["kappa_f"]) and np.all(np.diff(sw["kappa_F"]) > 0)
    # Work: eliminating nothing useful leaves GD's cost; the setup is a large share of a direct solve.
    assert sw["work_gd_reduced"][-1] == pytest.approx(sw["work_gd"][-1], rel=0.3)
    assert sw["work_setup"][0] > 0.8 * sw["work_direct"][0]
    assert np.all(sw["iters_cg"] <= 3 * ex.QUAD_N)


def test_cg_counter_on_a_matrix_with_three_eigenvalues():
    """Conjugate gradients ends in at most as many iterations as A has distinct eigenvalues."""
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((8, 8)))[0]
    A = Q @ np.diag([1.0, 1.0, 1.0, 4.0, 4.0, 9.0, 9.0, 9.0]) @ Q.T
    x_star = np.ones(8)
    b = A @ x_star

    def gap(x):
        return 0.5 * (x - x_star) @ A @ (x - x_star)

    it = ex._cg_iterations(lambda v: A @ v, b, np.zeros(8), gap, 1e-20, 50)
    assert it is not None and it <= 3
    assert ex._cg_iterations(lambda v: A @ v, b, x_star, gap, 1e-20, 50) == 0


def test_library_gd_matches_the_closed_form_counts_of_the_sweep():
    runs = ex.block_quadratic_runs()["runs"]
    one = ex.kept_experiment(5, 0)
    assert runs["joint GD"].nit == one["iters_gd"] and runs["reduced GD"].nit == one["iters_gd_reduced"]
    assert runs["reduced GD (pullback metric)"].success


def test_interlacing_draws_and_morse_bott_example():
    d = ex.schur_interlacing_draws(5)
    assert d["worst_violation"] <= 1e-10 and d["kappa_ratio_min"] >= 1.0 and d["checks"] == 5 * len(ex.KEPT)
    mb = ex.morse_bott_example(0.9)
    assert mb["mu_F"] == pytest.approx(mb["closed_form"]) and mb["mu_F"] < mb["mu_f"] / 100
    assert ex.morse_bott_example(-1.0)["mu_F"] == pytest.approx(2.0)     # graph normal to S: full curvature


# --------------------------------------------------------------------------- matrix factorisation


def test_tuning_is_the_same_grid_for_every_method_on_held_out_seeds():
    assert not set(ex.TUNING_SEEDS) & set(ex.CLAIM_SEEDS)
    tunings = [ex.factorization_tuning(m) for m in ex.MF_METHODS]
    assert {t.size for t in tunings} == {len(ex.MF_STEPS)}
    for t in tunings:
        assert t.seeds == ex.TUNING_SEEDS and not t.on_edge() and np.isfinite(t.best_score)
    joint = ex.factorization_tuning("joint GD")
    assert np.isnan(joint.scores[-1])                      # the grid reaches past joint GD's stability limit


def test_factorisation_runs_reach_the_minimum():
    runs = ex.factorization_runs(0)
    prob, _ = ex.factorization_problem(0)
    for name, res in runs.items():
        assert res.success, name
        assert res.trace["gap"][-1] <= ex.MF_TOL
    assert runs["reduced GD"].nit < runs["joint GD"].nit
    assert np.isfinite(ex.factorization_cg_evaluations(0, False))
    assert np.isfinite(ex.factorization_cg_evaluations(0, True))


def test_speedups_phases_and_als_beside_the_claim():
    """The claim's per-problem statistic, its split into the approach and the local phase, and ALS."""
    flops = rm.factorization_flops(*ex.MF_SIZE)
    steps = {m: ex.factorization_tuning(m).best["step"] for m in ("joint GD", "reduced GD")}
    its = {m: ex.factorization_iterations(m, 0, steps[m]) for m in steps}
    # Every evaluation charged, the start's and the stopping check's included; a failure costs the cap.
    assert ex.factorization_work([3.0, np.nan], "joint GD").tolist() == [4 * flops["joint GD"],
                                                                        (ex.MF_MAXITER + 1) * flops["joint GD"]]
    expected = (its["joint GD"] + 1) * flops["joint GD"] / ((its["reduced GD"] + 1) * flops["reduced GD"])
    assert ex.factorization_speedups((0,))[0] == pytest.approx(expected)
    for m in steps:
        head, tail = ex.factorization_phases(m, 0)
        assert head + tail == its[m] and head > 0 and tail > 0
    assert ex.factorization_als_sweeps(0) < its["reduced GD"]


def test_records_tables():
    rows = ex.factorization_records((0, 1))
    names = [r["method"] for r in rows]
    assert names[:4] == ["joint GD", "reduced GD", "alternating GD", "scalar reduction (control)"]
    assert rows[0]["median work / joint GD's"] == pytest.approx(1.0)
    spectra = ex.spectra_records((0,))
    assert spectra[0]["beta_F"] <= spectra[0]["beta_f"] and spectra[0]["mu_F"] >= spectra[0]["mu_f"]


def test_spectra_need_the_tight_zero_threshold_on_a_badly_conditioned_gauge():
    """Seed 4's gauge puts f's smallest curvature at ~5e-9 beta: the card's 1e-8 would call it zero."""
    loose, tight = ex.factorization_spectra(4, 1e-8), ex.factorization_spectra(4, ex.SPECTRA_REL_TOL)
    assert loose["f"].n_zero > 9 and tight["f"].n_zero == 9 == tight["F_pullback"].n_zero
    assert tight["F_pullback"].mu >= tight["f"].mu


# --------------------------------------------------------------------------- figures and explorers


def test_figures_and_explorers():
    assert ex.interlacing_spectra(0.0, 4)["kappa"]["H11 (freeze x2)"] == pytest.approx(
        ex.interlacing_spectra(0.0, 4)["kappa"]["S (reduced, Euclidean)"])
    for fig, n_frames in ((ex.bias_slider_figure(), len(ex.BIAS_XBARS)),
                          (ex.toy_slider_figure(), len(ex.TOY_STEPS)),
                          (ex.interlacing_slider_figure(), len(ex.COUPLINGS))):
        assert len(fig.frames) == n_frames and fig.layout.sliders
    for explorer in (ex.EXPLORER_BIAS, ex.EXPLORER_TOY, ex.EXPLORER_INTERLACING):
        assert len(explorer.render().data) >= 3
    # kappa of f grows with the feature mean; the reduced one is kappa of the covariance, (1+rho)/(1-rho)
    kap = [ex.bias_experiment(xb, 0.6)["kappa_f"] for xb in ex.BIAS_XBARS]
    assert np.all(np.diff(kap) > 0) and kap[-1] > 100
    assert {round(ex.bias_experiment(xb, 0.6)["kappa_F"], 9) for xb in ex.BIAS_XBARS} == {4.0}
    assert len(ex.kept_sweep_figure().data) == 7
    assert len(ex.factorization_tuning_figure().data) == 3 * len(ex.MF_METHODS)


def test_jacobi_rescaling_barely_helps_the_block_quadratic():
    for seed in range(3):
        H, _ = rm.random_block_quadratic(50, 5, rng=seed)
        kj, kh = ex.jacobi_condition(H), rm.curvature_constants(H).kappa
        assert kj > 0.2 * kh and rm.curvature_constants(rm.schur_complement(H, 5)).kappa < kj / 5


# --------------------------------------------------------------------------- bad input


def _bad_calls():
    return [
        ("schur_interlacing_draws", lambda: ex.schur_interlacing_draws(0), "n_draws"),
        ("schur_interlacing_draws", lambda: ex.schur_interlacing_draws(2, kept=[]), "kept"),
        ("schur_interlacing_draws", lambda: ex.schur_interlacing_draws(2, kept=[60]), "kept"),
        ("schur_interlacing_draws", lambda: ex.schur_interlacing_draws(2, seed=-1), "seed"),
        ("kept_experiment", lambda: ex.kept_experiment(50, 0), "n1"),
        ("kept_experiment", lambda: ex.kept_experiment(5, 0, tol=0.0), "tol"),
        ("kept_experiment", lambda: ex.kept_experiment(5, NAN), "seed"),
        ("kept_sweep", lambda: ex.kept_sweep(draws=0), "draws"),
        ("kept_sweep", lambda: ex.kept_sweep(kept="abc"), "kept"),
        ("kept_sweep", lambda: ex.kept_sweep(tol=NAN), "tol"),
        ("block_quadratic_runs", lambda: ex.block_quadratic_runs(n1=50), "n1"),
        ("block_quadratic_runs", lambda: ex.block_quadratic_runs(seed=-1), "seed"),
        ("morse_bott_example", lambda: ex.morse_bott_example(NAN), "slope"),
        ("morse_bott_example", lambda: ex.morse_bott_example(INF), "slope"),
        ("factorization_problem", lambda: ex.factorization_problem(-1), "seed"),
        ("factorization_problem", lambda: ex.factorization_problem(1.5), "seed"),
        ("factorization_run", lambda: ex.factorization_run("newton", 0, 0.1), "method"),
        ("factorization_run", lambda: ex.factorization_run("joint GD", 0, 0.0), "step"),
        ("factorization_run", lambda: ex.factorization_run("joint GD", 0, 0.1, maxiter=-1), "maxiter"),
        ("factorization_iterations", lambda: ex.factorization_iterations("joint GD", 0, NAN), "step"),
        ("factorization_tuning", lambda: ex.factorization_tuning("newton"), "method"),
        ("factorization_tuning", lambda: ex.factorization_tuning("joint GD", ()), "seeds"),
        ("factorization_tuning", lambda: ex.factorization_tuning("joint GD", [-1]), "seeds"),
        ("factorization_cg_evaluations", lambda: ex.factorization_cg_evaluations(0, "yes"), "reduced"),
        ("factorization_cg_evaluations", lambda: ex.factorization_cg_evaluations(0, True, maxiter=0), "maxiter"),
        ("factorization_als_sweeps", lambda: ex.factorization_als_sweeps(-1), "seed"),
        ("factorization_work", lambda: ex.factorization_work([3.0], "newton"), "method"),
        ("factorization_speedups", lambda: ex.factorization_speedups(()), "seeds"),
        ("factorization_speedups", lambda: ex.factorization_speedups((NAN,)), "seeds"),
        ("factorization_phases", lambda: ex.factorization_phases("newton", 0), "method"),
        ("factorization_phases", lambda: ex.factorization_phases("joint GD", 0, gap=1e-12), "gap"),
        ("factorization_phases", lambda: ex.factorization_phases("joint GD", 0, gap=NAN), "gap"),
        ("factorization_spectra", lambda: ex.factorization_spectra(0, rel_tol=2.0), "rel_tol"),
        ("factorization_spectra", lambda: ex.factorization_spectra(-3), "seed"),
        ("factorization_runs", lambda: ex.factorization_runs(-1), "seed"),
        ("factorization_records", lambda: ex.factorization_records(()), "seeds"),
        ("factorization_records", lambda: ex.factorization_records((1.5,)), "seeds"),
        ("spectra_records", lambda: ex.spectra_records([]), "seeds"),
        ("bias_experiment", lambda: ex.bias_experiment(NAN, 0.0), "xbar"),
        ("bias_experiment", lambda: ex.bias_experiment(1.0, 1.0), "rho"),
        ("bias_experiment", lambda: ex.bias_experiment(1.0, 0.0, iters=0), "iters"),
        ("bias_experiment", lambda: ex.bias_experiment(1.0, 0.0, tol=-1.0), "tol"),
        ("bias_traces", lambda: ex.bias_traces(INF, 0.0), "xbar"),
        ("bias_figure", lambda: ex.bias_figure(rho=2.0), "rho"),
        ("bias_slider_figure", lambda: ex.bias_slider_figure(NAN), "rho"),
        ("toy_factorization", lambda: ex.toy_factorization(0.0), "step"),
        ("toy_factorization", lambda: ex.toy_factorization(0.1, iters=0), "iters"),
        ("toy_traces", lambda: ex.toy_traces(-1.0), "step"),
        ("toy_figure", lambda: ex.toy_figure(NAN), "step"),
        ("interlacing_spectra", lambda: ex.interlacing_spectra(1.0, 3), "coupling"),
        ("interlacing_spectra", lambda: ex.interlacing_spectra(0.5, 12), "n1"),
        ("interlacing_traces", lambda: ex.interlacing_traces(NAN, 3), "coupling"),
        ("interlacing_figure", lambda: ex.interlacing_figure(0.5, 0), "n1"),
        ("interlacing_slider_figure", lambda: ex.interlacing_slider_figure(0), "n1"),
        ("jacobi_condition", lambda: ex.jacobi_condition(np.full((2, 2), NAN)), "H"),
        ("jacobi_condition", lambda: ex.jacobi_condition(-np.eye(2)), "diagonal"),
    ]


#: Public callables without inputs to validate (figures of fixed data, claims run by the registry).
NO_INPUT = {"factorization_tuning_figure", "kept_sweep_figure", "toy_problem", "toy_slider_figure",
            "claim_factorisation_speedup", "claim_schur_interlacing", "claim_pullback_spectra"}


def test_bad_inputs_raise_value_errors_naming_the_argument():
    for name, call, match in _bad_calls():
        with pytest.raises(ValueError, match=match):
            call()
        assert hasattr(ex, name)


def test_every_public_callable_is_checked_for_bad_input():
    public = {n for n, o in vars(ex).items() if not n.startswith("_") and callable(o)
              and getattr(o, "__module__", None) == ex.__name__}
    covered = {name for name, _, _ in _bad_calls()} | NO_INPUT
    assert public - covered == set(), f"public callables without bad-input tests: {sorted(public - covered)}"


def test_the_method_module_does_not_import_plotly():
    """What a user imports for the method stays light: no plotly, no widgets."""
    import subprocess
    import sys

    code = ("import sys; import optbook.classical.reduction_maps; "
            "print(any(m == 'plotly' or m.startswith('plotly.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
