"""Chapter 35: InfiFPO's fused reference, its losses and the population toy."""
import numpy as np
import pytest
import torch
from scipy.special import log_softmax, softmax

from optbook.core import check_derivatives
from optbook.llm import infifpo as I
from optbook.llm import infifpo_chapter as ch


def _pairs(seed=0, n_src=3, n=20):
    rng = np.random.default_rng(seed)
    return (rng.normal(-2, 1, (n_src, n)), rng.normal(-2, 1, (n_src, n)), rng.normal(-2, 1, n), rng.normal(-2, 1, n))


def test_one_source_equal_to_pivot_is_dpo():
    _, _, rw, rl = _pairs()
    fw, fl, gamma = I.fused_reference(rw[None], rl[None], rw, rl, fusion="mean", clip=True)
    pw, pl = torch.randn(20, dtype=torch.float64), torch.randn(20, dtype=torch.float64)
    infi = I.preference_loss(pw, pl, fw, fl, 2.5)
    dpo = I.preference_loss(pw, pl, rw, rl, 2.5)
    assert np.allclose(gamma, 1.0)
    assert infi.item() == pytest.approx(dpo.item(), abs=1e-14)
    # and by hand: -log sigma(beta h)
    h = (pw - torch.as_tensor(rw)) - (pl - torch.as_tensor(rl))
    assert dpo.item() == pytest.approx(torch.nn.functional.softplus(-2.5 * h).mean().item(), rel=1e-12)


def test_gradient_vanishes_as_beta_goes_to_zero():
    sw, sl, rw, rl = _pairs()
    fw, fl, _ = I.fused_reference(sw, sl, rw, rl)
    norms = []
    for beta in (1.0, 1e-2, 1e-4):
        pw = torch.zeros(20, dtype=torch.float64, requires_grad=True)
        I.preference_loss(pw, torch.zeros(20, dtype=torch.float64), fw, fl, beta).backward()
        norms.append(pw.grad.norm().item())
    assert norms[2] < norms[1] < norms[0] and norms[2] < 1e-4


def test_sources_get_no_gradient():
    sw, sl, rw, rl = _pairs()
    ref = torch.tensor(sw[0], requires_grad=True)
    pw = torch.zeros(20, dtype=torch.float64, requires_grad=True)
    I.preference_loss(pw, torch.zeros(20, dtype=torch.float64), ref, torch.as_tensor(sl[0]), 1.0).backward()
    assert ref.grad is None and pw.grad is not None


def test_clip_never_lowers_the_pivot_margin_and_offset_caps():
    sw, sl, rw, rl = _pairs(1)
    cw, cl = I.clip_sources(sw, sl, rw, rl)
    assert np.all(cw - cl >= rw - rl - 1e-12)
    for fusion in I.FUSIONS:
        fw, fl, _ = I.fused_reference(sw, sl, rw, rl, fusion=fusion, clip=True)
        assert np.all(fw - fl >= rw - rl - 1e-12)
    # without Clip a harmful source can flip the margin
    fw, fl, _ = I.fused_reference(sw, sl, rw, rl, fusion="mean", clip=False)
    assert np.any(fw - fl < rw - rl)
    cw, cl = I.clip_sources(sw + 20, sl - 20, rw, rl, offset=5.0)
    assert np.allclose(cw - rw, 5.0) and np.allclose(rl - cl, 5.0)


def test_max_margin_is_one_hot_on_the_argmax():
    sw, sl, rw, rl = _pairs(2)
    g = I.max_margin_weights(sw, sl)
    assert set(np.unique(g)) == {0.0, 1.0} and np.all(g.sum(0) == 1)
    assert np.array_equal(g.argmax(0), (sw - sl).argmax(0))
    d = I.max_margin_weights(sw, sl, rw, rl, rule="deviation")
    assert np.array_equal(d.argmax(0), np.abs(sw - sl - (rw - rl)).argmax(0))
    fw, fl, _ = I.fused_reference(sw, sl, rw, rl, fusion="max_margin", clip=False)
    assert np.allclose(fw - fl, (sw - sl).max(0))


def test_length_normalisation_uses_each_models_token_count():
    # the same text: 10 tokens for one tokeniser, 20 for a finer one with the same total log-prob
    assert np.allclose(I.length_normalised([-20.0, -20.0], [10, 20]), [-2.0, -1.0])
    with pytest.raises(ValueError, match="n_tokens"):
        I.length_normalised([-1.0], [0])


def test_geometric_mean_identity():
    rng = np.random.default_rng(3)
    lm = log_softmax(rng.normal(size=(3, 6)), axis=1)
    gamma = np.array([0.2, 0.5, 0.3])
    lbar, log_z = I.geometric_mean(lm, gamma)
    pi = softmax(rng.normal(size=6))

    def kl(p, logq):
        return float((p * (np.log(p) - logq)).sum())

    lhs = sum(g * kl(pi, m) for g, m in zip(gamma, lm))
    assert lhs == pytest.approx(kl(pi, lbar) - log_z, abs=1e-12)
    assert np.exp(lbar).sum() == pytest.approx(1.0) and log_z <= 0  # Hoelder: Z <= 1
    # no underflow for very peaked models
    _, lz = I.geometric_mean(lm * 1e3, gamma)
    assert np.isfinite(lz)


def test_population_gradient_matches_finite_differences():
    rng = np.random.default_rng(4)
    r = rng.normal(size=(2, 4))
    m = rng.normal(size=(2, 4, 4))
    m = m - m.transpose(0, 2, 1)
    lab = I.pair_labels(r)
    z = rng.normal(size=(2, 4))
    chk = check_derivatives(lambda x: I.population_loss(x.reshape(2, 4), m, lab, 0.7)[0],
                            lambda x: I.population_loss(x.reshape(2, 4), m, lab, 0.7)[1].ravel(), z.ravel())
    assert chk.grad_error < 1e-6


