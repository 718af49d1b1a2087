"""Chapter 18: the book's experiments, figures, live explorers and claims for Momentum-SAM. The
optimizers and the vectorized training engine are in :mod:`optbook.training.momentum_sam`.

The experiment is the card's: a 2-64-1 tanh MLP on noisy two moons (300 training points, 10% of
the labels flipped), batches of 32, 300 epochs, lr 0.1, momentum 0.9. The radii of MSAM and of
SAM are not fixed by hand: each is chosen on a validation split (2000 fresh points from the
training distribution) by the median validation loss over three held-out seeds, over a grid of
six radii per method. The claims then run on five other seeds.
"""
from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..claims import Criterion, Measured, claim
from ..core import Tuning, check_int, check_positive, grid_search
from ..viz import SliderStep, base_layout, color_for, slider_figure
from ..widgets import Explorer, Slider
from .momentum_sam import (
    METHODS,
    MOONS,
    TOY_SHARP,
    TOY_WIDE,
    MoonsRun,
    Spec,
    _norm,
    batched_lambda_max,
    _torch_mlp,
    init_mlp,
    make_optimizer,
    moons_data,
    toy_loss,
    toy_paths,
    train_moons,
)

# --------------------------------------------------------------------------- the protocol

EPOCHS = 300
CLAIM_SEEDS = (0, 1, 2, 3, 4)
#: Fast mode (the tests) runs the claim seeds too, without the tuning: on seeds 0-2 alone the
#: control's accuracy loss sat exactly on the 1-point threshold.
FAST_SEEDS = CLAIM_SEEDS
TUNING_SEEDS = (100, 101, 102)      # held out: radii are chosen on these, claims run on CLAIM_SEEDS
#: The radii the full tuning chose (fast mode uses them without tuning; the notebook checks them).
TUNED = {"MSAM": 0.5, "SAM": 0.2}
#: Six radii per method, each spanning a factor of 20 around the paper's ratio of the two radii
#: (its CIFAR configs: MSAM 3, SAM 0.2, a factor of 15).
MSAM_GRID = (0.1, 0.2, 0.3, 0.5, 1.0, 2.0)
SAM_GRID = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
#: The radius of the chapter's first registration, now shown as the over-regularised end.
FIRST_RHO = 1.0
#: Radius of the mechanism probe L_B(w - rho v/||v||) > L_B(w).
MONITOR_RHO = 0.5
SHARPNESS_RATIO = 0.5               # the card's threshold, fixed before any run
ACC_TOLERANCE = 0.01                # "within noise": one point of test accuracy
UNDERFIT = 0.05                     # a run more than 5 points below SGD-M's (same seed) underfits


RECORD_FIELDS = ("val_loss", "lambda_max", "train_loss", "test_acc")


def tuning_specs(seeds: tuple[int, ...] = TUNING_SEEDS) -> list[Spec]:
    """SGD-M and every radius of both grids on the held-out tuning seeds."""
    specs = [Spec("SGD-M", 0.0, s) for s in seeds]
    specs += [Spec("MSAM", r, s) for r in MSAM_GRID for s in seeds]
    return specs + [Spec("SAM", r, s) for r in SAM_GRID for s in seeds]


def run_tuning(seeds: tuple[int, ...] = TUNING_SEEDS) -> dict[tuple[str, float, int], dict[str, float]]:
    """Train every configuration of :func:`tuning_specs` (one vectorized run, about 10 s on one
    core) and return its record: (method, rho, seed) -> the fields of :data:`RECORD_FIELDS`."""
    run = train_moons(tuning_specs(seeds), epochs=EPOCHS, monitor_rho=MONITOR_RHO)
    return {(s.method, s.rho, s.seed): {f: float(getattr(run, f)[k]) for f in RECORD_FIELDS}
            for k, s in enumerate(run.specs)}


def write_tuning_record(path=None) -> str:
    """Run the tuning and store its record as the module ``momentum_sam_tuning.py`` (the
    notebook and the explorer read it instead of re-training 39 networks; a test re-trains some
    entries and compares). Command: ``PYTHONPATH=src python -m optbook.training.momentum_sam_chapter``."""
    from pathlib import Path
    record = run_tuning()
    lines = ['"""Chapter 18: the stored result of ``momentum_sam_chapter.run_tuning()``. Generated, do not edit:',
             'regenerate with ``PYTHONPATH=src python -m optbook.training.momentum_sam_chapter``;',
             '``tests/training/test_momentum_sam.py`` re-trains entries and compares."""',
             "", "RECORD = {"]
    lines += [f"    {key!r}: {{{', '.join(f'{f!r}: {v[f]!r}' for f in RECORD_FIELDS)}}}," for key, v in record.items()]
    lines.append("}")
    text = "\n".join(lines) + "\n"
    Path(path or Path(__file__).with_name("momentum_sam_tuning.py")).write_text(text)
    return text


def tuning_record(stored: bool = True) -> dict[tuple[str, float, int], dict[str, float]]:
    """The tuning's record: the stored one (default) or a fresh run (``stored=False``)."""
    if not stored:
        return run_tuning()
    from .momentum_sam_tuning import RECORD
    return RECORD


