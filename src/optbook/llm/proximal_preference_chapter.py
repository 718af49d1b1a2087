"""Chapter 36: the book's experiments, figures, live explorers and claims for PRO. The losses and
the softmax-feature toy are in :mod:`optbook.llm.proximal_preference`.

Three settings, from the smallest up:
- the card's one-prompt toy (five responses with shared features; one unseen response lies along
  phi_w - phi_l), where DPO sends all the mass to that unseen response;
- 200 random prompts with a hidden linear reward (pairwise feedback; binary and scalar too),
  every method tuned on held-out seeds;
- the tiny character LM of Part VII: held-out corpus text as prompts, its true continuation as the
  chosen response, a continuation taken from elsewhere as the rejected one.
"""
from __future__ import annotations

import copy
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch

from ..claims import Criterion, Measured, claim
from ..core import Tuning, check_choice, check_int, check_positive, grid_search
from ..core.threads import one_torch_thread
from ..viz import SliderStep, base_layout, color_for, frame_note, slider_figure
from ..widgets import Choice, Explorer, Slider
from . import proximal_preference as pp
from . import tinylm

# --------------------------------------------------------------------------- the card's toy

TOY_STEPS, TOY_LR = 1000, 0.3      # = the card's 3000 steps at lr 0.1 (same lr x steps)
TOY_RECORD = 20
TOY_JITTER = 0.1                   # seed s > 0: the card's features plus N(0, 0.1^2) noise
TOY_ALPHA = 1.0
TOY_NAMES = ("chosen y_w", "rejected y_l", "OOD (0, 3, 0)", "unseen (0, 0, 1)", "unseen (.5, 0, -1)")
ALPHA_GRID = (0.0, 0.5, 1.0, 2.0, 4.0)
CLAIM_SEEDS = (0, 1, 2, 3, 4)
FAST_SEEDS = (0, 1)


def toy_problem(seed: int = 0) -> pp.FeatureProblem:
    """The card's instance (seed 0) or a jittered copy of it (seed > 0)."""
    seed = check_int(seed, "seed")
    return pp.card_problem(TOY_JITTER if seed else 0.0, rng=seed)


@lru_cache(maxsize=64)
def toy_run(alpha: float, seed: int = 0, steps: int = TOY_STEPS) -> dict:
    """PRO with weight ``alpha`` on the hyper-response term (alpha = 0: DPO up to a factor) on the toy."""
    alpha = check_positive(alpha, "alpha", allow_zero=True)
    return pp.train_toy(toy_problem(seed), "PRO", steps=steps, lr=TOY_LR, record_every=TOY_RECORD, alpha=alpha)


def toy_summary(run: dict) -> dict:
    """pi(y_w), pi(y_l), pi(OOD) at the start and the end, and the log-likelihood margin."""
    pi0, pi1 = np.exp(run["logpi"][0][0]), np.exp(run["logpi"][-1][0])
    return {"chosen_ratio": pi1[0] / pi0[0], "chosen": pi1[0], "rejected": pi1[1], "ood": pi1[2],
            "margin": float(np.log(pi1[0]) - np.log(pi1[1]))}


def toy_table() -> list[dict]:
    """The card's table: final probabilities under DPO (alpha = 0) and PRO for alpha 0.5, 1, 2."""
    rows = []
    for a in (0.0, 0.5, 1.0, 2.0):
        s = toy_summary(toy_run(a))
        rows.append({"method": "DPO (alpha = 0)" if a == 0 else f"PRO, alpha = {a:g}",
                     "pi(y_w)": f"{s['chosen']:.3f}", "pi(y_l)": f"{s['rejected']:.3f}",
                     "pi(OOD)": f"{s['ood']:.3f}", "margin log pi(y_w) - log pi(y_l)": f"{s['margin']:.2f}"})
    return rows


# --------------------------------------------------------------------------- 200 random prompts

EXT_PROMPTS, EXT_K, EXT_D = 200, 8, 6
EXT_STEPS, EXT_LR = 200, 1.0       # full-batch GD; every method has converged by then (checked)
FAST_EXT_STEPS = 100
IPO_LR = 0.05                      # IPO's squared loss has curvature ~2|dphi|^2 ~ 24: GD at lr 1 diverges
TUNING_SEEDS = (100, 101)          # held out: the claims run on seeds 0..4
EXT_GRIDS = {
    "PRO": {"alpha": (1.0, 0.5, 2.0)},
    "DPO": {"beta": (1.0, 0.3, 3.0)},
    "IPO": {"tau": (0.1, 0.03, 0.3)},
    "DPO+NLL": {"lam": (0.3, 0.1, 1.0)},   # first grid (1, 0.3, 3) had its best on the edge (0.3): shifted
    "SFT": {"lr": (1.0, 0.3, 3.0)},
}
EXT_METHODS = tuple(EXT_GRIDS)