def test_population_fit_reaches_tilted_optimum():
    inst = ch.population_instance(0)
    for beta in (0.5, 2.0):
        pi = I.fit_population(ch._margins(inst["pivot"]), inst["labels"], beta)
        tv = 0.5 * np.abs(pi - I.tilted_optimum(inst["pivot"], inst["r"], beta)).sum(1).max()
        assert tv < 1e-4


def test_tilted_optimum_maximises_regularised_reward():
    rng = np.random.default_rng(5)
    lref, r = log_softmax(rng.normal(size=5)), rng.normal(size=5)
    pi = I.tilted_optimum(lref, r, 0.5)

    def obj(p):
        return p @ r - 0.5 * (p * (np.log(p) - lref)).sum()

    for _ in range(20):
        q = softmax(np.log(pi) + 0.1 * rng.normal(size=5))
        assert obj(q) <= obj(pi) + 1e-12


def test_population_story():
    e = ch.seed_rewards(0)
    m = {k: e[k].mean() for k in ch.POP_METHODS}
    dpo, mean3, clean, infi = (m[k] for k in (ch.POP_METHODS[0], ch.POP_METHODS[1], ch.POP_METHODS[2], ch.POP_METHODS[4]))
    assert mean3 < clean            # the harmful source hurts mean fusion
    assert infi > dpo and infi > mean3
    # without a harmful source, S3 = noise: mean fusion loses less
    assert ch.seed_rewards(0, harm=0.0)[ch.POP_METHODS[1]].mean() > mean3


def test_preference_loss_and_ipo():
    pw, pl = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.0])
    z = torch.zeros(2)
    ipo = I.preference_loss(pw, pl, z, z, 0.5, kind="ipo", reduction="none")
    assert torch.allclose(ipo, torch.tensor([0.0, 1.0]))   # target margin 1/(2*0.5) = 1


def test_corpus_pairs_shapes_and_determinism():
    a, b = ch.corpus_pairs(1, 3, 7), ch.corpus_pairs(1, 3, 7)
    assert a["w"].shape == (12, ch.PROMPT + ch.CONT) and torch.equal(a["w"], b["w"])
    assert torch.equal(a["w"][:, :ch.PROMPT], a["l"][:, :ch.PROMPT])


@pytest.mark.parametrize("call, match", [
    (lambda: I.preference_loss(torch.zeros(2), torch.zeros(2), np.zeros(2), np.zeros(2), 0.0), "beta"),
    (lambda: I.preference_loss(torch.zeros(2), torch.zeros(3), np.zeros(2), np.zeros(2), 1.0), "pol_w"),
    (lambda: I.preference_loss(torch.zeros(2), torch.zeros(2), np.zeros(2), np.zeros(2), 1.0, kind="kto"), "kind"),
    (lambda: I.fused_reference(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(3), np.zeros(3), fusion="sum"), "fusion"),
    (lambda: I.clip_sources(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(4), np.zeros(4)), "shapes"),
    (lambda: I.clip_sources(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(3), np.zeros(3), offset=-1.0), "offset"),
    (lambda: I.max_margin_weights(np.zeros((2, 3)), np.full((2, 3), np.nan)), "src_l"),
    (lambda: I.max_margin_weights(np.zeros((2, 3)), np.zeros((2, 3)), rule="deviation"), "ref_w"),
    (lambda: I.max_margin_weights(np.zeros(3), np.zeros(3)), "src_w"),
    (lambda: I.geometric_mean(np.zeros((2, 3)), [0.5, 0.6]), "gamma"),
    (lambda: I.tilted_optimum(np.zeros(3), np.zeros(4), 1.0), "log_ref"),
    (lambda: I.tilted_optimum(np.zeros(3), np.zeros(3), -1.0), "beta"),
    (lambda: I.fit_population(np.zeros((1, 3, 3)), np.zeros((1, 2, 2)), 1.0), "ref_margin"),
    (lambda: I.length_normalised([], []), "sum_logp"),
    (lambda: ch.train_lm("SFT", 1e-3, 0), "method"),
    (lambda: ch.train_lm("DPO", 0.0, 0), "lr"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_toy_margin_follows_the_label_and_kl_budget():
    inst = ch.population_instance(1)
    m, sel = ch.pairwise_fused_margin(inst)
    pm = ch._margins(inst["pivot"])
    off = ~np.eye(ch.K, dtype=bool)[None].repeat(len(m), 0)
    assert np.all(m[off] >= pm[off] - 1e-12)                  # Clip: never below the pivot's margin
    assert np.all((m + m.transpose(0, 2, 1))[off] >= -1e-12)  # leans towards whichever side is labelled chosen
    # max-margin: the chosen source's clipped margin is the largest one
    cand = np.maximum(ch._margins(inst["sources"]), pm[None])
    assert np.allclose(m[off], cand.max(0)[off])
    # no orientation by the true reward: the margin does not depend on r given the models
    flipped = dict(inst, r=-inst["r"])
    assert np.array_equal(ch.pairwise_fused_margin(flipped)[0], m)
    e = ch.seed_rewards(1)
    assert e["kl"][ch.POP_METHODS[4]] > e["kl"][ch.POP_METHODS[0]]
    # the pivot's tilt is the best E[r] at its KL: DPO at InfiFPO's budget is at least as good
    assert e["dpo_matched_kl"].mean() >= e[ch.POP_METHODS[4]].mean() - 1e-9
