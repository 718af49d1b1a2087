"""Chapter 21: the book's experiments, figures, live explorers and claims for FedAda². The methods
are in :mod:`optbook.distributed.fedada2`, the federated engine in
:mod:`optbook.distributed.federated`.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots
from scipy.optimize import minimize

from ..claims import Criterion, Measured, claim
from ..core import Tuning, check_choice, check_in_range, check_int, grid_search
from ..core.threads import one_torch_thread
from ..viz import SliderStep, base_layout, color_for, frame_note, slider_figure
from ..viz.style import line_style
from ..widgets import Explorer, Slider
from .fedada2 import METHODS, client_state_floats, floats_per_round, make_method, sm3_accumulate
from .federated import DTYPE, FedResult, SoftmaxClients, make_federated_softmax, run_distributed, run_federated

# --------------------------------------------------------------------------- the setting

#: The heterogeneous problem of the claims (fixed before the full run): 20 clients x 50 samples,
#: 20 features over 1.5 decades of scale, 5 classes; each client rescales its features by
#: exp(h z) and perturbs the labelling weights (concept shift), h = 1.
SETTING = dict(num_clients=20, samples=50, features=20, classes=5, log10_condition=1.0, signal=5.0,
               concept=0.25, l2=1e-4)
HETEROGENEITY = 1.0
#: The federated protocol: T rounds, S of the 20 clients per round, K local steps of batch b.
RUN = dict(rounds=30, clients_per_round=5, local_steps=10, batch_size=10)
FAST_RUN = dict(rounds=20, clients_per_round=5, local_steps=10, batch_size=10)
#: Every method's grid has the same size (3 client x 3 server learning rates); the values are each
#: method's own scale (zero-initialised AdaGrad's first step is +-eta_l per coordinate, so its
#: eta_l is far below SGD's). FedAvg's server rate multiplies the mean change (1 = plain FedAvg).
GRIDS = {
    "FedAvg": {"client_lr": (0.1, 0.3, 1.0), "server_lr": (1.0, 2.0, 4.0)},
    "FedAdam": {"client_lr": (0.01, 0.03, 0.1), "server_lr": (0.03, 0.1, 0.3)},
    "joint (ships v)": {"client_lr": (0.001, 0.003, 0.01), "server_lr": (0.03, 0.1, 0.3)},
    "FedAda2": {"client_lr": (0.001, 0.003, 0.01), "server_lr": (0.03, 0.1, 0.3)},
    "FedAda2++": {"client_lr": (0.001, 0.003, 0.01), "server_lr": (0.03, 0.1, 0.3)},
}
TUNING_SEEDS = (100, 101)
CLAIM_SEEDS = (0, 1, 2, 3, 4)
LABELS = {"FedAvg": "FedAvg", "FedAdam": "FedAdam (server only)", "joint (ships v)": "joint (ships v)",
          "FedAda2": "FedAda²", "FedAda2++": "FedAda²++ (SM3)"}


@lru_cache(maxsize=64)
def problem(seed: int, heterogeneity: float = HETEROGENEITY) -> SoftmaxClients:
    """The chapter's federated softmax problem for one seed (data and clients) and heterogeneity."""
    return make_federated_softmax(heterogeneity=heterogeneity, seed=seed, **SETTING)


@lru_cache(maxsize=2048)
def run(method: str, client_lr: float, server_lr: float, seed: int, heterogeneity: float = HETEROGENEITY,
        local_steps: int = 10, rounds: int = 30, sm3_cover: str = "rowcol") -> FedResult:
    """One federated run of ``method`` on :func:`problem` (seed, heterogeneity), cached."""
    method = check_choice(method, "method", METHODS)
    rounds = check_int(rounds, "rounds", minimum=1)
    local_steps = check_int(local_steps, "local_steps", minimum=1)
    client, server = make_method(method, client_lr, server_lr, sm3_cover=sm3_cover)
    with one_torch_thread():
        res = run_federated(problem(seed, heterogeneity), client, server, rounds=rounds,
                            clients_per_round=RUN["clients_per_round"], local_steps=local_steps,
                            batch_size=RUN["batch_size"], seed=seed, name=LABELS[method])
    return res


def _final_loss(method: str, fast: bool, **kw) -> float:
    rounds = (FAST_RUN if fast else RUN)["rounds"]
    loss = run(method, rounds=rounds, **kw).final_loss
    return loss if np.isfinite(loss) else float("nan")