@lru_cache(maxsize=16)
def ext_data(seed: int, feedback: str = "pairwise") -> tuple[pp.FeatureProblem, pp.FeatureProblem, np.ndarray]:
    """(training prompts, held-out prompts of the same hidden reward, w*) for one seed."""
    seed = check_int(seed, "seed")
    train, w = pp.random_problem(EXT_PROMPTS, EXT_K, EXT_D, feedback=feedback, rng=seed)
    held, _ = pp.random_problem(EXT_PROMPTS, EXT_K, EXT_D, feedback="pairwise", rng=seed + 10_000, w=w)
    return train, held, w


@lru_cache(maxsize=512)
def ext_run(method: str, seed: int, steps: int = EXT_STEPS, feedback: str = "pairwise", **hp) -> dict:
    """One method on one seed's prompts; returns the measurements the chapter uses:
    ``dlogp_w`` (mean change of log pi(y_w) over the training prompts, the chosen or the
    desirable/top-rated response), ``dlogp_l``, ``acc`` (held-out pairs ranked as the hidden
    reward ranks them by the implicit reward), ``reward_gain`` (E_pi r* - E_ref r* on held-out
    prompts), ``unseen`` (mean mass on responses absent from the data)."""
    check_choice(method, "method", pp.METHODS)
    train, held, w = ext_data(seed, feedback)
    if "lr" in hp:
        lr = hp.pop("lr")
    elif method == "IPO":
        lr = IPO_LR
    elif method == "DPO":
        # DPO's loss depends on beta theta only: a step EXT_LR / beta^2 gives every beta the same path
        # of beta theta (a fixed step made beta = 3 oscillate; the referee's fix, after the full run)
        lr = EXT_LR / hp.get("beta", 1.0) ** 2
    else:
        lr = EXT_LR
    run = pp.train_toy(train, method, steps=steps, lr=lr, record_every=steps, **hp)
    lp, ref, theta = run["logpi"][-1], run["logpi_ref"], run["theta"]
    d = train.observed_logp(lp) - train.observed_logp(ref)
    best = np.argmax(train.scores, axis=1)          # the chosen / desirable / top-rated response
    rows = np.arange(len(d))
    keep = train.scores[rows, best] > 0
    rows_h = np.arange(EXT_PROMPTS)
    dphi = held.phi[rows_h, held.observed[:, 0]] - held.phi[rows_h, held.observed[:, 1]]
    acc = float(np.mean(np.sign(dphi @ theta) == np.sign(dphi @ w)))
    lh = held.log_policy(theta)
    reward = held.phi @ w
    gain = float((np.exp(lh) * reward).sum(1).mean() - (np.exp(held.log_policy(np.zeros(EXT_D))) * reward).sum(1).mean())
    out = {"dlogp_w": float(d[rows, best][keep].mean()), "acc": acc, "reward_gain": gain,
           "unseen": float(1 - np.exp(train.observed_logp(lp)).sum(1).mean())}
    if d.shape[1] > 1:
        worst = np.argmin(train.scores, axis=1)
        out["dlogp_l"] = float(d[rows, worst].mean())
    return out


def _ext_score(method: str):
    def score(seed: int, **setting) -> float:
        return ext_run(method, seed, **setting)["acc"]
    return score


@lru_cache(maxsize=2)
def ext_tuning(seeds: tuple[int, ...] = TUNING_SEEDS) -> dict[str, Tuning]:
    """Every method over a 3-point grid of its own hyperparameter (SFT: its step size), scored by
    held-out preference accuracy, median over the held-out tuning seeds (ties: first tried wins,
    and each grid lists the default first)."""
    return {m: grid_search(m, _ext_score(m), EXT_GRIDS[m], seeds, higher_is_better=True) for m in EXT_METHODS}