@lru_cache(maxsize=2)
def tunings(stored: bool = True) -> tuple[Tuning, Tuning]:
    """MSAM's and SAM's radius chosen by the same rule: the lowest median validation loss
    (logistic loss on :func:`~optbook.training.momentum_sam.validation_data`) over the held-out
    seeds, six radii each. The log loss, a proper scoring rule, separates settings that the
    accuracy on 2000 points cannot."""
    rec = tuning_record(stored)
    out = []
    for method, grid in (("MSAM", MSAM_GRID), ("SAM", SAM_GRID)):
        out.append(grid_search(method, lambda seed, rho, m=method: rec[(m, rho, seed)]["val_loss"],
                               {"rho": list(grid)}, TUNING_SEEDS))
    return out[0], out[1]


@lru_cache(maxsize=4)
def claim_run(epochs: int = EPOCHS, seeds: tuple[int, ...] = CLAIM_SEEDS, rho_msam: float = TUNED["MSAM"],
              rho_sam: float = TUNED["SAM"]) -> MoonsRun:
    """On the claim seeds: SGD-M, NAG, MSAM at its tuned radius and at :data:`FIRST_RHO`, SAM at
    its tuned radius, and the control (MSAM with the sign flipped, tuned radius)."""
    configs = [("SGD-M", 0.0), ("NAG", 0.0), ("MSAM", rho_msam), ("MSAM", FIRST_RHO), ("SAM", rho_sam),
               ("MSAM-flip", rho_msam)]
    specs = list(dict.fromkeys(Spec(m, r, s) for m, r in configs for s in seeds))
    return train_moons(specs, epochs=epochs, monitor_rho=MONITOR_RHO, snapshot=("SGD-M",))


def _crossing(loss: np.ndarray, target: float) -> tuple[int, int, float]:
    """Checkpoints (i, j) around the first record where ``loss`` falls to ``target`` and the
    weight t of j in the linear interpolation (in the loss) between them."""
    below = np.flatnonzero(loss <= target)
    if below.size == 0:
        return len(loss) - 1, len(loss) - 1, 0.0
    j = int(below[0])
    if j == 0:
        return 0, 0, 0.0
    return j - 1, j, float((loss[j - 1] - target) / (loss[j - 1] - loss[j]))


def matched_sgdm_sharpness(run: MoonsRun, seeds, train_losses) -> np.ndarray:
    """For each (seed, train loss): SGD-M's lambda_max (same seed) at the point of its own
    training where its full train loss first falls to that value, interpolated linearly in the
    loss between the two recorded epochs around it (records every 5 epochs); SGD-M's last
    lambda_max if it never gets that low. The reference of the sharpness ratio at matched fit: a
    network that fits less is flatter, so this compares like with like. One batched power
    iteration over the checkpoints needed."""
    where = {run.specs[i].seed: j for j, i in enumerate(run.snapshot_index)}
    picks, weights = [], []
    for seed, target in zip(seeds, train_losses):
        k = run.snapshot_index[where[seed]]
        i, j, t = _crossing(np.asarray(run.traces[k].objective), float(target))
        picks += [(i, where[seed]), (j, where[seed])]
        weights.append(t)
    P = {key: np.stack([v[r, c] for r, c in picks]) for key, v in run.snapshots.items()}
    X, y, _, _ = moons_data(**MOONS)
    lam = batched_lambda_max(P, X, y).reshape(-1, 2)
    t = np.asarray(weights)
    return lam[:, 0] + t * (lam[:, 1] - lam[:, 0])


def matched_ratio(run: MoonsRun, method: str, rho: float) -> np.ndarray:
    """Per claim seed (in seed order): lambda_max(method) / SGD-M's lambda_max at the same train loss."""
    idx = run.select(method, None if method in ("SGD-M", "NAG") else rho)
    idx = idx[np.argsort([run.specs[i].seed for i in idx])]
    ref = matched_sgdm_sharpness(run, [run.specs[i].seed for i in idx], run.train_loss[idx])
    return run.lambda_max[idx] / ref


def experiment(fast: bool = False) -> dict:
    """The tuned radii and the claim run (cached), as the claims and the figures use them.

    Fast mode (the tests) skips the tuning and uses :data:`TUNED`, the radii the full tuning
    chose; the notebook checks that the full tuning still chooses them."""
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    if fast:
        tun, rho_m, rho_s = None, TUNED["MSAM"], TUNED["SAM"]
    else:
        tun = tunings()
        rho_m, rho_s = tun[0].best["rho"], tun[1].best["rho"]
    return dict(tunings=tun, rho_msam=rho_m, rho_sam=rho_s, run=claim_run(EPOCHS, seeds, rho_m, rho_s), seeds=seeds)


def per_seed(run: MoonsRun, field: str, method: str, rho: float = 0.0) -> np.ndarray:
    """``field`` of the runs of (method, rho), in seed order."""
    idx = run.select(method, None if method in ("SGD-M", "NAG") else rho)
    order = np.argsort([run.specs[i].seed for i in idx])
    return np.asarray(getattr(run, field))[idx[order]]


