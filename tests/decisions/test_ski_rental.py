"""Combinatorial ski rental: offline optimum, plan costs, the LP, SOAC, baselines, Karlin, Purohit et al."""
import numpy as np
import pytest

from optbook.decisions import ski_rental as sr

CARD = sr.CSRInstance.from_dict([1.0, 1.0], {(0,): 10, (1,): 6, (0, 1): 13})


def concave_instance(seed, n=3):
    g = np.random.default_rng(seed)
    w, r = g.uniform(1, 3, n), g.uniform(0.5, 1.5, n)
    masks = np.arange(2 ** n)
    return sr.CSRInstance(r, g.uniform(2, 5) * np.sqrt(((masks[:, None] >> np.arange(n)) & 1) @ w))


# ---------------------------------------------------------------- the model


def test_submodularity_checker():
    assert sr.is_submodular(CARD.buy)
    assert sr.is_submodular(concave_instance(0, 4).buy)
    # supermodular: the pair costs more than its parts
    assert not sr.is_submodular(np.array([0.0, 1.0, 1.0, 3.0]))
    # a 3-item function violating the local condition only above the empty set
    # three items: f({1,2,3}) - f({1,2}) = 4 exceeds f({1,3}) - f({1}) = 2
    f = np.array([0, 4, 4, 6, 4, 6, 6, 10.0])
    assert not sr.is_submodular(f)
    with pytest.raises(ValueError, match="submodular"):
        sr.CSRInstance(np.ones(2), np.array([0.0, 1.0, 1.0, 3.0]))
    assert sr.CSRInstance(np.ones(2), np.array([0.0, 1.0, 1.0, 3.0]), require_submodular=False).n == 2