def _grid(method: str, fast: bool) -> dict:
    g = GRIDS[method]
    return {k: v[:2] for k, v in g.items()} if fast else g


@lru_cache(maxsize=8)
def tunings(fast: bool = False, heterogeneity: float = HETEROGENEITY) -> dict[str, Tuning]:
    """Every method tuned the same way at heterogeneity h: its own 3 x 3 grid of (client, server)
    learning rates (2 x 2 in fast mode), scored by the final global loss, median over held-out seeds."""
    h = check_in_range(heterogeneity, "heterogeneity", 0.0, 5.0, closed=(True, True))
    seeds = TUNING_SEEDS[:1] if fast else TUNING_SEEDS
    return {m: grid_search(LABELS[m], lambda seed, m=m, **st: _final_loss(m, fast, seed=seed, heterogeneity=h, **st),
                           _grid(m, fast), seeds) for m in METHODS}


def best(method: str, fast: bool = False, heterogeneity: float = HETEROGENEITY) -> dict:
    """The tuned (client_lr, server_lr) of a method at heterogeneity h."""
    method = check_choice(method, "method", METHODS)
    return tunings(fast, heterogeneity)[method].best


def final_losses(method: str, fast: bool = False, seeds=None, heterogeneity: float = HETEROGENEITY,
                 **kw) -> np.ndarray:
    """Final global losses of a method tuned at heterogeneity h, over the claim seeds."""
    seeds = (CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS) if seeds is None else seeds
    return np.array([_final_loss(method, fast, seed=s, heterogeneity=heterogeneity,
                                 **best(method, fast, heterogeneity), **kw) for s in seeds])


# --------------------------------------------------------------------------- heterogeneity


def _full_gradients(p: SoftmaxClients, x: np.ndarray) -> np.ndarray:
    """Each client's full-data gradient at x (N, d)."""
    N, n = p.num_clients, p.samples_per_client
    params = torch.as_tensor(x, dtype=DTYPE).expand(N, p.dim).contiguous()
    idx = torch.arange(n).expand(N, n)
    return p.grad(params, torch.arange(N), idx).numpy()


@lru_cache(maxsize=32)
def dissimilarity(seed: int, heterogeneity: float = HETEROGENEITY) -> float:
    """Client dissimilarity at the global minimiser x*: mean_i ||grad f_i(x*)||^2 (zero when every
    client's own minimiser is the global one)."""
    p = problem(seed, heterogeneity)

    def fg(x):
        return p.loss(torch.as_tensor(x)), _full_gradients(p, x).mean(0)

    res = minimize(fg, np.zeros(p.dim), jac=True, method="L-BFGS-B", options=dict(maxiter=3000, gtol=1e-9))
    return float(np.mean(np.sum(_full_gradients(p, res.x) ** 2, axis=1)))


def heterogeneity_premise(seeds=CLAIM_SEEDS, heterogeneity: float = HETEROGENEITY) -> float:
    """Median over seeds of dissimilarity(h) / dissimilarity(h = 0): how much more the clients of
    the claims' problem disagree at the optimum than identically distributed clients do."""
    h = check_in_range(heterogeneity, "heterogeneity", 0.0, 5.0, closed=(True, True))
    return float(np.median([dissimilarity(s, h) / dissimilarity(s, 0.0) for s in seeds]))


# --------------------------------------------------------------------------- claims


