"""Part VII's tiny language model: alphabet, causality, log-probabilities, training, the cache."""
from __future__ import annotations

import math

import pytest
import torch

from optbook.core.cache import cache_key, cached_torch
from optbook.llm import tinylm as T


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTBOOK_CACHE", str(tmp_path))
    return tmp_path


def small_model(seed=0, **cfg):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return T.TinyLM(T.TinyLMConfig(**{"context": 16, "width": 16, "heads": 2, **cfg})).eval()


def test_encode_decode_round_trip_and_alphabet():
    text = "def f(x):\n    return x ** 2  # ~{}|"
    assert T.decode(T.encode(text)) == text
    assert len(T.ALPHABET) == 96 and len(set(T.ALPHABET)) == 96
    with pytest.raises(ValueError, match="alphabet"):
        T.encode("café")
    with pytest.raises(ValueError, match="ids"):
        T.decode([0, 96])


@pytest.mark.parametrize("domain", T.DOMAINS)
def test_corpus_is_plain_ascii_in_the_alphabet_and_split_holds_out_every_tenth_paragraph(domain):
    text = T.corpus(domain)
    assert len(text) > 40_000 and set(text) <= set(T.ALPHABET)
    train, held = T.split(domain)
    paragraphs = text.split("\n\n")
    assert T.decode(held).split("\n\n") == paragraphs[9::10]
    assert len(train) + len(held) + 2 == len(text)  # one separator fewer in each part
    assert 0.05 < len(held) / len(text) < 0.15


def test_attention_is_causal():
    model = small_model()
    ids = torch.randint(0, 96, (3, 16), generator=torch.Generator().manual_seed(1))
    changed = ids.clone()
    changed[:, 10:] = (changed[:, 10:] + 7) % 96
    with torch.no_grad():
        a, b = model(ids), model(changed)
    assert torch.equal(a[:, :10], b[:, :10])
    assert not torch.allclose(a[:, 10:], b[:, 10:])


def test_sequence_logprob_sums_the_scored_next_character_log_probabilities():
    model = small_model()
    ids = torch.randint(0, 96, (4, 12), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        logp = torch.log_softmax(model(ids[:, :-1]), -1)
    by_hand = sum(logp[:, t - 1].gather(-1, ids[:, t:t + 1])[:, 0] for t in range(5, 12))
    got = T.sequence_logprob(model, ids, prompt_length=5)
    assert torch.allclose(got, by_hand, atol=1e-5)
    assert torch.allclose(T.sequence_logprob(model, ids, prompt_length=5, mean=True), by_hand / 7, atol=1e-6)
    # prompt_length 0 and 1 both score characters 2..T (the first character is always given)
    assert torch.equal(T.sequence_logprob(model, ids, 0), T.sequence_logprob(model, ids, 1))
    got.sum().backward()
    assert model.embed.weight.grad is not None and model.embed.weight.grad.abs().sum() > 0


def test_nll_of_a_zero_output_layer_is_log_of_the_alphabet():
    model = small_model()
    with torch.no_grad():
        model.head.weight.zero_()
    assert T.nll(model, T.split("text")[1]) == pytest.approx(math.log(96), rel=1e-6)
    assert T.perplexity(model, T.split("text")[1]) == pytest.approx(96, rel=1e-5)


def test_training_learns_a_pattern_and_is_deterministic():
    ids = T.encode("abcabd" * 200)
    runs = []
    for _ in range(2):
        model = small_model()
        losses = T.train(model, ids, steps=60, lr=2e-2, batch=8, seed=3)
        runs.append((model.state_dict(), losses))
    assert runs[0][1] == runs[1][1]
    assert all(torch.equal(runs[0][0][k], runs[1][0][k]) for k in runs[0][0])
    # A bigram model cannot tell whether c or d follows "ab" (2 characters in 6 carry log 2:
    # 0.23 nats per character); below that, the model reads its context (the pattern has period 6).
    assert losses[0] > 3.0 and T.nll(model, ids[:400]) < 0.15


def test_linear_layers_are_the_six_maps_of_each_block():
    names = sorted(small_model(layers=3).linear_layers())
    assert len(names) == 18 and "head" not in names
    assert "blocks.2.attn.q" in names and "blocks.0.fc2" in names


def test_cached_torch_builds_once_and_keys_on_every_part(tmp_cache):
    calls = []

    def build():
        calls.append(1)
        return {"w": torch.arange(3.0)}

    key = cache_key(a=1, b="x")
    first = cached_torch("thing", key, build)
    again = cached_torch("thing", key, build)
    assert len(calls) == 1 and torch.equal(first["w"], again["w"])
    assert cache_key(a=1, b="y") != key and cache_key(b="x", a=1) == key
    assert [p.name for p in tmp_cache.iterdir()] == [f"thing-{key}.pt"]


def test_pretrained_loads_what_it_trained(tmp_cache):
    cfg = T.TinyLMConfig(context=16, width=16, heads=2, layers=1)
    built = T.pretrained(("numeric",), steps=5, cfg=cfg)
    loaded = T.pretrained(("numeric",), steps=5, cfg=cfg)
    assert len(built.train_losses) == 5
    assert all(torch.equal(v, loaded.state_dict()[k]) for k, v in built.state_dict().items())
    other = T.pretrained(("numeric",), steps=5, cfg=cfg, seed=1)
    assert not torch.equal(other.head.weight, built.head.weight)


def test_default_models_learned_their_domains():
    """The shipped models (trained once, cached): the base model beats the corpus's character
    frequencies on every held-out domain, and each specialist beats the base model on its own
    domain and every other specialist there. Part VII's chapters rely on both."""
    base = T.pretrained()
    for domain in T.DOMAINS:
        train, held = T.split(domain)
        freq = torch.bincount(train, minlength=96).double() + 1
        unigram = -(freq[held] / freq.sum()).log().mean().item()
        base_nll = T.nll(base, held)
        assert base_nll < unigram - 0.5, (domain, base_nll, unigram)
        own = T.nll(T.specialist(domain), held)
        others = [T.nll(T.specialist(d), held) for d in T.DOMAINS if d != domain]
        assert own < base_nll and own < min(others), (domain, own, base_nll, others)


@pytest.mark.parametrize("call, name", [
    (lambda: T.TinyLMConfig(width=10, heads=4), "width"),
    (lambda: T.TinyLMConfig(context=0), "context"),
    (lambda: small_model()(torch.zeros(1, 17, dtype=torch.long)), "ids"),
    (lambda: T.sequence_logprob(small_model(), torch.zeros(2, 5, dtype=torch.long), 5), "prompt_length"),
    (lambda: T.sequence_logprob(small_model(), torch.zeros(5, dtype=torch.long)), "ids"),
    (lambda: T.sample(small_model(), "", 3), "prompt"),
    (lambda: T.sample(small_model(), "a", 3, temperature=0.0), "temperature"),
    (lambda: T.train(small_model(), T.encode("short"), steps=3), "ids"),
    (lambda: T.train(small_model(), T.encode("abc" * 20), steps=0), "steps"),
    (lambda: T.corpus("poetry"), "domain"),
    (lambda: T.split("text", every=1), "every"),
    (lambda: T.pretrained(("text", "poetry")), "domains"),
    (lambda: T.pretrained(()), "domains"),
    (lambda: T.specialist("text", seed=1.5), "seed"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