def summary_rows(exp: dict) -> list[dict]:
    """Per method of the claim run: medians over seeds of lambda_max, train loss, test accuracy,
    and the gradient calls."""
    run = exp["run"]
    rows = []
    for method, rho in (("SGD-M", 0.0), ("NAG", 0.0), ("SAM", exp["rho_sam"]), ("MSAM", exp["rho_msam"]),
                        ("MSAM", FIRST_RHO), ("MSAM-flip", exp["rho_msam"])):
        label = Spec(method, rho).label
        rows.append({"method": label,
                     "lambda_max": round(float(np.median(per_seed(run, "lambda_max", method, rho))), 3),
                     "train_loss": round(float(np.median(per_seed(run, "train_loss", method, rho))), 3),
                     "test_acc": round(float(np.median(per_seed(run, "test_acc", method, rho))), 4),
                     "grad_calls": int(np.median(per_seed(run, "grad_calls", method, rho)))})
    return rows


def relative_radius(exp: dict, rho: float | None = None) -> float:
    """rho / ||w|| at the end of training, median over the claim seeds (MSAM at ``rho``, default
    its tuned radius): the radius as a share of this network's weight norm."""
    run, rho = exp["run"], exp["rho_msam"] if rho is None else rho
    idx = run.select("MSAM", rho)
    return float(np.median(rho / _norm({k: v[idx] for k, v in run.params.items()})))


PROBES = ("-v", "+v", "random")


def mechanism(run: MoonsRun, method: str = "SGD-M", probe: str = "-v") -> dict[str, np.ndarray]:
    """Per run of ``method`` (seed order), over the second half of training: the mean cosine of
    the batch gradient with the probe direction (``"-v"``: MSAM's, -v/||v||; ``"+v"``: the
    flipped one; ``"random"``: a fresh random unit direction every step) and the fraction of
    steps where the batch loss rose along the probe, L_B(w + rho u) > L_B(w)."""
    if probe not in PROBES:
        raise ValueError(f"probe must be one of {PROBES}, got {probe!r}")
    idx = run.select(method)
    idx = idx[np.argsort([run.specs[i].seed for i in idx])]
    half = run.cos.shape[0] // 2
    cos = {"-v": -run.cos, "+v": run.cos, "random": run.cos_rand}[probe]
    rise = {"-v": run.rise, "+v": run.rise_flip, "random": run.rise_rand}[probe]
    return {"cos_with_probe": np.nanmean(cos[half:, idx], axis=0),
            "rise_fraction": np.nanmean(rise[half:, idx], axis=0)}


# --------------------------------------------------------------------------- cost (torch, counted)


def torch_epoch_costs(epochs: int = 3, seed: int = 0, rho: dict[str, float] | None = None) -> dict[str, dict[str, float]]:
    """Train the moons MLP with each torch optimizer (SGD-M, NAG, SAM, MSAM) for ``epochs``
    epochs and measure gradient calls per step (counted: closure calls) and wall seconds per
    epoch (median over epochs; measured, not asserted). Radii: :data:`TUNED` unless ``rho``."""
    epochs = check_int(epochs, "epochs", minimum=1)
    rho = {**TUNED, **(rho or {})}
    X, y, _, _ = moons_data(**MOONS)
    Xt, yt = torch.tensor(X), torch.tensor(y)
    lossf = torch.nn.BCEWithLogitsLoss()
    out = {}
    for name in METHODS:
        net = _torch_mlp(seed)
        opt = make_optimizer(name, net.parameters(), rho=rho.get(name, 0.0))
        gen = torch.Generator().manual_seed(seed)
        calls, steps, per_epoch = 0, 0, []
        for _ in range(epochs):
            t0 = time.perf_counter()
            perm = torch.randperm(len(yt), generator=gen)
            for start in range(0, len(yt), 32):
                idx = perm[start:start + 32]

                def closure():
                    nonlocal calls
                    calls += 1
                    opt.zero_grad()
                    loss = lossf(net(Xt[idx]).squeeze(-1), yt[idx])
                    loss.backward()
                    return loss

                opt.step(closure)
                steps += 1
            per_epoch.append(time.perf_counter() - t0)
        out[name] = {"grads_per_step": calls / steps, "seconds_per_epoch": float(np.median(per_epoch))}
    return out


# --------------------------------------------------------------------------- claims


@claim("18", "At its validation-tuned radius MSAM halves the sharpness (at matched fit) at SGD's gradient "
       "count without losing accuracy; the sign-flipped perturbation flattens as much but loses accuracy",
       kind="reproduction",
       paper="MSAM lowers sharpness and reaches test accuracy close to SAM's, above SGD's, at SGD's cost "
             "(one gradient per step); CIFAR-100 and ImageNet (we did not retrieve the tables' numbers)",
       expect="over 5 seeds (0-4), 300 epochs, at equal gradient calls: sharpness AT MATCHED FIT, median over seeds "
              "of lambda_max(MSAM) / lambda_max(SGD-M, same seed, where its own full train loss first falls to "
              "MSAM's final train loss; linear interpolation between records every 5 epochs; SGD-M's last value if "
              "it never gets that low) <= 0.5 (the card's threshold), and median of test accuracy(MSAM) - test "
              "accuracy(SGD-M) >= -0.01; MSAM's and SAM's radii each chosen from 6 values by the lowest median "
              "validation loss on held-out seeds 100-102 (a validation split of 2000 points from the training "
              "distribution). History, disclosed: (1) a first registration fixed rho = 1 (7-25% of this network's "
              "weight norm) and lost 8 points of accuracy; it is shown as the over-regularised end. (2) A second "
              "compared raw lambda_max at the end of training (ratio 0.35); its sign-flipped control also passed "
              "that sharpness criterion (0.48) and failed only through accuracy, and the accuracy half had been "
              "joined to the sharpness half after this was seen. Raw lambda_max is confounded by fit (the flipped "
              "run fits worse, and a network that fits less is flatter), so the ratio is now taken at matched "
              "train loss; this rule was fixed before the re-run that it decides",
       control="MSAM with the sign of its perturbation flipped, gradient at w + rho v/||v||, same tuned radius",
       name="sharpness")