@claim("21", "FedAda² matches the joint-adaptive baseline that ships preconditioners, and beats FedAvg",
       kind="reproduction",
       paper="FedAda² (client preconditioners zero-initialised, never sent) matches 'direct joint "
             "adaptivity' and outperforms FedAvg and server-only adaptivity, at FedAvg's communication (2d "
             "instead of 3d floats per client and round; ViT on CIFAR-100, GLD-23K, FEMNIST; StackOverflow; "
             "no single number)",
       expect="on the heterogeneous federated softmax problem (h = 1; 20 clients, 5 per round, 10 local "
              "steps, 30 rounds), every method tuned on its own 3 x 3 learning-rate grid over 2 held-out "
              "seeds: median over 5 seeds of loss(FedAda²)/loss(joint) <= 1.05 (the issue's 5% rule; the "
              "paper gives no margin) and of loss(FedAda²)/loss(FedAvg) <= 1. Premise (the setting the paper "
              "targets, measured first): the clients disagree at the optimum >= 4x more than IID clients, and "
              "client adaptivity matters there: switching it off (FedAdam) costs >= 5% against joint",
       control="client adaptivity switched off (local SGD, the same server Adam: FedAdam) in FedAda²'s place",
       reproduces=None,
       diagnosis="Inconclusive: the proxy does not show the phenomenon the method targets. (1) The clients "
                 "are heterogeneous (they disagree at the optimum about 16x more than IID clients), but "
                 "client adaptivity does not help here: server-only FedAdam ends about 10% BELOW the joint "
                 "baseline, so there is no benefit of joint adaptivity for FedAda² to keep; FedAda² does match "
                 "joint within about 1% and ends a few percent above tuned FedAvg. (2) Every method is tuned on a "
                 "3 x 3 grid of its own scale, FedOpt's eps_s = 1e-3 and beta = (0.9, 0.99); several other "
                 "convex proxies tried while designing (per-client feature scales, heavy tails, separable "
                 "data, 50 local steps) all favoured server-only Adam, and a second test at h = 0.5 (registered before its "
                 "full run, reported in the chapter) was inconclusive too: re-tuned there, FedAdam ends within "
                 "about 2% of joint. (3) The reductions hold (FedAda² with a "
                 "huge eps_l is FedAdam; SM3 with one cover per entry is AdaGrad; FedAvg with K = 1 is gradient "
                 "descent). (4) The control is measured and reported; it beats the criterion from below. The "
                 "paper's benefit of client adaptivity comes from fine-tuning transformers, which this convex "
                 "proxy cannot show. Disclosures (referee): the second half of the premise (FedAdam >= 5% above "
                 "joint) was asked for by the issue before any run, but entered the code in the same commit "
                 "as the first full-run figures; and the joint baseline as reconstructed ships the server's v, "
                 "a moment of squared model changes far below the clients' g^2 (exercise 2), so joint is "
                 "nearly FedAda² here and the 1.05 half of the criterion could hardly fail; the half that can, "
                 "FedAda² <= FedAvg, fails. A stronger joint baseline does not rescue the premise: the shipped v "
                 "multiplied by 1e2, 1e4 or 1e6 (each tuned on a 5 x 3 grid) still ends above tuned FedAdam.",
       name="matches_joint")
def claim_matches_joint(fast: bool = False, control: bool = False) -> Measured:
    return _matches_joint(fast, control, HETEROGENEITY, min_dissimilarity=4.0)


def _matches_joint(fast: bool, control: bool, h: float, min_dissimilarity: float) -> Measured:
    """The headline's measurement at heterogeneity h: FedAda² (or, as the control, FedAdam) against
    the joint baseline and FedAvg, every method tuned at h; premise: the clients disagree at least
    ``min_dissimilarity`` times more than IID clients, and FedAdam ends >= 5% above joint."""
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    method = "FedAdam" if control else "FedAda2"
    ours, joint, fedavg, fedadam = (final_losses(m, fast, heterogeneity=h)
                                    for m in (method, "joint (ships v)", "FedAvg", "FedAdam"))
    r_joint, r_avg = ours / joint, ours / fedavg
    premise = heterogeneity_premise(seeds[:2] if fast else seeds, h)
    benefit = float(np.median(fedadam / joint))
    values = {"ratio_to_joint": float(np.median(r_joint)), "ratio_to_joint_min": float(r_joint.min()),
              "ratio_to_joint_max": float(r_joint.max()), "ratio_to_fedavg": float(np.median(r_avg)),
              "ratio_to_fedavg_max": float(r_avg.max()), "loss": float(np.median(ours)),
              "loss_joint": float(np.median(joint)), "loss_fedavg": float(np.median(fedavg)),
              "loss_fedadam": float(np.median(fedadam)), "fedadam_over_joint": benefit,
              "dissimilarity_ratio": premise}
    name = "FedAdam" if control else "FedAda²"
    return Measured(values, criteria=[Criterion("ratio_to_joint", "<=", 1.05), Criterion("ratio_to_fedavg", "<=", 1.0)],
                    seeds=seeds, details={"tunings": [tunings(fast, h)[m] for m in METHODS]},
                    precondition=bool(premise >= min_dissimilarity and benefit >= 1.05),
                    summary=f"h = {h:g}: {name}/joint {values['ratio_to_joint']:.3f} ({r_joint.min():.3f}-"
                            f"{r_joint.max():.3f}), {name}/FedAvg {values['ratio_to_fedavg']:.3f}; clients disagree "
                            f"{premise:.0f}x more than IID; FedAdam/joint {benefit:.2f}")


