"""Combinatorial ski rental (chapter 28): offline optimum, randomised online strategies, the LP
that computes an instance's optimal competitive ratio, SOAC as reconstructed here, and the
learning-augmented rule for one item.

Conventions (one everywhere, the offline optimum included). Days are 1, 2, ...; the season lasts
``T`` days, unknown to the online player. A *plan* gives each item ``i`` a purchase day
``d_i`` (or :data:`NEVER`). Items bought on the same day are bought as one batch ``B`` at price
``f(B)``; a purchase on day ``d`` is paid at the start of day ``d`` and the item is not rented
that day. So a plan costs

    C(d, T) = sum_i r_i * min(d_i - 1, T) + sum_{batches B with day <= T} f(B).

A randomised strategy is a probability vector over plans; its competitive ratio is
``sup_T E[C(d, T)] / OPT(T)``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog

from ..core.validate import as_rng, check_in_range, check_int, check_positive, check_vector

#: Purchase day of an item that is never bought (larger than any season we evaluate).
NEVER = 10**9
#: Largest number of items handled by brute force over subsets and plans.
MAX_ITEMS = 10


@dataclass(frozen=True)
class CSRInstance:
    """A combinatorial ski rental instance.

    Parameters
    ----------
    rents : array of shape (n,)
        Positive rent per day of each item, ``r_i``.
    buy : array of shape (2**n,)
        ``buy[mask]`` is the price ``f(S)`` of buying the set whose bitmask is ``mask`` (bit ``i``
        set when item ``i`` is in ``S``); ``buy[0]`` must be 0 and every other price positive.
    require_submodular : bool
        Refuse a ``buy`` that is not submodular (the paper's model).
    """

    rents: np.ndarray
    buy: np.ndarray
    require_submodular: bool = True
    n: int = field(init=False)

    def __post_init__(self) -> None:
        r = check_vector(self.rents, "rents")
        if r.size > MAX_ITEMS:
            raise ValueError(f"rents must have at most {MAX_ITEMS} items, got {r.size}")
        if np.any(r <= 0):
            raise ValueError("rents must be positive")
        f = check_vector(self.buy, "buy", dim=2 ** r.size)
        if f[0] != 0:
            raise ValueError(f"buy[0] (the empty set) must be 0, got {f[0]}")
        if np.any(f[1:] <= 0):
            raise ValueError("buy must be positive for every non-empty set")
        if self.require_submodular and not is_submodular(f):
            raise ValueError("buy must be submodular (f(S+i) - f(S) non-increasing in S)")
        object.__setattr__(self, "rents", r.copy())
        object.__setattr__(self, "buy", f.copy())
        object.__setattr__(self, "n", int(r.size))

    @classmethod
    def from_dict(cls, rents, prices: dict, **kw) -> CSRInstance:
        """Build from ``{(items...): price}`` with 0-based item tuples, e.g. ``{(0,): 10, (1,): 6, (0, 1): 13}``."""
        n = len(np.atleast_1d(rents))
        buy = np.full(2 ** n, np.nan)
        buy[0] = 0.0
        for items, price in prices.items():
            items = tuple(items)
            if not items or any(not 0 <= i < n for i in items):
                raise ValueError(f"prices keys must be non-empty tuples of items in 0..{n - 1}, got {items}")
            buy[sum(1 << i for i in set(items))] = price
        if np.isnan(buy).any():
            raise ValueError(f"prices must give a price for each of the {2 ** n - 1} non-empty sets")
        return cls(np.asarray(rents, dtype=float), buy, **kw)

    def rent_of(self, masks: np.ndarray) -> np.ndarray:
        """``r(S)`` for each bitmask in ``masks``."""
        bits = (np.asarray(masks)[..., None] >> np.arange(self.n)) & 1
        return bits @ self.rents


def is_submodular(buy: np.ndarray, tol: float = 1e-9) -> bool:
    """True when ``f(A + i) - f(A) >= f(B + i) - f(B)`` for all ``A`` subset of ``B`` not holding ``i``
    (checked on the equivalent local condition ``f(S+i) + f(S+j) >= f(S+i+j) + f(S)``)."""
    f = check_vector(buy, "buy")
    n = int(round(np.log2(f.size)))
    if 2 ** n != f.size:
        raise ValueError(f"buy must have length 2**n, got {f.size}")
    masks = np.arange(f.size)
    for i, j in itertools.combinations(range(n), 2):
        s = masks[((masks >> i) & 1 == 0) & ((masks >> j) & 1 == 0)]
        bi, bj = 1 << i, 1 << j
        if np.any(f[s | bi] + f[s | bj] < f[s | bi | bj] + f[s] - tol * (1 + np.abs(f).max())):
            return False
    return True


def _seasons(T) -> np.ndarray:
    t = np.atleast_1d(np.asarray(T))
    if t.size == 0 or not np.issubdtype(t.dtype, np.integer) or np.any(t < 1):
        raise ValueError("T must hold positive integers (season lengths in days)")
    return t.astype(np.int64)


def offline_opt(inst: CSRInstance, T) -> np.ndarray:
    """``OPT(T) = min_S f(S) + T r(N \\ S)``: the offline optimum buys once, on day 1."""
    t = _seasons(T)
    masks = np.arange(2 ** inst.n)
    full = 2 ** inst.n - 1
    lines = inst.buy[:, None] + inst.rent_of(full ^ masks)[:, None] * t[None, :]
    return lines.min(axis=0)


@dataclass(frozen=True)
class Chain:
    """The offline optimum's minimisers along increasing ``T``: ``S_0 subset ... subset S_k`` and the
    seasons ``tau_j`` (real, >= 0) at which ``S_j`` takes over from ``S_{j-1}``."""

    sets: tuple[int, ...]
    breakpoints: tuple[float, ...]

    @property
    def nested(self) -> bool:
        return all(a & b == a for a, b in zip(self.sets, self.sets[1:]))


def opt_chain(inst: CSRInstance) -> Chain:
    """The lower envelope of the ``2**n`` lines ``f(S) + T r(N \\ S)`` for ``T >= 0``."""
    full = 2 ** inst.n - 1
    masks = np.arange(full + 1)
    icpt, slope = inst.buy, inst.rent_of(full ^ masks)
    scale = 1e-12 * (1 + icpt.max())
    # start: the cheapest line at T = 0, ties broken toward the smaller slope
    cur = int(np.lexsort((slope, icpt))[0])
    sets, bps = [cur], [0.0]
    while True:
        lower = slope < slope[cur] - scale
        if not lower.any():
            break
        cand = masks[lower]
        cross = (icpt[cand] - icpt[cur]) / (slope[cur] - slope[cand])
        first = cross.min()
        ties = cand[cross <= first + scale * (1 + abs(first))]
        cur = int(ties[np.argmin(slope[ties])])
        sets.append(cur)
        bps.append(float(max(first, 0.0)))
    return Chain(tuple(sets), tuple(bps))


# ---------------------------------------------------------------- plans and their costs


def all_plans(n: int, horizon: int) -> np.ndarray:
    """Every deterministic plan with purchases on days ``1..horizon``: rows of purchase days,
    :data:`NEVER` for an item never bought (``(horizon + 1) ** n`` rows)."""
    n = check_int(n, "n", minimum=1)
    horizon = check_int(horizon, "horizon", minimum=1)
    if (horizon + 1) ** n > 200_000:
        raise ValueError(f"(horizon + 1) ** n = {(horizon + 1) ** n} plans is too many; lower horizon or n")
    days = np.append(np.arange(1, horizon + 1), NEVER)
    return np.array(list(itertools.product(days, repeat=n)), dtype=np.int64).reshape(-1, n)


def plan_costs(inst: CSRInstance, plans: np.ndarray, T) -> np.ndarray:
    """``C(plan, T)`` for every plan (rows) and season (columns); see the module docstring."""
    d = np.asarray(plans)
    if d.ndim != 2 or d.shape[1] != inst.n or not np.issubdtype(d.dtype, np.integer) or np.any(d < 1):
        raise ValueError(f"plans must be an integer array of shape (P, {inst.n}) of days >= 1")
    t = _seasons(T)
    rent = (np.minimum(d[:, :, None] - 1, t[None, None, :]) * inst.rents[None, :, None]).sum(axis=1)
    same = d[:, :, None] == d[:, None, :]
    batch = (same * (1 << np.arange(inst.n))[None, None, :]).sum(axis=2)  # (P, n): item i's batch
    leader = ~np.tril(same, k=-1).any(axis=2)  # no earlier item in the same batch
    bought = (d[:, :, None] <= t[None, None, :]) & leader[:, :, None]
    return rent + (bought * inst.buy[batch][:, :, None]).sum(axis=1)


@dataclass
class Strategy:
    """A randomised online strategy: a distribution over plans (Yao's view: mixed strategy).

    ``plans`` has one row of purchase days per plan, ``probs`` its probability. The online
    player draws one plan before day 1 and follows it; since a plan only reads the calendar, this
    is a legitimate online algorithm.
    """

    name: str
    plans: np.ndarray
    probs: np.ndarray

    def __post_init__(self) -> None:
        self.plans = np.asarray(self.plans, dtype=np.int64)
        p = check_vector(self.probs, "probs", dim=self.plans.shape[0])
        if np.any(p < -1e-9) or abs(p.sum() - 1) > 1e-6:
            raise ValueError("probs must be a probability vector")
        keep = p > 1e-12
        self.plans, self.probs = self.plans[keep], np.clip(p[keep], 0, None) / p[keep].sum()

    def expected_cost(self, inst: CSRInstance, T) -> np.ndarray:
        return self.probs @ plan_costs(inst, self.plans, T)

    def ratio_curve(self, inst: CSRInstance, T) -> np.ndarray:
        """``E[ALG(T)] / OPT(T)`` at each season ``T``."""
        return self.expected_cost(inst, T) / offline_opt(inst, T)

    def worst_ratio(self, inst: CSRInstance, t_max: int) -> float:
        """``max_{T <= t_max} E[ALG(T)] / OPT(T)``."""
        return float(self.ratio_curve(inst, np.arange(1, check_int(t_max, "t_max", minimum=1) + 1)).max())

    def sample(self, rng=None) -> np.ndarray:
        """Draw one plan (its purchase days)."""
        g = as_rng(rng)
        return self.plans[g.choice(self.probs.size, p=self.probs)].copy()


def play(inst: CSRInstance, strategy: Strategy, season: int, rng=None) -> float:
    """Play one season online, day by day: draw a plan before day 1, then on each day buy (as one
    batch) the items the plan schedules for that day and rent the items not yet owned. The player
    never sees ``season``; the loop simply stops after its last day. Returns the cost paid."""
    season = check_int(season, "season", minimum=1)
    plan = strategy.sample(rng)
    owned = np.zeros(inst.n, dtype=bool)
    cost = 0.0
    for day in range(1, season + 1):
        today = (plan == day) & ~owned
        if today.any():
            cost += inst.buy[int((1 << np.flatnonzero(today)).sum())]
            owned |= today
        cost += inst.rents[~owned].sum()
    return float(cost)


def default_horizon(inst: CSRInstance) -> int:
    """``ceil(3 max_S f(S) / min_i r_i)``: the adversary's seasons beyond it cannot raise the
    ratio of a sensible strategy by much (the card's rule; tests check stability on doubling)."""
    return int(np.ceil(3 * inst.buy.max() / inst.rents.min()))


def _equaliser_lp(inst: CSRInstance, plans: np.ndarray, horizon: int, name: str) -> tuple[Strategy, float]:
    seasons = np.arange(1, horizon + 2)
    cost = plan_costs(inst, plans, seasons)
    opt = offline_opt(inst, seasons)
    P = plans.shape[0]
    # variables (p_1..p_P, c): minimise c s.t. sum_p p C(p,T) / OPT(T) <= c, sum p = 1, p >= 0
    A_ub = np.hstack([(cost / opt[None, :]).T, -np.ones((seasons.size, 1))])
    res = linprog(np.r_[np.zeros(P), 1.0], A_ub=A_ub, b_ub=np.zeros(seasons.size),
                  A_eq=np.r_[np.ones(P), 0.0][None, :], b_eq=[1.0],
                  bounds=[(0, None)] * P + [(1.0, None)], method="highs")
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"LP failed: {res.message}")
    return Strategy(name, plans, np.clip(res.x[:P], 0, None)), float(res.x[P])


def optimal_lp(inst: CSRInstance, horizon: int | None = None) -> tuple[Strategy, float]:
    """The instance-optimal randomised strategy over all plans with purchases on days
    ``1..horizon``, against seasons ``1..horizon + 1``, by linear programming (HiGHS).

    Returns the strategy and its LP value, the optimal competitive ratio of the capped game."""
    horizon = default_horizon(inst) if horizon is None else check_int(horizon, "horizon", minimum=1)
    return _equaliser_lp(inst, all_plans(inst.n, horizon), horizon, "LP optimum")


def chain_plans(chain: Chain, n: int, horizon: int) -> np.ndarray:
    """Plans that move up the chain ``S_0 subset ... subset S_k`` only: layer ``L_j = S_j - S_{j-1}`` is
    bought on day ``e_j`` with ``e_1 <= ... <= e_k`` (equal days form one batch), or never."""
    horizon = check_int(horizon, "horizon", minimum=1)
    n = check_int(n, "n", minimum=1)
    sets = chain.sets
    if not chain.nested:
        raise ValueError("chain must be nested (is buy submodular?)")
    days = list(range(1, horizon + 1)) + [NEVER]
    layers = [sets[j] & ~sets[j - 1] for j in range(1, len(sets))]
    rows = []
    for e in itertools.combinations_with_replacement(days, len(layers)):
        d = np.full(n, NEVER, dtype=np.int64)
        for i in range(n):
            if sets[0] >> i & 1:
                d[i] = 1
        for day, layer in zip(e, layers):
            for i in range(n):
                if layer >> i & 1:
                    d[i] = day
        rows.append(d)
    return np.array(rows, dtype=np.int64)


def soac(inst: CSRInstance, horizon: int | None = None) -> tuple[Strategy, float]:
    """SOAC as reconstructed in this chapter ('Sorted Optimal Amortized Cost' in the paper).

    The player climbs the offline optimum's chain of minimisers, sorted by their amortised rent
    ``r(N \\ S_j)``, and randomises the days of its moves so that ``E[ALG(T)] / OPT(T)`` is as
    flat (equalised) as possible; the switching-day distribution is found by a linear program
    over chain-following plans only (a few hundred, against ``(H+1)**n`` plans for the full LP).
    The paper's own update rule was not available; this reading is checked against
    :func:`optimal_lp`.
    """
    horizon = default_horizon(inst) if horizon is None else check_int(horizon, "horizon", minimum=1)
    chain = opt_chain(inst)
    return _equaliser_lp(inst, chain_plans(chain, inst.n, horizon), horizon, "SOAC")


# ---------------------------------------------------------------- baselines


def _deterministic(name: str, days) -> Strategy:
    return Strategy(name, np.asarray(days, dtype=np.int64)[None, :], np.ones(1))


def always_rent(inst: CSRInstance) -> Strategy:
    """Never buy (unbounded competitive ratio)."""
    return _deterministic("always rent", np.full(inst.n, NEVER))


def buy_all_now(inst: CSRInstance) -> Strategy:
    """Buy every item on day 1 (ratio ``f(N) / OPT(1)`` at ``T = 1``)."""
    return _deterministic("buy all on day 1", np.ones(inst.n))


def bundle_break_even(inst: CSRInstance, scale: float = 1.0) -> Strategy:
    """Buy the whole set ``N`` on day ``max(1, round(scale * f(N) / r(N)))`` (halves round up) (``scale = 1``:
    break-even)."""
    scale = check_positive(scale, "scale")
    day = max(1, int(np.floor(scale * inst.buy[-1] / inst.rents.sum() + 0.5)))
    return _deterministic("bundle break-even", np.full(inst.n, day))


def follow_opt(inst: CSRInstance, scale: float = 1.0) -> Strategy:
    """Deterministic: switch to ``S_j`` on day ``max(1, ceil(scale * tau_j))``, where ``tau_j`` is the
    chain's breakpoint (``scale = 1``: when the offline optimum would have started to prefer it)."""
    scale = check_positive(scale, "scale")
    chain = opt_chain(inst)
    d = np.full(inst.n, NEVER, dtype=np.int64)
    for s, tau in zip(reversed(chain.sets), reversed(chain.breakpoints)):
        day = max(1, int(np.ceil(scale * tau - 1e-9)))
        for i in range(inst.n):
            if s >> i & 1:
                d[i] = day
    return _deterministic("follow-OPT", d)


def bundle_karlin(inst: CSRInstance, scale: float = 1.0) -> Strategy:
    """Karlin's randomised rule applied to the whole set ``N`` as if it were one item of price ``f(N)``
    and rent ``r(N)``: buy everything, as one batch, on day ``i`` in ``1..b`` with Karlin's probabilities,
    ``b = max(1, round(scale f(N) / r(N)))`` (halves round up). Randomised and aware of the bundle
    price, but blind to the cheaper intermediate sets."""
    scale = check_positive(scale, "scale")
    b = max(1, int(np.floor(scale * inst.buy[-1] / inst.rents.sum() + 0.5)))
    days = np.arange(1, b + 1, dtype=np.int64)
    return Strategy("bundle Karlin", np.repeat(days[:, None], inst.n, axis=1), karlin_probs(b))


def bundle_lp(inst: CSRInstance, horizon: int | None = None) -> tuple[Strategy, float]:
    """The best randomised strategy that buys every item in one batch (the equaliser over the plans
    "buy ``N`` on day ``d``", ``d`` in ``1..horizon`` or never): SOAC with the chain cut down to
    ``{} subset N``, the ablation that shows what the chain's intermediate sets are worth."""
    horizon = default_horizon(inst) if horizon is None else check_int(horizon, "horizon", minimum=1)
    days = np.append(np.arange(1, horizon + 1), NEVER).astype(np.int64)
    return _equaliser_lp(inst, np.repeat(days[:, None], inst.n, axis=1), horizon, "bundle equaliser")


def karlin_probs(b: int) -> np.ndarray:
    """Karlin et al.'s optimal randomised rule for one item with rent 1 and price ``b`` (an
    integer): buy on day ``i`` in ``1..b`` with probability
    ``(1 - 1/b)**(b - i) / (b (1 - (1 - 1/b)**b))``. Its ratio is ``1 / (1 - (1 - 1/b)**b)``."""
    b = check_int(b, "b", minimum=1)
    if b == 1:
        return np.ones(1)
    i = np.arange(1, b + 1)
    q = 1.0 - 1.0 / b
    return q ** (b - i) / (b * (1.0 - q ** b))


def karlin_ratio(b: int) -> float:
    """``1 / (1 - (1 - 1/b)**b)``, the optimal randomised ratio for integer price ``b`` and rent 1."""
    b = check_int(b, "b", minimum=1)
    return 1.0 / (1.0 - (1.0 - 1.0 / b) ** b)


def per_item_karlin(inst: CSRInstance, scale: float = 1.0) -> Strategy:
    """Each item runs Karlin's rule on its own, with price ``b_i = max(1, round(scale f({i}) / r_i))``
    in days, independently of the others (items bought on the same day form one batch)."""
    scale = check_positive(scale, "scale")
    per = []
    for i in range(inst.n):
        b = max(1, int(np.floor(scale * inst.buy[1 << i] / inst.rents[i] + 0.5)))
        per.append((np.arange(1, b + 1), karlin_probs(b)))
    days = np.array(list(itertools.product(*(d for d, _ in per))), dtype=np.int64).reshape(-1, inst.n)
    probs = np.prod(np.array(list(itertools.product(*(p for _, p in per)))).reshape(-1, inst.n), axis=1)
    return Strategy("per-item Karlin", days, probs)


# ---------------------------------------------------------------- learning-augmented (one item)


def purohit_probs(b: int, prediction: float, trust: float) -> np.ndarray:
    """The learning-augmented randomised rule of Purohit, Svitkina and Kumar (2018) for one item,
    rent 1, integer price ``b``: with ``k = floor(trust * b)`` if the predicted season
    ``prediction >= b``, else ``k = ceil(b / trust)``, buy on day ``i`` in ``1..k`` with probability
    ``(1 - 1/b)**(k - i) / (b (1 - (1 - 1/b)**k))``. ``trust = 1`` is Karlin's rule; small ``trust``
    follows the prediction more boldly (the paper's lambda)."""
    b = check_int(b, "b", minimum=1)
    trust = check_in_range(trust, "trust", 0.0, 1.0, closed=(False, True))
    prediction = check_positive(prediction, "prediction", allow_zero=True)
    k = max(1, int(np.floor(trust * b + 1e-12))) if prediction >= b else int(np.ceil(b / trust - 1e-12))
    if b == 1:
        return np.ones(1)
    i = np.arange(1, k + 1)
    q = 1.0 - 1.0 / b
    return q ** (k - i) / (b * (1.0 - q ** k))


def one_item_costs(b: int, buy_days: np.ndarray, T) -> np.ndarray:
    """Cost of buying on each of ``buy_days`` (rows) for each season ``T`` (columns): rent 1, price ``b``."""
    inst = CSRInstance(np.ones(1), np.array([0.0, float(check_int(b, "b", minimum=1))]))
    return plan_costs(inst, np.asarray(buy_days, dtype=np.int64).reshape(-1, 1), T)


def purohit_bounds(b: int, trust: float) -> tuple[float, float]:
    """The guarantees of Purohit et al. for integer price ``b``: consistency
    ``trust / (1 - exp(-trust))`` (perfect prediction; the continuous-time bound) and robustness
    ``(1 + 1/b) / (1 - exp(-(trust - 1/b)))`` (any prediction)."""
    b = check_int(b, "b", minimum=2)
    trust = check_in_range(trust, "trust", 1.0 / b, 1.0, closed=(False, True))
    return trust / (1 - np.exp(-trust)), (1 + 1 / b) / (1 - np.exp(-(trust - 1 / b)))