def claim_sharpness(fast: bool = False, control: bool = False) -> Measured:
    exp = experiment(fast)
    run, rho = exp["run"], exp["rho_msam"]
    method = "MSAM-flip" if control else "MSAM"
    sgd_lam, sgd_acc = per_seed(run, "lambda_max", "SGD-M"), per_seed(run, "test_acc", "SGD-M")
    raw = per_seed(run, "lambda_max", method, rho) / sgd_lam
    ratio = matched_ratio(run, method, rho)
    diff = per_seed(run, "test_acc", method, rho) - sgd_acc
    sam_ratio = matched_ratio(run, "SAM", exp["rho_sam"])
    first_ratio = matched_ratio(run, "MSAM", FIRST_RHO)
    first_diff = per_seed(run, "test_acc", "MSAM", FIRST_RHO) - sgd_acc
    calls = per_seed(run, "grad_calls", method, rho)
    flip_ratio = matched_ratio(run, "MSAM-flip", rho)
    flip_diff = per_seed(run, "test_acc", "MSAM-flip", rho) - sgd_acc
    equal = bool(np.all(calls == per_seed(run, "grad_calls", "SGD-M")))
    values = {"ratio": np.median(ratio), "ratio_min": ratio.min(), "ratio_max": ratio.max(),
              "ratio_raw": np.median(raw), "ratio_raw_min": raw.min(), "ratio_raw_max": raw.max(),
              "ratio_flip": np.median(flip_ratio), "ratio_flip_min": flip_ratio.min(),
              "ratio_flip_max": flip_ratio.max(), "acc_diff_flip": np.median(flip_diff),
              "train_loss_flip": np.median(per_seed(run, "train_loss", "MSAM-flip", rho)),
              "acc_diff": np.median(diff), "acc_diff_min": diff.min(), "acc_diff_max": diff.max(),
              "acc_msam": np.median(per_seed(run, "test_acc", method, rho)), "acc_sgdm": np.median(sgd_acc),
              "acc_sam": np.median(per_seed(run, "test_acc", "SAM", exp["rho_sam"])),
              "lambda_sgdm": np.median(sgd_lam), "lambda_msam": np.median(per_seed(run, "lambda_max", method, rho)),
              "train_loss_msam": np.median(per_seed(run, "train_loss", method, rho)),
              "train_loss_sgdm": np.median(per_seed(run, "train_loss", "SGD-M")),
              "ratio_sam": np.median(sam_ratio), "ratio_first": np.median(first_ratio),
              "acc_diff_first": np.median(first_diff), "rho_msam": rho, "rho_sam": exp["rho_sam"],
              "rho_relative": relative_radius(exp), "rho_relative_first": relative_radius(exp, FIRST_RHO),
              "sam_underfit": float(np.sum(per_seed(run, "test_acc", "SAM", exp["rho_sam"]) < sgd_acc - UNDERFIT)),
              "msam_underfit": float(np.sum(diff < -UNDERFIT)),
              "grad_calls": float(np.median(calls)), "grad_calls_sam": float(np.median(
                  per_seed(run, "grad_calls", "SAM", exp["rho_sam"])))}
    # The proxy shows the phenomenon only if a sharpness-aware method flattens here at all:
    # SAM, tuned the same way, must lower lambda_max at matched fit.
    return Measured(values, criteria=[Criterion("ratio", "<=", SHARPNESS_RATIO),
                                      Criterion("acc_diff", ">=", -ACC_TOLERANCE)],
                    holds=equal, seeds=exp["seeds"], precondition=bool(np.median(sam_ratio) < 1.0),
                    summary=f"{'sign-flipped control: ' if control else ''}lambda_max ratio to SGD-M at matched "
                            f"fit {np.median(ratio):.2f} ({ratio.min():.2f}-{ratio.max():.2f}; raw "
                            f"{np.median(raw):.2f}), accuracy "
                            f"{100 * np.median(diff):+.1f} points (rho = {rho:g})",
                    details=exp)


@claim("18", "The mechanism: late in SGD-M training the batch gradient points against the momentum",
       kind="reproduction",
       paper="the current mini-batch gradient is negatively correlated with the momentum, so a step along "
             "-v/||v|| goes uphill on the batch, as SAM's ascent step does (the paper's analysis; no number retrieved)",
       expect="over the second half of SGD-M training, median over 5 seeds: cos(g_B, -v/||v||) > 0 and the batch "
              "loss rises along the probe, L_B(w - 0.5 v/||v||) > L_B(w), in > 60% of steps (the card's threshold). "
              "History, disclosed: the control was first the flipped probe +v/||v||, which fails by construction "
              "(flipping the probe flips the cosine) and passes the rise test (75%: curvature); it is replaced by a "
              "random direction, which can pass or fail either test on its merits",
       control="a random unit direction u (global norm, fresh every step, its own generator) instead of -v/||v||: "
               "does any radius-0.5 step go uphill on the batch?",
       name="mechanism")