#: The milder heterogeneity of the second test (:func:`mild_heterogeneity_check`).
MILD_HETEROGENEITY = 0.5


def mild_heterogeneity_check(fast: bool = False, control: bool = False) -> Measured:
    """A second test of the headline at h = 0.5, registered (committed) after the h = 1 registration
    came out inconclusive and before its own full run: every method re-tuned at h = 0.5 on the same
    grids and held-out seeds; the same criterion; premise: clients disagree >= 2x more than IID
    clients and FedAdam ends >= 5% above joint. Its full run found the premise unmet (see the
    chapter), while its fast version met it, so it is reported in the chapter, not in the claim
    registry, whose tests require fast and full verdicts to agree."""
    return _matches_joint(fast, control, MILD_HETEROGENEITY, min_dissimilarity=2.0)



@claim("21", "FedAda²++ (SM3 clients) matches FedAda² with (m+n)/(mn) of AdaGrad's client memory",
       kind="reproduction",
       paper="FedAda²++ compresses the client preconditioner with SM3 (row and column maxima of an m x n "
             "matrix: m + n floats instead of mn; 0.48% of AdaGrad's state for their ViT) and matches FedAda²",
       expect="median over 5 seeds of loss(FedAda²++)/loss(FedAda²) <= 1.02 (the issue's 2% "
              "rule), each tuned on its own 3 x 3 grid, and the client state counted by the engine equal to "
              "(m+n)/(mn) = 25/100 of AdaGrad's for the 20 x 5 weight matrix. One-sided (non-inferiority: "
              "FedAda²++ may be better). Disclosed: the first registration (commit a586575) was two-sided, "
              "within [1/1.02, 1.02]; it was made one-sided in the next commit, and the full-run median "
              "(about 0.978) lies below 1/1.02 = 0.980, so under the first registration FedAda²++ would "
              "fail by being more than 2% better",
       control="SM3 with its row and column covers collapsed into one accumulator for the whole matrix "
               "(AdaGrad-Norm, 1 float), at FedAda²++'s tuned learning rates (not re-tuned: re-tuned, it is "
               "the premise below)",
       reproduces=None,
       diagnosis="Inconclusive (premise added by the referee after the full run, disclosed): SM3's covers "
                 "can only matter where per-coordinate client scales matter, so the premise is that the "
                 "one-accumulator variant, tuned on its own 3 x 3 grid and the same held-out seeds, ends "
                 ">= 2% above FedAda². It does not: tuned, it ends about 10% BELOW FedAda² (its learning rate "
                 "sits about 30x higher than FedAda²++'s, so the control above failed only by being run at "
                 "the wrong scale; its best rate is the top of its grid, so a wider grid could only help it on the "
                 "tuning seeds). In this proxy less client adaptivity is better (see the headline), so any "
                 "compression of the client preconditioner passes a one-sided 2% test. (1) no per-coordinate "
                 "benefit to keep; (2) same grids and seeds as every method, eps_l = 1e-6; (3) SM3 with one "
                 "cover per entry is AdaGrad (tested); (4) the un-retuned control fails, the re-tuned one "
                 "passes. The memory count (m+n)/(mn) holds exactly.",
       name="sm3_matches")