def test_offline_opt_is_the_brute_force_minimum_and_concave():
    inst = concave_instance(1)
    T = np.arange(1, 60)
    opt = sr.offline_opt(inst, T)
    brute = [min(inst.buy[m] + t * sum(inst.rents[i] for i in range(3) if not m >> i & 1) for m in range(8)) for t in T]
    assert opt == pytest.approx(brute)
    assert np.all(np.diff(opt) >= -1e-12) and np.all(np.diff(opt, 2) <= 1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_opt_chain_is_nested_and_matches_the_envelope(seed):
    inst = concave_instance(seed, n=3 + seed % 2)
    chain = sr.opt_chain(inst)
    assert chain.nested and chain.sets[0] == 0 and chain.sets[-1] == 2 ** inst.n - 1
    assert np.all(np.diff(chain.breakpoints) >= 0)
    full = 2 ** inst.n - 1
    for j, s in enumerate(chain.sets):  # S_j is a minimiser between its breakpoints
        lo = chain.breakpoints[j]
        hi = chain.breakpoints[j + 1] if j + 1 < len(chain.sets) else lo + 10
        t = 0.5 * (lo + hi)
        lines = inst.buy + inst.rent_of(full ^ np.arange(full + 1)) * t
        assert inst.buy[s] + inst.rent_of(np.array([full ^ s]))[0] * t == pytest.approx(lines.min())


def test_card_chain():
    chain = sr.opt_chain(CARD)
    assert chain.sets == (0, 2, 3) and chain.breakpoints == pytest.approx((0.0, 6.0, 7.0))


def test_hand_computed_plan_costs():
    plans = np.array([[1, 1], [sr.NEVER, sr.NEVER], [3, 5], [4, 4]])
    T = np.array([1, 2, 3, 4, 6])
    c = sr.plan_costs(CARD, plans, T)
    assert c[0] == pytest.approx([13] * 5)  # buy both on day 1: one batch
    assert c[1] == pytest.approx(2 * T)  # always rent
    # item 1 bought at the start of day 3 (rented days 1-2), item 2 at day 5 (rented days 1-4)
    assert c[2] == pytest.approx([2, 4, 2 + 10 + 3, 2 + 10 + 4, 2 + 10 + 4 + 6])
    assert c[3] == pytest.approx([2, 4, 6, 6 + 13, 6 + 13])  # same day: one batch at f({1,2})


def test_all_plans_count_and_guard():
    assert sr.all_plans(2, 25).shape == (676, 2)
    with pytest.raises(ValueError, match="too many"):
        sr.all_plans(6, 30)


# ---------------------------------------------------------------- the LP and SOAC


@pytest.mark.parametrize("b", [1, 2, 5, 10, 20])
def test_lp_equals_karlin_for_one_item(b):
    inst = sr.CSRInstance(np.ones(1), np.array([0.0, float(b)]))
    strat, c = sr.optimal_lp(inst, 3 * b)
    assert c == pytest.approx(sr.karlin_ratio(b), abs=1e-6)
    assert strat.probs.sum() == pytest.approx(1) and np.all(strat.probs >= 0)


def test_karlin_distribution_is_flat_and_sums_to_one():
    for b in (3, 10, 30):
        p = sr.karlin_probs(b)
        assert p.sum() == pytest.approx(1) and np.all(p > 0)
        inst = sr.CSRInstance(np.ones(1), np.array([0.0, float(b)]))
        curve = sr.Strategy("k", np.arange(1, b + 1)[:, None], p).ratio_curve(inst, np.arange(1, 4 * b))
        assert curve[:b] == pytest.approx(np.full(b, sr.karlin_ratio(b)))
        assert curve.max() == pytest.approx(sr.karlin_ratio(b))
    assert sr.karlin_ratio(10) == pytest.approx(1.5353, abs=1e-4)


def test_card_lp_value_stable_under_doubling_and_matched_by_soac():
    _, c1 = sr.optimal_lp(CARD, 25)
    _, c2 = sr.optimal_lp(CARD, 50)
    strat, cs = sr.soac(CARD, 50)
    assert c1 == pytest.approx(1.5124, abs=1e-4) and abs(c1 - c2) < 1e-3
    assert cs == pytest.approx(c2, abs=1e-6)
    assert strat.worst_ratio(CARD, 200) == pytest.approx(cs, abs=1e-6)
    # SOAC only ever owns a chain set
    chain = set(sr.opt_chain(CARD).sets)
    for d in strat.plans:
        for t in range(1, 60):
            assert sum(1 << i for i in range(2) if d[i] <= t) in chain


@pytest.mark.parametrize("seed", [3, 7])
def test_soac_matches_the_lp_on_three_items(seed):
    inst = concave_instance(seed)
    _, c = sr.optimal_lp(inst, 14)
    _, cs = sr.soac(inst, 14)
    assert cs == pytest.approx(c, abs=1e-3)


def test_every_baseline_is_at_least_the_lp_value():
    _, c = sr.optimal_lp(CARD, 50)
    T = np.arange(1, 200)
    for s in (sr.follow_opt(CARD), sr.bundle_break_even(CARD), sr.per_item_karlin(CARD), sr.bundle_karlin(CARD),
              sr.buy_all_now(CARD)):
        assert s.ratio_curve(CARD, T).max() >= c - 1e-9
    assert sr.buy_all_now(CARD).worst_ratio(CARD, 50) == pytest.approx(13 / 2)
    assert sr.always_rent(CARD).ratio_curve(CARD, np.array([1000]))[0] == pytest.approx(2000 / 13)


def test_bundle_rules_buy_everything_in_one_batch():
    bk = sr.bundle_karlin(CARD)
    assert bk.probs.sum() == pytest.approx(1) and np.all(bk.plans[:, 0] == bk.plans[:, 1])
    assert bk.plans[:, 0].max() == 7  # b = round(13 / 2) = 7 days (6.5 rounds up)
    one = sr.CSRInstance(np.ones(1), np.array([0.0, 10.0]))
    assert sr.bundle_karlin(one).worst_ratio(one, 40) == pytest.approx(sr.karlin_ratio(10))
    # one item: the one-batch equaliser is the full optimum; on the card it is the same (the middle step
    # of the chain is unused there), on an instance whose middle step carries weight it is worse
    assert sr.bundle_lp(one, 30)[1] == pytest.approx(sr.optimal_lp(one, 30)[1], abs=1e-9)
    assert sr.bundle_lp(CARD, 40)[1] == pytest.approx(sr.optimal_lp(CARD, 40)[1], abs=1e-6)
    mid = sr.CSRInstance(np.array([0.55, 1.27]), np.array([0.0, 11.3, 6.39, 17.25]))
    _, c = sr.optimal_lp(mid)
    assert sr.soac(mid)[1] == pytest.approx(c, abs=1e-6) and sr.bundle_lp(mid)[1] > c + 0.2


def test_follow_opt_switches_at_the_breakpoints():
    assert sr.follow_opt(CARD).plans[0].tolist() == [7, 6]
    assert sr.bundle_break_even(CARD).plans[0].tolist() == [7, 7]  # 13 / 2 = 6.5 rounds up


def test_cheap_item_is_bought_at_once():
    inst = sr.CSRInstance(np.ones(1), np.array([0.0, 1.0]))
    strat, c = sr.optimal_lp(inst, 5)
    assert c == pytest.approx(1.0) and strat.plans[np.argmax(strat.probs)][0] == 1


def test_strategy_sampling_is_seeded():
    strat, _ = sr.soac(CARD, 30)
    a = [strat.sample(np.random.default_rng(4)).tolist() for _ in range(3)]
    b = [strat.sample(np.random.default_rng(4)).tolist() for _ in range(3)]
    assert a == b
    g = np.random.default_rng(0)
    draws = np.array([strat.sample(g).tolist() for _ in range(4000)])
    top = strat.plans[np.argmax(strat.probs)]
    freq = np.mean(np.all(draws == top, axis=1))
    assert freq == pytest.approx(strat.probs.max(), abs=0.03)


# ---------------------------------------------------------------- learning-augmented


def test_purohit_reduces_to_karlin_at_full_trust():
    for b in (5, 20):
        assert sr.purohit_probs(b, 2 * b, 1.0) == pytest.approx(sr.karlin_probs(b))
        assert sr.purohit_probs(b, 0, 1.0) == pytest.approx(sr.karlin_probs(b))
    p_hi, p_lo = sr.purohit_probs(20, 30, 0.5), sr.purohit_probs(20, 5, 0.5)
    assert p_hi.size == 10 and p_lo.size == 40
    assert p_hi.sum() == pytest.approx(1) and p_lo.sum() == pytest.approx(1)


def test_purohit_bounds_values():
    c, r = sr.purohit_bounds(20, 0.5)
    assert c == pytest.approx(0.5 / (1 - np.exp(-0.5)))
    assert r == pytest.approx(1.05 / (1 - np.exp(-0.45)))


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("call, name", [
    (lambda: sr.CSRInstance(np.ones(2), np.array([0.0, 1, 1])), "buy"),
    (lambda: sr.CSRInstance(np.array([1.0, -1.0]), np.array([0.0, 1, 1, 2])), "rents"),
    (lambda: sr.CSRInstance(np.array([1.0, np.nan]), np.array([0.0, 1, 1, 2])), "rents"),
    (lambda: sr.CSRInstance(np.ones(2), np.array([1.0, 1, 1, 2])), "buy"),
    (lambda: sr.CSRInstance(np.ones(2), np.array([0.0, 0, 1, 1])), "buy"),
    (lambda: sr.CSRInstance(np.ones(0), np.array([0.0])), "rents"),
    (lambda: sr.CSRInstance.from_dict([1, 1], {(0,): 1, (1,): 2}), "prices"),
    (lambda: sr.CSRInstance.from_dict([1, 1], {(0, 5): 1}), "prices"),
    (lambda: sr.offline_opt(CARD, [0, 1]), "T"),
    (lambda: sr.offline_opt(CARD, [1.5]), "T"),
    (lambda: sr.plan_costs(CARD, np.array([[1, 2, 3]]), [1]), "plans"),
    (lambda: sr.plan_costs(CARD, np.array([[0, 1]]), [1]), "plans"),
    (lambda: sr.optimal_lp(CARD, 0), "horizon"),
    (lambda: sr.soac(CARD, 1.5), "horizon"),
    (lambda: sr.karlin_probs(0), "b"),
    (lambda: sr.purohit_probs(10, 5, 0.0), "trust"),
    (lambda: sr.purohit_probs(10, 5, 1.5), "trust"),
    (lambda: sr.purohit_probs(10, -1, 0.5), "prediction"),
    (lambda: sr.follow_opt(CARD, scale=0), "scale"),
    (lambda: sr.per_item_karlin(CARD, scale=-1), "scale"),
    (lambda: sr.bundle_karlin(CARD, scale=0), "scale"),
    (lambda: sr.bundle_lp(CARD, 0), "horizon"),
    (lambda: sr.Strategy("x", np.ones((2, 2), dtype=int), np.array([0.7, 0.7])), "probs"),
    (lambda: sr.is_submodular(np.array([0.0, 1, 2])), "buy"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_plan_costs_match_a_day_by_day_simulation():
    inst = concave_instance(2)
    rng = np.random.default_rng(0)
    plans = rng.integers(1, 8, size=(30, 3))
    plans[rng.random(plans.shape) < 0.2] = sr.NEVER
    T = np.arange(1, 10)
    fast = sr.plan_costs(inst, plans, T)
    for p, d in enumerate(plans):
        for k, t in enumerate(T):
            cost, owned = 0.0, set()
            for day in range(1, t + 1):
                batch = [i for i in range(3) if d[i] == day]
                if batch:
                    cost += inst.buy[sum(1 << i for i in batch)]
                    owned |= set(batch)
                cost += sum(inst.rents[i] for i in range(3) if i not in owned)
            assert fast[p, k] == pytest.approx(cost)


def test_playing_day_by_day_matches_the_expected_cost():
    strat, _ = sr.soac(CARD, 30)
    g = np.random.default_rng(1)
    for season in (3, 7, 20):
        costs = [sr.play(CARD, strat, season, g) for _ in range(3000)]
        assert np.mean(costs) == pytest.approx(strat.expected_cost(CARD, [season])[0], rel=0.03)
    with pytest.raises(ValueError, match="season"):
        sr.play(CARD, strat, 0)