def claim_mechanism(fast: bool = False, control: bool = False) -> Measured:
    exp = experiment(fast)
    mech = mechanism(exp["run"], probe="random" if control else "-v")
    flipped, rand = mechanism(exp["run"], probe="+v"), mechanism(exp["run"], probe="random")
    values = {"cos_probe": np.median(mech["cos_with_probe"]), "rise_fraction": np.median(mech["rise_fraction"]),
              "rise_fraction_min": mech["rise_fraction"].min(),
              "rise_fraction_flip": np.median(flipped["rise_fraction"]),
              "rise_fraction_random": np.median(rand["rise_fraction"]),
              "rise_fraction_random_max": rand["rise_fraction"].max(),
              "cos_random": np.median(rand["cos_with_probe"]), "probe_rho": MONITOR_RHO}
    return Measured(values, criteria=[Criterion("cos_probe", ">", 0.0), Criterion("rise_fraction", ">", 0.6)],
                    seeds=exp["seeds"],
                    summary=f"{'random probe: ' if control else ''}cosine with the probe "
                            f"{values['cos_probe']:+.2f}, batch loss rose in {100 * values['rise_fraction']:.0f}% "
                            f"of steps")


@claim("18", "MSAM costs what SGD-M costs: one gradient per step, half of SAM's", kind="identity",
       expect="gradient evaluations per step, counted in the torch optimizers: MSAM = SGD-M = NAG = 1, SAM = 2 "
              "(wall time shown, not asserted)",
       name="cost")
def claim_cost(fast: bool = False) -> Measured:
    costs = torch_epoch_costs(epochs=1 if fast else 3)
    values = {f"grads_per_step_{k}": v["grads_per_step"] for k, v in costs.items()}
    values.update({f"ms_per_epoch_{k}": 1e3 * v["seconds_per_epoch"] for k, v in costs.items()})
    holds = (costs["MSAM"]["grads_per_step"] == costs["SGD-M"]["grads_per_step"] == costs["NAG"]["grads_per_step"] == 1
             and costs["SAM"]["grads_per_step"] == 2)
    return Measured(values, holds=bool(holds), details=costs,
                    summary=f"SAM/MSAM wall-time ratio {costs['SAM']['seconds_per_epoch'] / costs['MSAM']['seconds_per_epoch']:.2f}")


GLUE_FORMATS = {
    "sharpness": {k: "{:.2f}" for k in ("ratio", "ratio_min", "ratio_max", "ratio_sam", "ratio_first",
                                        "ratio_raw", "ratio_raw_min", "ratio_raw_max", "ratio_flip",
                                        "ratio_flip_min", "ratio_flip_max", "train_loss_flip",
                                        "lambda_sgdm", "lambda_msam", "train_loss_msam", "train_loss_sgdm")}
    | {k: (lambda v: f"{100 * v:+.1f}") for k in ("acc_diff", "acc_diff_min", "acc_diff_max", "acc_diff_first")}
    | {"acc_diff_flip": lambda v: f"{-100 * v:.1f}"}
    | {k: (lambda v: f"{100 * v:.1f}") for k in ("acc_msam", "acc_sgdm", "acc_sam")}
    | {"rho_msam": "{:g}", "rho_sam": "{:g}", "grad_calls": "{:.0f}", "grad_calls_sam": "{:.0f}",
       "sam_underfit": "{:.0f}", "msam_underfit": "{:.0f}"}
    | {k: (lambda v: f"{100 * v:.0f}") for k in ("rho_relative", "rho_relative_first")},
    "mechanism": {"cos_probe": "{:+.2f}", "rise_fraction": lambda v: f"{100 * v:.0f}",
                  "rise_fraction_min": lambda v: f"{100 * v:.0f}", "rise_fraction_flip": lambda v: f"{100 * v:.0f}",
                  "rise_fraction_random": lambda v: f"{100 * v:.0f}",
                  "rise_fraction_random_max": lambda v: f"{100 * v:.0f}", "cos_random": "{:+.3f}",
                  "probe_rho": "{:g}"},
}


def tuning_numbers(tm: Tuning, ts: Tuning) -> dict[str, tuple]:
    """What the text quotes about the tuning (name: (value, format))."""
    edges = [t.method for t in (tm, ts) if t.on_edge()]
    note = ("Both best radii lie inside their grids." if not edges
            else "The best radius lies on the edge of its grid for: " + ", ".join(edges) + ".")
    rec = tuning_record()

    def mean_pick(method, grid):
        return min(grid, key=lambda r: np.mean([rec[(method, r, sd)]["val_loss"] for sd in TUNING_SEEDS]))

    sam_collapses = sum(rec[("SAM", ts.best["rho"], sd)]["test_acc"] < rec[("SGD-M", 0.0, sd)]["test_acc"] - UNDERFIT
                        for sd in TUNING_SEEDS)
    alt = mean_pick("SAM", SAM_GRID)
    out = {"tune_sam_collapses": (sam_collapses, "{:.0f}"), "tune_msam_mean": (mean_pick("MSAM", MSAM_GRID), "{:g}"),
           "tune_sam_mean": (alt, "{:g}"),
           "tune_sam_mean_acc": (100 * float(np.median([rec[("SAM", alt, sd)]["test_acc"] for sd in TUNING_SEEDS])),
                                 "{:.1f}"),
           "tune_sam_mean_lam": (float(np.median([rec[("SAM", alt, sd)]["lambda_max"] for sd in TUNING_SEEDS])),
                                 "{:.2f}")}
    return out | {"tune_msam": (tm.best["rho"], "{:g}"), "tune_sam": (ts.best["rho"], "{:g}"), "tune_edge_note": (note, None),
            "tune_seeds": (len(tm.seeds), "{:.0f}"), "tune_size": (tm.size, "{:.0f}")}