def claim_sm3_matches(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    sm3 = final_losses("FedAda2++", fast, sm3_cover="scalar" if control else "rowcol")
    ada = final_losses("FedAda2", fast)
    ratio = sm3 / ada
    shapes = problem(seeds[0]).shapes
    run_sm3 = run("FedAda2++", **best("FedAda2++", fast), seed=seeds[0], rounds=1,
                  sm3_cover="scalar" if control else "rowcol")
    run_ada = run("FedAda2", **best("FedAda2", fast), seed=seeds[0], rounds=1)
    state_ratio = run_sm3.ledger.totals()["client_state"] / run_ada.ledger.totals()["client_state"]
    m, n = shapes[0]
    scalar_ratio = float(np.median(scalar_losses(fast) / ada))
    values = {"ratio": float(np.median(ratio)), "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
              "tuned_scalar_ratio": scalar_ratio,
              "state_ratio": state_ratio, "state_ratio_theory": (m + n) / (m * n),
              "state_sm3": float(run_sm3.ledger.totals()["client_state"]),
              "state_adagrad": float(run_ada.ledger.totals()["client_state"])}
    return Measured(values, holds=control or state_ratio == (m + n) / (m * n),
                    criteria=[Criterion("ratio", "<=", 1.02)], seeds=seeds, precondition=scalar_ratio >= 1.02,
                    details={"scalar_tuning": scalar_tuning(fast)},
                    summary=f"{'scalar-cover ' if control else ''}SM3/AdaGrad loss {values['ratio']:.3f} "
                            f"({ratio.min():.3f}-{ratio.max():.3f}); client state {state_ratio:.2f} of AdaGrad's")


#: The one-accumulator SM3 (AdaGrad-Norm) tuned like every method: 3 x 3 grid at its own scale
#: (its accumulator sums all mn squared entries, so its rate sits far above AdaGrad's).
SCALAR_GRID = {"client_lr": (0.01, 0.03, 0.1), "server_lr": (0.03, 0.1, 0.3)}


@lru_cache(maxsize=2)
def scalar_tuning(fast: bool = False) -> Tuning:
    """The sm3 premise's tuning of the one-accumulator variant (same seeds and budget as the methods)."""
    grid = {k: v[:2] for k, v in SCALAR_GRID.items()} if fast else SCALAR_GRID
    return grid_search("SM3, one accumulator", lambda seed, **st: _final_loss(
        "FedAda2++", fast, seed=seed, sm3_cover="scalar", **st), grid, TUNING_SEEDS[:1] if fast else TUNING_SEEDS)


def scalar_losses(fast: bool = False) -> np.ndarray:
    """Final losses of the tuned one-accumulator variant over the claim seeds."""
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    return np.array([_final_loss("FedAda2++", fast, seed=s, sm3_cover="scalar", **scalar_tuning(fast).best)
                     for s in seeds])


#: The small run the communication identity sends over gloo (3 processes: server + 2 clients).
GLOO_RUN = dict(rounds=3, clients_per_round=2, local_steps=5, batch_size=5, seed=7)


@lru_cache(maxsize=2)
def gloo_runs(fast: bool = False) -> dict:
    """FedAda² and the joint baseline, three rounds, over torch.distributed (gloo) in three processes
    (full) or in-process (fast), next to the in-process runs with the same seed."""
    p = make_federated_softmax(num_clients=6, samples=20, seed=3, **{k: v for k, v in SETTING.items()
                                                                      if k not in ("num_clients", "samples")})
    pairs = [(m, *make_method(m, 0.01, 0.1)) for m in ("FedAda2", "joint (ships v)")]
    with one_torch_thread():
        local = [run_federated(p, c, s, name=n, **GLOO_RUN) for n, c, s in
                 [(m, *make_method(m, 0.01, 0.1)) for m in ("FedAda2", "joint (ships v)")]]
        wire = local if fast else run_distributed(p, pairs, **GLOO_RUN)
    return {"dim": p.dim, "local": dict(zip(("FedAda2", "joint (ships v)"), local)),
            "wire": dict(zip(("FedAda2", "joint (ships v)"), wire)), "gloo": not fast}


@claim("21", "Communication: FedAda² sends exactly 2/3 of the joint baseline's floats, counted on the wire",
       kind="identity",
       expect="floats counted by the gloo transport (3 processes, 3 rounds): FedAda² 2dS per round, joint 3dS, "
              "ratio exactly 2/3; the gloo iterates equal the in-process ones to 1e-12 (fast mode: in-process "
              "counts only)",
       name="communication")
def claim_communication(fast: bool = False) -> Measured:
    g = gloo_runs(fast)
    d, S, T = g["dim"], GLOO_RUN["clients_per_round"], GLOO_RUN["rounds"]
    ours, joint = (g["wire"][m].ledger.totals()["floats"] for m in ("FedAda2", "joint (ships v)"))
    gap = max(float((g["wire"][m].iterates - g["local"][m].iterates).abs().max()) for m in g["wire"])
    exact = ours == 2 * d * S * T == T * floats_per_round("FedAda2", d, S) and joint == 3 * d * S * T
    values = {"ratio": ours / joint, "floats_fedada2": float(ours), "floats_joint": float(joint),
              "max_iterate_gap": gap, "on_gloo": bool(g["gloo"])}
    return Measured(values, holds=bool(exact and ours * 3 == joint * 2 and gap <= 1e-12),
                    summary=f"{ours} vs {joint} floats ({'gloo' if g['gloo'] else 'in-process'}): ratio "
                            f"{ours / joint:.4f}; paths agree to {gap:.0e}")


# --------------------------------------------------------------------------- figures


def loss_traces(runs: dict[str, FedResult], x: str = "round") -> list:
    """One line per method: global loss against the round (or the floats sent so far)."""
    out = []
    for i, (m, res) in enumerate(runs.items()):
        tr = res.trace
        xs = tr.iteration if x == "round" else tr["floats"]
        out.append(go.Scatter(x=xs, y=tr.objective, name=LABELS[m], mode="lines", **line_style(i)))
    return out


def tuned_runs(seed: int = 0, heterogeneity: float = HETEROGENEITY, local_steps: int = 10) -> dict[str, FedResult]:
    """Every method at its tuned learning rates (full tuning) on one seed."""
    seed, local_steps = check_int(seed, "seed"), check_int(local_steps, "local_steps", minimum=1)
    heterogeneity = check_in_range(heterogeneity, "heterogeneity", 0.0, 5.0, closed=(True, True))
    return {m: run(m, **best(m), seed=seed, heterogeneity=heterogeneity, local_steps=local_steps)
            for m in METHODS}


def convergence_figure(seed: int = 0) -> go.Figure:
    """Global loss against rounds and against floats communicated, every method tuned."""
    runs = tuned_runs(check_int(seed, "seed"))
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06)
    for t in loss_traces(runs, "round"):
        fig.add_trace(t, 1, 1)
    for t in loss_traces(runs, "floats"):
        fig.add_trace(t.update(showlegend=False), 1, 2)
    base_layout(fig, logy=True, height=460, title="Global training loss against rounds (left) and floats sent (right)")
    fig.update_xaxes(title_text="round t", row=1, col=1)
    fig.update_xaxes(title_text="floats communicated (all clients)", row=1, col=2)
    fig.update_yaxes(title_text="global loss f(x_t)", row=1, col=1)
    return fig