def ext_best(method: str, fast: bool = False) -> dict:
    """The tuned setting of ``method`` (fast mode: the first, default, setting of its grid)."""
    if fast:
        return {k: v[0] for k, v in EXT_GRIDS[method].items()}
    return ext_tuning()[method].best


def ext_results(seeds=CLAIM_SEEDS, steps: int = EXT_STEPS) -> dict[str, list[dict]]:
    """Every tuned method on the claim's seeds."""
    return {m: [ext_run(m, s, steps, **ext_best(m)) for s in seeds] for m in EXT_METHODS}


def feedback_table(seeds=(0, 1, 2)) -> list[dict]:
    """PRO (alpha = 1) on binary and scalar feedback, and alpha = 0 on binary (no regulariser
    left): the change of the desirable (top-rated) response's log-likelihood, the held-out
    accuracy and the unseen mass, medians over seeds."""
    rows = []
    for fb, alphas in (("binary", (1.0, 0.0)), ("scalar", (1.0,))):
        for a in alphas:
            r = [ext_run("PRO", s, feedback=fb, alpha=a) for s in seeds]
            rows.append({"feedback": fb, "method": f"PRO, alpha = {a:g}" + (" (no regulariser)" if (a == 0 and fb == "binary") else ""),
                         "change of log pi(best response)": f"{np.median([x['dlogp_w'] for x in r]):+.2f}",
                         "held-out accuracy": f"{np.median([x['acc'] for x in r]):.3f}",
                         "mass on unseen responses": f"{np.median([x['unseen'] for x in r]):.3f}"})
    return rows


# --------------------------------------------------------------------------- the tiny language model

LM_PAIRS, LM_PROMPT, LM_CONT = 16, 24, 12     # pairs per run, prompt and continuation characters
LM_STEPS, LM_LR, LM_BETA, LM_ALPHA = 20, 5e-3, 0.1, 1.0
FAST_LM_STEPS = 8
LM_SEEDS = (0, 1, 2, 3, 4)


def lm_pairs(seed: int, n: int = LM_PAIRS) -> tuple[torch.Tensor, torch.Tensor]:
    """(chosen, rejected) id tensors (n, LM_PROMPT + LM_CONT) from held-out corpus text: the same
    prompt, continued by its true text (chosen) or by the text that follows another random spot
    (rejected)."""
    seed, n = check_int(seed, "seed"), check_int(n, "n", minimum=1)
    ids = torch.cat([tinylm.split(d)[1] for d in tinylm.DOMAINS])
    g = torch.Generator().manual_seed(seed)
    length = LM_PROMPT + LM_CONT
    starts = torch.randint(0, len(ids) - length, (2 * n,), generator=g).tolist()
    seqs = torch.stack([ids[s:s + length] for s in starts])
    return seqs[:n], torch.cat([seqs[:n, :LM_PROMPT], seqs[n:, LM_PROMPT:]], 1)


@lru_cache(maxsize=16)
def lm_run(method: str, seed: int, steps: int = LM_STEPS) -> dict:
    """Adam on a copy of the pretrained tiny LM with DPO or PRO (beta = LM_BETA, alpha = LM_ALPHA),
    the pretrained model as the reference; returns the mean change of log pi(y_w) and
    log pi(y_l) (nats per continuation) after each step."""
    check_choice(method, "method", ("DPO", "PRO"))
    base = tinylm.pretrained()
    chosen, rejected = lm_pairs(seed)
    policy = copy.deepcopy(base).train()
    opt = torch.optim.Adam(policy.parameters(), lr=LM_LR)
    scores = torch.tensor([[0.25, -0.25]]).expand(len(chosen), 2)

    both = torch.cat([chosen, rejected])
    n = len(chosen)

    def logps(model):
        lp = tinylm.sequence_logprob(model, both, LM_PROMPT)
        return torch.stack([lp[:n], lp[n:]], 1)

    hist = []
    with one_torch_thread():
        torch.manual_seed(seed)
        with torch.no_grad():
            ref = logps(base)
        for _ in range(check_int(steps, "steps", minimum=1)):
            lp = logps(policy)
            hist.append((lp - ref).mean(0).detach().numpy())     # before this step
            loss = (pp.dpo_loss_torch(lp, ref, beta=LM_BETA) if method == "DPO"
                    else pp.pro_loss_torch(lp, ref, scores, beta=LM_BETA, alpha=LM_ALPHA))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        with torch.no_grad():
            hist.append((logps(policy) - ref).mean(0).numpy())
    h = np.array(hist)
    return {"chosen": h[:, 0], "rejected": h[:, 1]}