# --------------------------------------------------------------------------- figures and explorers

_COLORS = {"SGD-M": color_for(0), "NAG": color_for(3), "SAM": color_for(2), "MSAM": color_for(1),
           "MSAM-flip": color_for(4)}
READOUTS = (("lambda_max", "sharpness lambda_max"), ("train_loss", "train loss"), ("test_acc", "test accuracy"))


def _record_medians(method: str, rho: float = 0.0) -> dict[str, float]:
    rec = tuning_record()
    return {key: float(np.median([rec[(method, rho, s)][key] for s in TUNING_SEEDS])) for key, _ in READOUTS}


def rho_traces(rho: float) -> list:
    """Traces of the rho explorer (held-out tuning seeds, medians): per readout, MSAM over its
    grid, the current rho (a big marker), and SGD-M and the tuned SAM as dashed reference lines."""
    rho = check_positive(rho, "rho")
    rho_sam = tunings()[1].best["rho"]
    rho = min(MSAM_GRID, key=lambda r: abs(r - rho))
    msam = [_record_medians("MSAM", r) for r in MSAM_GRID]
    cur = _record_medians("MSAM", rho)
    refs = (("SGD-M", "SGD-M", _record_medians("SGD-M")), ("SAM", f"SAM (rho = {rho_sam:g}, tuned)",
                                                         _record_medians("SAM", rho_sam)))
    out = []
    for j, (key, _) in enumerate(READOUTS):
        ax = "" if j == 0 else str(j + 1)
        kw = dict(xaxis=f"x{ax}", yaxis=f"y{ax}", showlegend=j == 0)
        out.append(go.Scatter(x=list(MSAM_GRID), y=[m[key] for m in msam], mode="lines+markers",
                              name="MSAM over its grid", line=dict(color=_COLORS["MSAM"], width=2), **kw))
        out.append(go.Scatter(x=[rho], y=[cur[key]], mode="markers", name="MSAM at the slider's rho",
                              marker=dict(color=_COLORS["MSAM"], size=15, symbol="diamond"), **kw))
        for name, label, vals in refs:
            out.append(go.Scatter(x=[MSAM_GRID[0], MSAM_GRID[-1]], y=[vals[key]] * 2, mode="lines", name=label,
                                  line=dict(color=_COLORS[name], dash="dash"), **kw))
    return out


def _rho_layout(fig: go.Figure) -> go.Figure:
    base_layout(fig, height=440)
    for j, (_, title) in enumerate(READOUTS):
        ax = "" if j == 0 else str(j + 1)
        fig.update_layout({f"xaxis{ax}": dict(type="log", title_text="MSAM radius rho"),
                           f"yaxis{ax}": dict(title_text=title, type="log" if j == 0 else None)})
    return fig


def _skeleton() -> dict:
    sk = make_subplots(rows=1, cols=3, horizontal_spacing=0.1)
    return {k: v for k, v in sk.layout.to_plotly_json().items() if k.startswith(("xaxis", "yaxis"))}


def rho_figure(rho: float = 0.5) -> go.Figure:
    """Live explorer: the three readouts at one rho of MSAM's grid against SGD-M and tuned SAM."""
    fig = go.Figure(rho_traces(rho))
    fig.update_layout(**_skeleton())
    return _rho_layout(fig)


def rho_slider_figure() -> go.Figure:
    """Static twin of :data:`EXPLORER_RHO` (one frame per radius of MSAM's grid)."""
    steps = [SliderStep(f"{r:g}", rho_traces(r)) for r in MSAM_GRID]
    fig = slider_figure(steps, slider_label="MSAM radius rho", active=MSAM_GRID.index(tunings()[0].best["rho"]),
                        fixed_axes=False, height=480)
    fig.update_layout(**_skeleton())
    return _rho_layout(fig).update_layout(height=480, margin=dict(b=110))