HETEROGENEITIES = (0.0, 0.5, 1.0, 1.5)
LOCAL_STEPS = (1, 5, 10, 20)


@lru_cache(maxsize=1)
def _sweep() -> dict:
    """Every method tuned once (h = 1, K = 10), then rerun over the heterogeneity and local-step
    grids: the data of both explorers, computed in one go so every slider move is a lookup."""
    het = {h: tuned_runs(0, h, 10) for h in HETEROGENEITIES}
    steps = {k: tuned_runs(0, HETEROGENEITY, k) for k in LOCAL_STEPS}
    return {"het": het, "steps": steps}


def sweep_numbers() -> dict[str, float]:
    """Figures of the two explorers the prose cites: final-loss ratios across h and K (seed 0)."""
    sw = _sweep()

    def ratio(runs, a, b):
        return runs[a].final_loss / runs[b].final_loss

    het, steps = sw["het"], sw["steps"]
    return {"ada_joint_h_min": min(ratio(r, "FedAda2", "joint (ships v)") for r in het.values()),
            "ada_joint_h_max": max(ratio(r, "FedAda2", "joint (ships v)") for r in het.values()),
            "adam_joint_h0": ratio(het[0.0], "FedAdam", "joint (ships v)"),
            "adam_joint_h1": ratio(het[1.0], "FedAdam", "joint (ships v)"),
            "avg_ada_h0": ratio(het[0.0], "FedAvg", "FedAda2"),
            "avg_ada_k1": ratio(steps[1], "FedAvg", "FedAda2"),
            "avg_ada_k20": ratio(steps[20], "FedAvg", "FedAda2")}


def _note(runs: dict[str, FedResult]) -> str:
    return "final loss: " + ", ".join(f"{LABELS[m].split(' (')[0]} {r.final_loss:.3f}" for m, r in runs.items()
                                      if m in ("FedAvg", "FedAdam", "FedAda2"))


def heterogeneity_slider_figure() -> go.Figure:
    """Static twin of the heterogeneity explorer: one frame per h."""
    steps = [SliderStep(f"{h:g}", loss_traces(r), frame_note(_note(r))) for h, r in _sweep()["het"].items()]
    return slider_figure(steps, slider_label="heterogeneity h", active=2, logy=True, xaxis_title="round t",
                         yaxis_title="global loss f(x_t)", title="Loss per method as the clients grow apart")


def heterogeneity_figure(heterogeneity: float = 1.0) -> go.Figure:
    """Live twin of the heterogeneity explorer."""
    h = check_in_range(heterogeneity, "heterogeneity", 0.0, 5.0, closed=(True, True))
    if h not in HETEROGENEITIES:
        raise ValueError(f"heterogeneity must be one of {HETEROGENEITIES}, got {h}")
    runs = _sweep()["het"][h]
    fig = go.Figure(loss_traces(runs), layout=frame_note(_note(runs)))
    return base_layout(fig, logy=True, xaxis_title="round t", yaxis_title="global loss f(x_t)", title=f"h = {h:g}")