# --------------------------------------------------------------------------- claims

GLUE_FORMATS = {
    "likelihood_pinned": {"pro_dlogp_w": "{:+.3f}", "dpo_dlogp_w": "{:+.3f}", "pro_acc_gap": "{:+.3f}",
                          "pro_acc": "{:.3f}", "dpo_acc": "{:.3f}", "pro_dlogp_w_min": "{:+.3f}",
                          "dpo_dlogp_w_max": "{:+.3f}", "pro_reward_gain": "{:+.2f}", "dpo_reward_gain": "{:+.2f}"},
    "card_toy": {"pro_chosen_ratio": "{:.2f}", "pro_ood_max": "{:.2f}", "dpo_chosen_ratio": "{:.1e}",
                 "dpo_ood_min": "{:.3f}", "pro_pref_kept": "{:.0%}"},
    "lm_likelihood": {"pro_dlogp_w": "{:+.1f}", "dpo_dlogp_w": "{:+.1f}", "pro_margin": "{:.1f}",
                      "dpo_margin": "{:.1f}"},
}


@claim("36", "PRO keeps the chosen likelihood from falling, DPO does not (200 prompts)", kind="reproduction",
       paper="Contrastive alignment (DPO) depresses the absolute likelihood of the example responses "
             "('likelihood underdetermination'); PRO's full regulariser eliminates it while matching the "
             "relative preferences. The paper gives no number for this effect on a proxy; its figures "
             "show DPO's chosen log-likelihood falling during training and PRO's not.",
       expect="On 200 random prompts (K = 8 responses, d = 6 shared features, pairwise Bradley-Terry labels "
              "from a hidden linear reward), 5 seeds, every method tuned on held-out seeds 100-101 over a "
              "3-point grid by held-out preference accuracy: the median over seeds of PRO's mean change of "
              "log pi(y_w) is >= 0 (sign rule: 'does not fall'), and the median of PRO's held-out accuracy "
              "minus tuned DPO's is >= -0.02 (about one binomial standard error on 200 pairs). Precondition: "
              "tuned DPO's median change is < 0. Registered before the full run.",
       control="Tuned DPO (the regulariser's hyper-response term off) in PRO's place: its chosen likelihood falls.",
       reproduces=False,
       diagnosis="Half of the registered criterion holds and half does not. The likelihood half reproduces on every "
                 "seed (PRO raises log pi(y_w) by about +0.11, tuned DPO lowers it by about -0.47); the accuracy half "
                 "misses by half a point (median gap -0.025 against -0.02). Four checks: (1) the baseline shows the "
                 "phenomenon (DPO's chosen likelihood falls on all 5 seeds); (2) hyperparameters on the card's scale "
                 "(beta = 1, alpha tuned over 0.5-2, not on the grid's edge); (3) reduction: PRO with alpha = 0 equals "
                 "(DPO - log 2)/2 to 1e-12 (tested); (4) the control (DPO) fails the criterion. Why: in this "
                 "well-specified proxy DPO's loss is the maximum-likelihood fit of the Bradley-Terry model that made "
                 "the labels, so an extra anchor can only bias theta's direction; the proxy has no harmful unseen "
                 "responses for underdetermination to reach, which is where the paper's gains come from. "
                 "Referee's notes (after the full run; verdict and thresholds kept): the miss is about 1.5 binomial "
                 "standard errors of one seed's accuracy, a near miss. 'Inconclusive' does not apply as registered: "
                 "the precondition (tuned DPO's chosen likelihood falls) holds, and the accuracy half is testable here "
                 "and robust to DPO's beta (DPO's accuracy depends on beta theta only, so every beta gives the same "
                 "accuracy once the step is scaled as 1/beta^2; the first registration's fixed step made beta = 3 "
                 "oscillate, now fixed, with the same tuned setting beta = 1 by the registered tie-break). But the "
                 "likelihood half's precondition is fragile: at beta = 3 DPO reaches the same accuracy and does not "
                 "lower log pi(y_w) (glued in the text), so this proxy shows underdetermination only for DPO's "
                 "smaller betas. An alpha below the registered grid would narrow the accuracy gap (seen after the "
                 "run, not used).",
       name="likelihood_pinned")