def watch_figure(exp: dict, seed: int = 0) -> go.Figure:
    """Full train loss (at the unperturbed weights) against gradient calls for one claim seed:
    SGD-M, NAG, the tuned SAM, MSAM at its tuned radius and at :data:`FIRST_RHO`; phases "fit"
    (first 20% of SGD-M's gradient budget) and "late training", where the mechanism is measured."""
    run = exp["run"]
    wanted = [("SGD-M", 0.0), ("NAG", 0.0), ("SAM", exp["rho_sam"]), ("MSAM", exp["rho_msam"]), ("MSAM", FIRST_RHO)]
    fig = go.Figure()
    for method, rho in wanted:
        k = next(i for i in run.select(method, None if method in ("SGD-M", "NAG") else rho) if run.specs[i].seed == seed)
        tr, label = run.traces[k], run.specs[k].label
        if method == "MSAM" and rho == FIRST_RHO:
            label += ", over-regularised"
        fig.add_trace(go.Scatter(x=tr["grad_calls"], y=tr.objective, mode="lines", name=label,
                                 line=dict(color=_COLORS[method], width=2,
                                           dash="dot" if rho == FIRST_RHO and method == "MSAM" else None)))
    budget = float(run.grad_calls[run.select("SGD-M")[0]])
    fig.add_vrect(x0=0, x1=0.2 * budget, fillcolor="#fde0c5", opacity=0.55, layer="below", line_width=0,
                  annotation_text="<b>fit</b>", annotation_position="top left")
    fig.add_vrect(x0=0.5 * budget, x1=budget, fillcolor="#d4ecd9", opacity=0.55, layer="below", line_width=0,
                  annotation_text="<b>late training</b>", annotation_position="top left")
    return base_layout(fig, xaxis_title="gradient evaluations", yaxis_title="full train loss at w (log)",
                       logy=True, height=440)


def cosine_figure(exp: dict, seed: int = 0, window: int = 100) -> go.Figure:
    """cos(g_B, v) at every SGD-M step (light), its rolling mean over ``window`` steps, and the
    rolling fraction of steps where the batch loss rose along -v/||v||, along +v/||v|| and along
    a random unit direction."""
    run = exp["run"]
    k = next(i for i in run.select("SGD-M") if run.specs[i].seed == seed)
    cos = run.cos[:, k]
    steps = np.arange(1, len(cos) + 1)
    kernel = np.ones(window) / window

    def roll(x):
        return np.convolve(np.nan_to_num(x), kernel, mode="valid")

    keep = slice(None, None, 10)
    late = steps[window - 1:][keep]
    fig = go.Figure([
        go.Scatter(x=steps[keep], y=cos[keep], mode="markers", name="cos(g_B, v), every 10th step",
                   marker=dict(size=3, color="#9ecae1")),
        go.Scatter(x=late, y=roll(cos)[keep], mode="lines", name=f"cos(g_B, v), rolling mean ({window} steps)",
                   line=dict(color=_COLORS["SGD-M"], width=2.5)),
        go.Scatter(x=late, y=roll(run.rise[:, k])[keep], mode="lines",
                   name=f"share of steps where the batch loss rose along -v/|v| (MSAM's probe, radius {MONITOR_RHO:g})",
                   line=dict(color=_COLORS["MSAM"], width=2.5)),
        go.Scatter(x=late, y=roll(run.rise_flip[:, k])[keep], mode="lines",
                   name="... and along +v/|v| (the flipped probe)",
                   line=dict(color=_COLORS["MSAM-flip"], width=2, dash="dash")),
        go.Scatter(x=late, y=roll(run.rise_rand[:, k])[keep], mode="lines",
                   name="... and along a random direction (the control)",
                   line=dict(color=color_for(7), width=2, dash="dot")),
    ])
    fig.add_hline(y=0, line=dict(color="#555", width=1))
    return base_layout(fig, xaxis_title="SGD-M step", yaxis_title="cosine / share of steps", height=460)


@lru_cache(maxsize=2)
def _toy_grid(n: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ys = np.linspace(-2.0, 2.8, n), np.linspace(-2.0, 2.0, n)
    W = np.stack(np.meshgrid(xs, ys), axis=-1)
    return xs.round(3), ys.round(3), toy_loss(W).round(3)


def toy_traces(lr: float = 0.05, momentum: float = 0.9, rho: float = 0.3) -> list:
    """Contour of the toy landscape, the four paths (thinned) and their end points."""
    xs, ys, Z = _toy_grid()
    out = [go.Contour(x=xs, y=ys, z=Z, colorscale="Greys", reversescale=True, ncontours=25, showscale=False,
                      showlegend=False, contours=dict(showlines=True), line=dict(width=0.4), opacity=0.7,
                      hoverinfo="skip")]
    for name, path in toy_paths(lr, momentum, rho).items():
        label = f"{name} (rho = {rho:g})" if name in ("SAM", "MSAM") else name
        out.append(go.Scatter(x=path[::2, 0], y=path[::2, 1], mode="lines", name=label,
                              line=dict(color=_COLORS[name], width=2)))
        out.append(go.Scatter(x=path[-1:, 0], y=path[-1:, 1], mode="markers", showlegend=False, name=f"{name} end",
                              marker=dict(color=_COLORS[name], size=13, symbol="x")))
    return out


def _toy_layout(fig: go.Figure) -> go.Figure:
    base_layout(fig, xaxis_title="w<sub>1</sub>", yaxis_title="w<sub>2</sub>", height=520)
    fig.update_xaxes(range=[-2.0, 2.8], autorange=False)
    fig.update_yaxes(range=[-2.0, 2.0], autorange=False, scaleanchor="x")
    fig.add_annotation(x=TOY_SHARP[0][0], y=TOY_SHARP[0][1] + 0.35, text="sharp", showarrow=False)
    fig.add_annotation(x=TOY_WIDE[0][0], y=TOY_WIDE[0][1] - 1.1, text="wide", showarrow=False)
    return fig


def toy_figure(lr: float = 0.05, momentum: float = 0.9, rho: float = 0.3) -> go.Figure:
    """Live explorer: SGD-M, NAG, SAM and MSAM on the 2-D toy landscape (X marks the end)."""
    return _toy_layout(go.Figure(toy_traces(lr, momentum, rho)))


TOY_RHOS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8)