def local_steps_slider_figure() -> go.Figure:
    """Static twin of the local-steps explorer: one frame per K."""
    steps = [SliderStep(f"{k}", loss_traces(r), frame_note(_note(r))) for k, r in _sweep()["steps"].items()]
    return slider_figure(steps, slider_label="local steps K", active=2, logy=True, xaxis_title="round t",
                         yaxis_title="global loss f(x_t)", title="Loss per method as clients take more local steps")


def local_steps_figure(local_steps: int = 10) -> go.Figure:
    """Live twin of the local-steps explorer."""
    k = check_int(local_steps, "local_steps", minimum=1)
    if k not in LOCAL_STEPS:
        raise ValueError(f"local_steps must be one of {LOCAL_STEPS}, got {k}")
    runs = _sweep()["steps"][k]
    fig = go.Figure(loss_traces(runs), layout=frame_note(_note(runs)))
    return base_layout(fig, logy=True, xaxis_title="round t", yaxis_title="global loss f(x_t)", title=f"K = {k}")


def ledger_rows(seed: int = 0) -> list[dict]:
    """The ledger of one tuned run per method: floats per round down and up, client and server state."""
    rows = []
    for m, res in tuned_runs(check_int(seed, "seed")).items():
        L = res.ledger
        rows.append({"method": LABELS[m], "client optimizer state (floats)": L.client_state[0],
                     "down / round": L.floats_down[0], "up / round": L.floats_up[0],
                     "total after 30 rounds": L.totals()["floats"],
                     "final loss": f"{res.final_loss:.4f}"})
    return rows


def ledger_slider_figure(seed: int = 0) -> go.Figure:
    """Cumulative floats sent and client memory per method, one frame per round."""
    runs = tuned_runs(check_int(seed, "seed"))
    names = [LABELS[m] for m in runs]
    steps = []
    for t in (1, 5, 10, 20, 30):
        sent = [sum(r.ledger.floats_down[:t]) + sum(r.ledger.floats_up[:t]) for r in runs.values()]
        state = [r.ledger.client_state[t - 1] for r in runs.values()]
        bars = [go.Bar(x=names, y=sent, name="floats sent so far", marker_color=color_for(0), yaxis="y"),
                go.Bar(x=names, y=state, name="client optimizer state (floats)", marker_color=color_for(1),
                       xaxis="x2", yaxis="y2")]
        steps.append(SliderStep(str(t), bars, frame_note(f"after {t} round{'s' * (t > 1)}")))
    fig = slider_figure(steps, slider_label="round", active=4, fixed_axes=False, height=520,
                        title="The ledger: what each method sent and what a client had to store")
    total = max(sum(r.ledger.floats_down) + sum(r.ledger.floats_up) for r in runs.values())
    fig.update_layout(xaxis=dict(domain=[0, 0.42]), xaxis2=dict(domain=[0.58, 1], anchor="y2"),
                      yaxis=dict(title="floats sent (all clients)", range=[0, 1.05 * total]),
                      yaxis2=dict(title="client state (floats)", anchor="x2", range=[0, 110]))
    return fig


EXPLORER_HETEROGENEITY = Explorer("21", "heterogeneity", heterogeneity_figure,
                                  {"heterogeneity": Slider("heterogeneity h", HETEROGENEITIES, 1.0)},
                                  description="Loss curves per method as clients' data grow apart")
EXPLORER_LOCAL_STEPS = Explorer("21", "local_steps", local_steps_figure,
                                {"local_steps": Slider("local steps K", LOCAL_STEPS, 10, fmt="{}")},
                                description="Loss curves per method as clients take more local steps")