def claim_likelihood_pinned(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    steps = FAST_EXT_STEPS if fast else EXT_STEPS
    dpo = [ext_run("DPO", s, steps, **ext_best("DPO", fast)) for s in seeds]
    pro = dpo if control else [ext_run("PRO", s, steps, **ext_best("PRO", fast)) for s in seeds]
    others = {} if fast else {m: [ext_run(m, s, steps, **ext_best(m)) for s in seeds] for m in ("IPO", "DPO+NLL", "SFT")}
    v = {"pro_dlogp_w": np.median([r["dlogp_w"] for r in pro]),
         "pro_dlogp_w_min": min(r["dlogp_w"] for r in pro),
         "dpo_dlogp_w": np.median([r["dlogp_w"] for r in dpo]),
         "dpo_dlogp_w_max": max(r["dlogp_w"] for r in dpo),
         "pro_acc": np.median([r["acc"] for r in pro]), "dpo_acc": np.median([r["acc"] for r in dpo]),
         "pro_acc_gap": np.median([a["acc"] - b["acc"] for a, b in zip(pro, dpo)]),
         "pro_reward_gain": np.median([r["reward_gain"] for r in pro]),
         "dpo_reward_gain": np.median([r["reward_gain"] for r in dpo])}
    for m, rs in others.items():
        v[f"{m}_dlogp_w"] = np.median([r["dlogp_w"] for r in rs])
        v[f"{m}_acc"] = np.median([r["acc"] for r in rs])
    return Measured(v, criteria=[Criterion("pro_dlogp_w", ">=", 0.0), Criterion("pro_acc_gap", ">=", -0.02)],
                    seeds=seeds, precondition=bool(v["dpo_dlogp_w"] < 0),
                    summary=f"median change of log pi(y_w): PRO {v['pro_dlogp_w']:+.3f}, DPO {v['dpo_dlogp_w']:+.3f}; "
                            f"held-out accuracy PRO {v['pro_acc']:.3f}, DPO {v['dpo_acc']:.3f}",
                    details={"pro": pro, "dpo": dpo, **others})


@claim("36", "On the card's toy DPO sends the mass to an unseen response, PRO does not", kind="reproduction",
       paper="Likelihood underdetermination lets DPO move probability to responses outside the data (reward "
             "hacking without a reward model) while both example likelihoods fall; restoring the full "
             "regulariser pins them. No number in the paper for this toy (the card's construction).",
       expect="The card's one-prompt toy and 4 copies with N(0, 0.1^2) feature noise (5 seeds), GD lr 0.3 for "
              "1000 steps from the uniform reference: under PRO (alpha = 1) the median ratio pi(y_w)/pi_ref(y_w) "
              "is >= 1, the largest final mass on the OOD response is <= 0.75 (rule: well short of DPO's 1) and "
              "pi(y_w) > pi(y_l) on every seed (fraction >= 1). Precondition: DPO's median OOD mass is >= 0.99.",
       control="DPO (alpha = 0) in PRO's place: pi(y_w) collapses towards 0 and the OOD response takes all the mass.",
       name="card_toy")
def claim_card_toy(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    pro = [toy_summary(toy_run(0.0 if control else TOY_ALPHA, s)) for s in seeds]
    dpo = [toy_summary(toy_run(0.0, s)) for s in seeds]
    v = {"pro_chosen_ratio": np.median([r["chosen_ratio"] for r in pro]),
         "pro_ood_max": max(r["ood"] for r in pro),
         "pro_pref_kept": np.mean([r["chosen"] > r["rejected"] for r in pro]),
         "dpo_chosen_ratio": np.median([r["chosen_ratio"] for r in dpo]),
         "dpo_ood_min": min(r["ood"] for r in dpo),
         "dpo_ood": np.median([r["ood"] for r in dpo])}
    return Measured(v, criteria=[Criterion("pro_chosen_ratio", ">=", 1.0), Criterion("pro_ood_max", "<=", 0.75),
                                 Criterion("pro_pref_kept", ">=", 1.0)],
                    seeds=seeds, precondition=bool(v["dpo_ood"] >= 0.99),
                    summary=f"PRO: pi(y_w) x{v['pro_chosen_ratio']:.2f}, OOD <= {v['pro_ood_max']:.2f}; "
                            f"DPO: pi(y_w) x{v['dpo_chosen_ratio']:.1e}, OOD >= {v['dpo_ood_min']:.3f}")


@claim("36", "On the tiny LM, PRO raises the chosen continuation's likelihood, DPO lowers it", kind="reproduction",
       paper="DPO lowers the likelihood of the preferred responses of LLMs; PRO does not (no number for a proxy).",
       expect="Part VII's tiny LM (pretrained, copied as the policy, the original as the reference), 16 pairs of "
              "held-out corpus text (24-character prompt; its true 12-character continuation chosen, a "
              "continuation from elsewhere rejected), Adam lr 5e-3 for 20 steps, beta = 0.1, 5 seeds (raised at "
              "merge from the 3 first registered, before the 5-seed run, because one run takes ~2 s and the "
              "protocol asks 5 below 5 s a run; the 3-seed run gave PRO +5.4, DPO -5.9 nats): the median over seeds of PRO's (alpha = 1) "
              "mean change of log pi(y_w) is >= 0 nats and its mean margin log-ratio(y_w) - log-ratio(y_l) is > 0. "
              "Precondition: DPO's median change is < 0. Same settings for both, not tuned. Referee's disclosure "
              "(after the full run; a one-off sweep, not re-run by the notebook): over Adam steps 1e-3, 5e-3, "
              "2e-2 on held-out seeds 100-101, PRO's change stayed +5.0 to +5.3 nats and its margin about 10.7 "
              "at every step (it settles at the anchor's optimum), while DPO's margin grew with the step (53 to "
              "98 nats) and its chosen likelihood fell at 5e-3 and 2e-2 but rose at 1e-3 (+6 and +9 nats): DPO's "
              "fall appears only once its margin is large, so the LM precondition depends on DPO's step size.",
       control="DPO in PRO's place (same beta, step size and steps): the chosen continuation's likelihood falls.",
       name="lm_likelihood")
def claim_lm_likelihood(fast: bool = False, control: bool = False) -> Measured:
    seeds = LM_SEEDS[:1] if fast else LM_SEEDS
    steps = FAST_LM_STEPS if fast else LM_STEPS
    dpo = [lm_run("DPO", s, steps) for s in seeds]
    pro = dpo if control else [lm_run("PRO", s, steps) for s in seeds]
    v = {"pro_dlogp_w": np.median([r["chosen"][-1] for r in pro]),
         "pro_margin": np.median([r["chosen"][-1] - r["rejected"][-1] for r in pro]),
         "dpo_dlogp_w": np.median([r["chosen"][-1] for r in dpo]),
         "dpo_margin": np.median([r["chosen"][-1] - r["rejected"][-1] for r in dpo])}
    return Measured(v, criteria=[Criterion("pro_dlogp_w", ">=", 0.0), Criterion("pro_margin", ">", 0.0)],
                    seeds=seeds, precondition=bool(v["dpo_dlogp_w"] < 0),
                    summary=f"change of log pi(y_w): PRO {v['pro_dlogp_w']:+.1f}, DPO {v['dpo_dlogp_w']:+.1f} nats")


@claim("36", "DPO's loss = 2 (optimiser + regulariser) + log 2, and PRO with alpha = 0 is (DPO - log 2)/2",
       kind="identity",
       expect="Over 20 random reward vectors, sampling laws and preference matrices on K = 5 responses, the "
              "decomposed loss equals DPO's population loss to 1e-10; PRO's loss with alpha = 0 on random pairs "
              "equals (DPO - log 2)/2 to 1e-12, gradients included.",
       name="decomposition")
def claim_decomposition(fast: bool = False) -> Measured:
    g = np.random.default_rng(36)
    err = 0.0
    for _ in range(20):
        P = g.random((5, 5))
        P = np.triu(P, 1) + np.tril(1 - np.triu(P, 1).T, -1)
        np.fill_diagonal(P, 0.5)
        mu = g.dirichlet(np.ones(5))
        r = 3 * g.standard_normal(5)
        err = max(err, abs(pp.dpo_population_loss(r, mu, P) - pp.decomposed_loss(r, mu, P)))
    a, b = -np.abs(g.standard_normal((50, 2))) * 5, -np.abs(g.standard_normal((50, 2))) * 5
    d, e = pp.dpo_loss(a, b, beta=0.7), pp.pro_loss(a, b, pp.feedback_scores("pairwise", n_prompts=50), beta=0.7,
                                                    alpha=0.0)
    err2 = max(abs(e.value - 0.5 * (d.value - pp.LOG2)), float(np.abs(e.grad - 0.5 * d.grad).max()))
    return Measured({"population_err": err, "pro_alpha0_err": err2},
                    criteria=[Criterion("population_err", "<=", 1e-10), Criterion("pro_alpha0_err", "<=", 1e-12)],
                    summary=f"max errors {err:.1e} (decomposition), {err2:.1e} (PRO alpha = 0)")


# --------------------------------------------------------------------------- figures

def _layout(fig, **kw):
    return base_layout(fig, **kw)


def decomposition_figure() -> go.Figure:
    """For one pair with p = 1: DPO's loss, its optimiser -Delta/2 and its regulariser
    KL_1/2(Delta) against the reward margin Delta (the loss is twice the sum, plus log 2)."""
    d = np.linspace(-8, 8, 161)
    fig = go.Figure()
    for i, (name, y) in enumerate((("DPO loss -log sigmoid(Delta)", pp.softplus(-d)),
                                   ("optimiser -Delta/2 (pushes forever)", -d / 2),
                                   ("regulariser KL_1/2(Delta) (pulls to 0)", pp.kl_half(d)),
                                   ("optimiser + regulariser + log 2", -d / 2 + pp.kl_half(d) + pp.LOG2))):
        fig.add_trace(go.Scatter(x=d, y=y, name=name, mode="lines",
                                 line=dict(color=color_for(i), width=3 if i == 0 else 2,
                                           dash="dot" if i == 3 else None)))
    return _layout(fig, title="DPO's loss for one pair splits into a linear push and a symmetric pull",
                   xaxis_title="reward margin Delta = r(y_w) - r(y_l)", yaxis_title="loss (nats)")


def _simplex_xy(logpi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Barycentric coordinates of (pi(y_w), pi(y_l), unseen mass) in a triangle with corners
    y_w at (0, 0), y_l at (1, 0), unseen at (1/2, sqrt 3/2)."""
    pi = np.exp(logpi[:, 0, :])
    w, l = pi[:, 0], pi[:, 1]
    u = 1 - w - l
    return l + 0.5 * u, np.sqrt(3) / 2 * u


def _toy_traces(alpha: float) -> list:
    dpo, pro = toy_run(0.0), toy_run(alpha)
    tri = go.Scatter(x=[0, 1, 0.5, 0], y=[0, 0, np.sqrt(3) / 2, 0], mode="lines+text", showlegend=False,
                     line=dict(color="#888"), text=["all on y_w", "all on y_l", "all unseen", ""],
                     textposition=["bottom center", "bottom center", "top center", "bottom center"],
                     hoverinfo="skip")
    out = [tri]
    for i, (name, run) in enumerate((("DPO (alpha = 0)", dpo), (f"PRO (alpha = {alpha:g})", pro))):
        x, y = _simplex_xy(run["logpi"])
        out.append(go.Scatter(x=x, y=y, mode="lines", name=name, line=dict(color=color_for(i), width=3),
                              hovertemplate=name + "<extra></extra>"))
        out.append(go.Scatter(x=[x[-1]], y=[y[-1]], mode="markers", showlegend=False,
                              marker=dict(color=color_for(i), size=11, symbol="circle")))
    out.append(go.Scatter(x=[_simplex_xy(dpo["logpi"][:1])[0][0]], y=[_simplex_xy(dpo["logpi"][:1])[1][0]],
                          mode="markers", name="reference (uniform)", marker=dict(color="black", size=9, symbol="x")))
    return out


def simplex_slider_figure() -> go.Figure:
    """alpha slider: the path of (pi(y_w), pi(y_l), unseen mass) on the probability simplex under
    DPO and under PRO with the chosen alpha."""
    steps = []
    for a in ALPHA_GRID[1:]:
        s = toy_summary(toy_run(a))
        steps.append(SliderStep(f"{a:g}", _toy_traces(a), frame_note(
            f"PRO: pi(y_w) = {s['chosen']:.2f}, pi(y_l) = {s['rejected']:.2f}, OOD = {s['ood']:.2f}")))
    fig = slider_figure(steps, slider_label="alpha (weight of the hyper-response term)", active=1, height=560,
                        title="Where the mass goes: DPO runs to the unseen corner, PRO stops inside")
    fig.update_xaxes(range=[-0.1, 1.1], visible=False)
    fig.update_yaxes(range=[-0.12, 1.0], visible=False, scaleanchor="x")
    return fig


def _curve_traces(alpha: float) -> list:
    out = []
    for j, (name, run) in enumerate((("DPO", toy_run(0.0)), (f"PRO alpha={alpha:g}", toy_run(alpha)))):
        lp = run["logpi"][:, 0, :]
        unseen = np.log(np.exp(lp[:, 2:]).sum(1))
        for k, (what, y) in enumerate((("log pi(y_w)", lp[:, 0]), ("log pi(y_l)", lp[:, 1]),
                                       ("log unseen mass", unseen))):
            out.append(go.Scatter(x=run["steps"], y=y, mode="lines", name=f"{name}: {what}",
                                  line=dict(color=color_for(k), width=2.5, dash="dash" if j == 0 else "solid")))
    return out


def curves_slider_figure() -> go.Figure:
    """alpha slider: training curves of log pi for chosen, rejected and the unseen mass, DPO dashed."""
    steps = [SliderStep(f"{a:g}", _curve_traces(a)) for a in ALPHA_GRID[1:]]
    fig = slider_figure(steps, slider_label="alpha", active=1, height=560,
                        title="Log-likelihoods during training on the toy: DPO (dashed) against PRO (solid)",
                        xaxis_title="gradient step", yaxis_title="log-probability (nats)")
    fig.update_yaxes(range=[-12, 0.3])
    return fig


@lru_cache(maxsize=32)
def explorer_figure(alpha: float = 1.0, view: str = "simplex") -> go.Figure:
    """The live twin: one alpha, either view (cached: a figure per grid point, built once)."""
    check_choice(view, "view", ("simplex", "curves"))
    if view == "simplex":
        fig = go.Figure(_toy_traces(alpha))
        _layout(fig, title=f"Probability simplex, PRO alpha = {alpha:g}", height=520)
        fig.update_xaxes(range=[-0.1, 1.1], visible=False)
        fig.update_yaxes(range=[-0.12, 1.0], visible=False, scaleanchor="x")
        return fig
    fig = go.Figure(_curve_traces(alpha))
    _layout(fig, title=f"Log-likelihoods, PRO alpha = {alpha:g}", xaxis_title="gradient step",
            yaxis_title="log-probability (nats)", height=520)
    fig.update_yaxes(range=[-12, 0.3])
    return fig


EXPLORER = Explorer("36", "alpha", explorer_figure,
                    {"alpha": Slider("alpha", list(ALPHA_GRID[1:]), 1.0),
                     "view": Choice("view", ["simplex", "curves"], "simplex")})


def ext_figure(results: dict[str, list[dict]]) -> go.Figure:
    """Per method (tuned): the change of log pi(y_w) per seed against held-out accuracy."""
    fig = go.Figure()
    for i, (m, rs) in enumerate(results.items()):
        fig.add_trace(go.Scatter(x=[r["acc"] for r in rs], y=[r["dlogp_w"] for r in rs], mode="markers",
                                 name=m, marker=dict(color=color_for(i), size=11, symbol=["circle", "square", "diamond",
                                                                                        "triangle-up", "x"][i % 5])))
    fig.add_hline(y=0, line=dict(color="#888", dash="dot"))
    return _layout(fig, title="200 prompts, 5 seeds: only the methods with an anchor keep log pi(y_w) from falling",
                   xaxis_title="held-out preference accuracy", yaxis_title="mean change of log pi(y_w) (nats)")


def lm_figure(seed: int = 0) -> go.Figure:
    """Mean change of log pi(y_w) and log pi(y_l) on the tiny LM during DPO and PRO training."""
    fig = go.Figure()
    for j, m in enumerate(("DPO", "PRO")):
        r = lm_run(m, seed)
        for k, what in enumerate(("chosen", "rejected")):
            fig.add_trace(go.Scatter(x=np.arange(len(r[what])), y=r[what], mode="lines+markers",
                                     name=f"{m}: log pi({'y_w' if k == 0 else 'y_l'})",
                                     line=dict(color=color_for(k), width=2.5, dash="dash" if j == 0 else "solid")))
    fig.add_hline(y=0, line=dict(color="#888", dash="dot"))
    return _layout(fig, title="Tiny LM: DPO (dashed) pushes both continuations down, PRO (solid) lifts the chosen",
                   xaxis_title="Adam step", yaxis_title="mean change of log-likelihood (nats per continuation)")