def toy_slider_figure(lr: float = 0.05, momentum: float = 0.9) -> go.Figure:
    """Static twin of :data:`EXPLORER_TOY`: a slider over rho (lr and momentum fixed)."""
    steps = [SliderStep(f"{r:g}", toy_traces(lr, momentum, r)) for r in TOY_RHOS]
    fig = slider_figure(steps, slider_label="rho (SAM and MSAM)", active=TOY_RHOS.index(0.3), fixed_axes=False)
    return _toy_layout(fig).update_layout(margin=dict(b=110))


def toy_escapes(momentum: float, seeds=range(11), lr: float = 0.05, rho: float = 0.3) -> dict[str, float]:
    """Share of noise seeds after which each method ends in the wide basin (closer to its centre
    than to the sharp one) on the toy landscape."""
    sharp, wide = np.array(TOY_SHARP[0]), np.array(TOY_WIDE[0])
    ends = {m: [] for m in METHODS}
    for s in seeds:
        for m, path in toy_paths(lr, momentum, rho, seed=int(s)).items():
            ends[m].append(np.linalg.norm(path[-1] - wide) < np.linalg.norm(path[-1] - sharp))
    return {m: float(np.mean(v)) for m, v in ends.items()}


EXPLORER_RHO = Explorer("18", "rho", rho_figure, {
    "rho": Slider("MSAM radius rho", list(MSAM_GRID), TUNED["MSAM"])},
    description="MSAM's radius against sharpness, train loss and test accuracy (moons MLP, held-out seeds)")
EXPLORER_TOY = Explorer("18", "toy", toy_figure, {
    "lr": Slider("learning rate", [0.02, 0.05, 0.1], 0.05),
    "momentum": Slider("momentum mu", [0.5, 0.8, 0.9], 0.9),
    "rho": Slider("rho (SAM, MSAM)", list(TOY_RHOS), 0.3)},
    description="SGD-M, NAG, SAM and MSAM on a landscape with a sharp and a wide minimum")


def cost_figure(costs: dict[str, dict[str, float]]) -> go.Figure:
    """Bars: gradient evaluations per step (counted) and wall seconds per epoch (measured)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("gradient evaluations per step (counted)",
                                                        "wall time per epoch, ms (measured once)"))
    names = list(costs)
    colors = [_COLORS[n] for n in names]
    fig.add_trace(go.Bar(x=names, y=[costs[n]["grads_per_step"] for n in names], marker_color=colors,
                         showlegend=False), row=1, col=1)
    fig.add_trace(go.Bar(x=names, y=[1e3 * costs[n]["seconds_per_epoch"] for n in names], marker_color=colors,
                         showlegend=False), row=1, col=2)
    base_layout(fig, height=360)
    fig.update_yaxes(title_text="gradients / step", row=1, col=1)
    fig.update_yaxes(title_text="ms / epoch", row=1, col=2)
    return fig


def scale_numbers(exp: dict) -> dict[str, tuple]:
    """The weight norms the text quotes: at initialization (median over the claim seeds) and at
    the end of training (smallest and largest over the claim run's SGD-M and MSAM networks)."""
    run = exp["run"]
    idx = np.concatenate([run.select("SGD-M"), run.select("MSAM")])
    final = _norm({k: v[idx] for k, v in run.params.items()})
    init = [float(_norm({k: v[None] for k, v in init_mlp(s).items()})[0]) for s in exp["seeds"]]
    return {"norm_init": (float(np.median(init)), "{:.0f}"), "norm_final_min": (float(final.min()), "{:.0f}"),
            "norm_final_max": (float(final.max()), "{:.0f}"),
            "first_share_min": (100 * FIRST_RHO / float(final.max()), "{:.0f}"),
            "first_share_max": (100 * FIRST_RHO / float(final.min()), "{:.0f}")}


def explorer_numbers() -> dict[str, tuple]:
    """What the text quotes about the rho explorer (held-out tuning seeds, medians)."""
    sgd = _record_medians("SGD-M")["test_acc"]
    return {"explore_drop": (100 * (sgd - _record_medians("MSAM", FIRST_RHO)["test_acc"]), "{:.0f}")}


def escape_numbers(seeds=range(11)) -> dict[str, tuple]:
    """Shares of noise seeds (in %) after which each method ends in the wide basin of the toy
    landscape, at momentum 0.9 and 0.5 (the momentum exercise)."""
    out = {"escape_seeds": (len(seeds), "{:.0f}")}
    for mu in (0.9, 0.5):
        for method, share in toy_escapes(mu, seeds).items():
            out[f"escape_{method.replace('-', '').lower()}_{int(10 * mu)}"] = (100 * share, "{:.0f}")
    return out


if __name__ == "__main__":  # regenerate the stored tuning record
    write_tuning_record()
    print("wrote", __file__.replace("momentum_sam_chapter.py", "momentum_sam_tuning.py"))