def cost_figure(shapes=((768, 3072), (3072, 768)), clients_per_round: int = 10) -> go.Figure:
    """What one round costs each method, from the accounting rules: floats sent per round (left) and
    the client's optimizer state (right), for a model made of the given matrices (default: one
    ViT-B MLP block, d = 4.7 million)."""
    S = check_int(clients_per_round, "clients_per_round", minimum=1)
    d = int(sum(np.prod(s) for s in shapes))
    names = [LABELS[m] for m in METHODS]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14)
    fig.add_trace(go.Bar(x=names, y=[floats_per_round(m, d, S) / 1e6 for m in METHODS], marker_color=color_for(0),
                         name="floats per round (millions)"), 1, 1)
    fig.add_trace(go.Bar(x=names, y=[client_state_floats(m, shapes) / 1e6 for m in METHODS],
                         marker_color=color_for(1), name="client optimizer state (millions)"), 1, 2)
    base_layout(fig, height=440, title=f"Cost of one round with {S} clients, d = {d / 1e6:.1f} million")
    fig.update_yaxes(title_text="floats sent per round (millions)", row=1, col=1)
    fig.update_yaxes(title_text="client state (million floats)", row=1, col=2)
    fig.update_xaxes(tickangle=-35)
    return fig


def sm3_heatmap_figure(seed: int = 0, local_steps: int = 10) -> go.Figure:
    """AdaGrad's accumulator sum_k g_k^2 (left, log10) and SM3's nu divided by it (right, >= 1) for
    the 20 x 5 weight matrix after ``local_steps`` mini-batch gradients of one client at x = 0."""
    seed, K = check_int(seed, "seed"), check_int(local_steps, "local_steps", minimum=1)
    p = problem(seed)
    m, n = p.shapes[0]
    rng = np.random.default_rng(seed)
    x = torch.zeros(1, p.dim, dtype=DTYPE)
    row, col = torch.zeros(1, m, dtype=DTYPE), torch.zeros(1, n, dtype=DTYPE)
    total = torch.zeros(1, m, n, dtype=DTYPE)
    for _ in range(K):
        idx = torch.as_tensor(rng.integers(0, p.samples_per_client, size=(1, RUN["batch_size"])))
        g = p.grad(x, torch.tensor([0]), idx).reshape(1, m, n)
        nu = sm3_accumulate(g, row, col)
        total += g * g
    ada, ratio = total[0].numpy(), (nu / total)[0].numpy()
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.2)
    fig.add_trace(go.Heatmap(z=np.log10(ada), colorscale="Viridis", colorbar=dict(x=0.4, len=0.9, title="log10"),
                             hovertemplate="feature %{y}, class %{x}: 10^%{z:.2f}<extra>AdaGrad</extra>"), 1, 1)
    fig.add_trace(go.Heatmap(z=ratio, colorscale="Oranges", zmin=1, colorbar=dict(x=1.0, len=0.9, title="ratio"),
                             hovertemplate="feature %{y}, class %{x}: %{z:.2f}<extra>SM3 / AdaGrad</extra>"), 1, 2)
    base_layout(fig, height=480, title=f"AdaGrad's {m * n} accumulators (left) and how much SM3's {m + n} "
                                       f"over-estimate them (right), after {K} steps")
    fig.update_xaxes(title_text="class", dtick=1)
    fig.update_yaxes(title_text="feature", autorange="reversed", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    return fig


#: How the notebook prints each claim's figures.
GLUE_FORMATS = {
    "matches_joint": {k: "{:.3f}" for k in ("ratio_to_joint", "ratio_to_joint_min", "ratio_to_joint_max",
                                            "ratio_to_fedavg", "ratio_to_fedavg_max", "loss", "loss_joint",
                                            "loss_fedavg", "loss_fedadam", "fedadam_over_joint")}
    | {"dissimilarity_ratio": "{:.0f}"},
    "sm3_matches": {"ratio": "{:.3f}", "ratio_min": "{:.3f}", "ratio_max": "{:.3f}", "state_ratio": "{:.2f}",
                    "tuned_scalar_ratio": "{:.3f}",
                    "state_ratio_theory": "{:.2f}", "state_sm3": "{:.0f}", "state_adagrad": "{:.0f}"},
    "communication": {"ratio": "{:.4f}", "floats_fedada2": "{:.0f}", "floats_joint": "{:.0f}",
                      "max_iterate_gap": "{:.0e}", "on_gloo": lambda v: "gloo" if v else "in-process"},
}


def state_table(shapes=((20, 5), (768, 3072), (3072, 768))) -> list[dict]:
    """Client optimizer-state floats of AdaGrad and SM3 for matrix shapes (the second and third are
    a ViT-B MLP block's)."""
    rows = []
    for s in shapes:
        a, b = client_state_floats("FedAda2", [s]), client_state_floats("FedAda2++", [s])
        rows.append({"matrix": f"{s[0]} x {s[1]}", "AdaGrad": a, "SM3": b, "SM3 / AdaGrad": f"{b / a:.2%}"})
    return rows
