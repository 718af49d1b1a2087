"""Part VII's shared substrate: a tiny character-level transformer language model.

The papers of Part VII compress, align and fuse language models with billions of weights. Their
CPU-scale proxy here is a GPT-style model of about 0.1 M weights that reads characters. It is
trained on text that ships with the book (``optbook/llm/corpus``: the papers' abstracts and
Python standard-library docstrings in three groups), so the same bytes train the same model on
every machine. Training is deterministic given the seed; the trained weights are cached on disk
(``optbook.core.cache``), so only the first chapter that asks for a model pays for it.

Every linear map of the network is an ``nn.Linear`` without bias (queries, keys, values, the
attention output and the two MLP layers of each block), so compression chapters can read and
replace weight matrices and record their inputs with forward hooks.

    model = pretrained()                      # all four domains
    ppl = perplexity(model, split("numeric")[1])
    src = specialist("system")                # the base model fine-tuned on one domain
"""
from __future__ import annotations

import math
import pathlib
from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

from ..core.cache import cache_key, cached_torch
from ..core.threads import one_torch_thread
from ..core.validate import check_choice, check_int, check_positive

ALPHABET = "\n" + "".join(chr(i) for i in range(32, 127))
DOMAINS = ("abstracts", "text", "numeric", "system")
_INDEX = {c: i for i, c in enumerate(ALPHABET)}
_CORPUS = pathlib.Path(__file__).with_name("corpus")


def encode(text: str) -> torch.Tensor:
    """Character ids (int64) of ``text``; characters outside the alphabet raise ``ValueError``."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    bad = sorted(set(text) - _INDEX.keys())
    if bad:
        raise ValueError(f"text has characters outside the alphabet (printable ASCII, newline): {bad[:5]}")
    return torch.tensor([_INDEX[c] for c in text], dtype=torch.long)


def decode(ids) -> str:
    """The text of a sequence of character ids."""
    ids = torch.as_tensor(ids)
    if ids.ndim != 1 or ids.numel() and (ids.min() < 0 or ids.max() >= len(ALPHABET)):
        raise ValueError(f"ids must be a 1-D sequence of ids in [0, {len(ALPHABET)})")
    return "".join(ALPHABET[i] for i in ids.tolist())


def corpus(domain: str) -> str:
    """The text of one domain: 'abstracts', 'text', 'numeric' or 'system'."""
    check_choice(domain, "domain", DOMAINS)
    return (_CORPUS / f"{domain}.txt").read_text(encoding="ascii")


def split(domain: str, every: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, held-out) ids of a domain. Every ``every``-th paragraph (blank-line separated) is
    held out, so the held-out text comes from the same modules and papers as the training text
    (holding out the file's tail would test a shift to other modules instead)."""
    check_int(every, "every", minimum=2)
    paragraphs = corpus(domain).split("\n\n")
    held = [p for i, p in enumerate(paragraphs) if i % every == every - 1]
    kept = [p for i, p in enumerate(paragraphs) if i % every != every - 1]
    return encode("\n\n".join(kept)), encode("\n\n".join(held))


@dataclass(frozen=True)
class TinyLMConfig:
    """Sizes of the network: ``context`` characters, ``width``-dim residual stream,
    ``layers`` blocks of ``heads``-head causal attention and a ``mlp_ratio * width`` MLP."""

    context: int = 64
    width: int = 64
    layers: int = 2
    heads: int = 4
    mlp_ratio: int = 4

    def __post_init__(self):
        for name in ("context", "width", "layers", "heads", "mlp_ratio"):
            check_int(getattr(self, name), name, minimum=1)
        if self.width % self.heads:
            raise ValueError(f"width ({self.width}) must be a multiple of heads ({self.heads})")


class Attention(nn.Module):
    """Causal multi-head self-attention with separate query, key, value and output maps."""

    def __init__(self, cfg: TinyLMConfig):
        super().__init__()
        self.heads = cfg.heads
        self.q, self.k, self.v, self.o = (nn.Linear(cfg.width, cfg.width, bias=False) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, w = x.shape
        def heads(z):
            return z.view(b, t, self.heads, w // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)), heads(self.v(x)),
                                           is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, t, w))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(ln(x)), then x + fc2(gelu(fc1(ln(x))))."""

    def __init__(self, cfg: TinyLMConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.width), nn.LayerNorm(cfg.width)
        self.attn = Attention(cfg)
        self.fc1 = nn.Linear(cfg.width, cfg.mlp_ratio * cfg.width, bias=False)
        self.fc2 = nn.Linear(cfg.mlp_ratio * cfg.width, cfg.width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyLM(nn.Module):
    """Character-level GPT: token and position embeddings, ``cfg.layers`` blocks, a final norm and
    an untied output layer. ``forward(ids)`` maps (batch, time) ids to (batch, time, vocab) logits."""

    def __init__(self, cfg: TinyLMConfig = TinyLMConfig()):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(len(ALPHABET), cfg.width)
        self.position = nn.Embedding(cfg.context, cfg.width)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.ln = nn.LayerNorm(cfg.width)
        self.head = nn.Linear(cfg.width, len(ALPHABET), bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.ndim != 2 or ids.shape[1] > self.cfg.context:
            raise ValueError(f"ids must be (batch, time <= {self.cfg.context}), got {tuple(ids.shape)}")
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))

    def linear_layers(self) -> dict[str, nn.Linear]:
        """The weight matrices a compression method may replace, by name ('blocks.0.fc1', ...)."""
        return {name: m for name, m in self.named_modules() if isinstance(m, nn.Linear) and name != "head"}


def _windows(ids: torch.Tensor, length: int, count: int, generator: torch.Generator) -> torch.Tensor:
    starts = torch.randint(0, len(ids) - length, (count,), generator=generator)
    return torch.stack([ids[s:s + length] for s in starts.tolist()])


def train(model: TinyLM, ids: torch.Tensor, *, steps: int, lr: float = 1e-2, batch: int = 32,
          seed: int = 0) -> list[float]:
    """Next-character training with AdamW (cosine decay after a 5% warm-up, gradients clipped at
    norm 1) on random windows of ``ids``; returns the training loss (nats per character) per step."""
    check_int(steps, "steps", minimum=1)
    check_positive(lr, "lr")
    check_int(batch, "batch", minimum=1)
    check_int(seed, "seed")
    ids = torch.as_tensor(ids)
    if ids.ndim != 1 or len(ids) <= model.cfg.context + 1:
        raise ValueError(f"ids must be 1-D and longer than the context ({model.cfg.context} + 1)")
    generator = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.99))
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))
    losses = []
    model.train()
    with one_torch_thread():
        for _ in range(steps):
            xy = _windows(ids, model.cfg.context + 1, batch, generator)
            loss = F.cross_entropy(model(xy[:, :-1]).flatten(0, 1), xy[:, 1:].flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
    model.eval()
    return losses


@torch.no_grad()
def nll(model: TinyLM, ids: torch.Tensor) -> float:
    """Mean negative log-likelihood (nats per character) of ``ids`` read in consecutive
    non-overlapping windows of the model's context (the first character of each is not scored)."""
    ids = torch.as_tensor(ids)
    c = model.cfg.context + 1
    if ids.ndim != 1 or len(ids) < c:
        raise ValueError(f"ids must be 1-D with at least {c} characters")
    xy = ids[: len(ids) // c * c].view(-1, c)
    with one_torch_thread():
        return F.cross_entropy(model(xy[:, :-1]).flatten(0, 1), xy[:, 1:].flatten()).item()


def perplexity(model: TinyLM, ids: torch.Tensor) -> float:
    """exp(mean negative log-likelihood per character): the per-character perplexity."""
    return math.exp(nll(model, ids))


def sequence_logprob(model: TinyLM, ids: torch.Tensor, prompt_length: int = 0,
                     mean: bool = False) -> torch.Tensor:
    """log p(x_{k+1..T} | x_{1..k}) of each row of ``ids`` (batch, T) with k = ``prompt_length``
    (at least 1: the first character is always given); with ``mean`` divided by the number of
    scored characters (length normalisation). Differentiable: preference losses train through it."""
    if ids.ndim != 2:
        raise ValueError(f"ids must be (batch, time), got shape {tuple(ids.shape)}")
    k = max(1, check_int(prompt_length, "prompt_length"))
    if k >= ids.shape[1]:
        raise ValueError(f"prompt_length ({prompt_length}) must be shorter than the sequences ({ids.shape[1]})")
    logp = torch.log_softmax(model(ids[:, :-1]), dim=-1)
    scored = logp.gather(-1, ids[:, 1:, None])[:, k - 1:, 0]
    return scored.mean(1) if mean else scored.sum(1)


@torch.no_grad()
def sample(model: TinyLM, prompt: str, length: int, *, temperature: float = 1.0, seed: int = 0) -> str:
    """``prompt`` continued by ``length`` characters sampled at ``temperature``."""
    check_int(length, "length")
    check_positive(temperature, "temperature")
    check_int(seed, "seed")
    ids = encode(prompt)
    if len(ids) == 0:
        raise ValueError("prompt must not be empty")
    generator = torch.Generator().manual_seed(seed)
    for _ in range(length):
        logits = model(ids[-model.cfg.context:][None])[0, -1] / temperature
        nxt = torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)
        ids = torch.cat([ids, nxt])
    return decode(ids)


def _build(cfg: TinyLMConfig, domains: tuple[str, ...], steps: int, seed: int, lr: float,
           init: dict | None = None) -> dict:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TinyLM(cfg)
    if init is not None:
        model.load_state_dict(init)
    ids = torch.cat([split(d)[0] for d in domains])
    losses = train(model, ids, steps=steps, lr=lr, seed=seed)
    return {"state": model.state_dict(), "losses": torch.tensor(losses)}


def _load(entry: dict, cfg: TinyLMConfig) -> TinyLM:
    model = TinyLM(cfg)
    model.load_state_dict(entry["state"])
    model.train_losses = entry["losses"]
    return model.eval()


# Budget: about 45 s of one core for the base model, 15 s per specialist. At 400 steps lr 1e-2
# reached a held-out perplexity of about 10 against 13 for lr 3e-3; 1000 steps reach 5.0-6.4 per
# domain, and each specialist lowers its own domain's by 0.5-1.1 (tests/llm/test_tinylm.py checks the order).
BASE_STEPS, BASE_LR = 1000, 1e-2
SPECIALIST_STEPS, SPECIALIST_LR = 300, 1e-3


def pretrained(domains: tuple[str, ...] = DOMAINS, *, steps: int = BASE_STEPS, seed: int = 0,
               cfg: TinyLMConfig = TinyLMConfig()) -> TinyLM:
    """A model trained from scratch on the training part of ``domains`` (cached on disk). The
    per-step training losses are kept as ``model.train_losses``."""
    domains = tuple(check_choice(d, "domains", DOMAINS) for d in domains)
    if not domains:
        raise ValueError("domains must name at least one domain")
    check_int(steps, "steps", minimum=1)
    check_int(seed, "seed")
    key = cache_key(cfg=asdict(cfg), domains=domains, steps=steps, seed=seed, lr=BASE_LR,
                    corpus=_corpus_hash(), torch=torch.__version__, kind="pretrained", split="paragraphs/10")
    return _load(cached_torch("tinylm", key, lambda: _build(cfg, domains, steps, seed, BASE_LR)), cfg)


def specialist(domain: str, *, steps: int = SPECIALIST_STEPS, seed: int = 0) -> TinyLM:
    """The default pretrained model fine-tuned on one domain (cached on disk): a "source" model
    that knows every domain but is best on its own."""
    check_choice(domain, "domain", DOMAINS)
    check_int(steps, "steps", minimum=1)
    check_int(seed, "seed")
    base = pretrained()
    key = cache_key(domain=domain, steps=steps, seed=seed, corpus=_corpus_hash(), torch=torch.__version__,
                    base=(BASE_STEPS, BASE_LR), lr=SPECIALIST_LR, kind="specialist", split="paragraphs/10")
    entry = cached_torch("tinylm", key, lambda: _build(base.cfg, (domain,), steps, seed, SPECIALIST_LR,
                                                       init=base.state_dict()))
    return _load(entry, base.cfg)


def warm() -> None:
    """Train and cache the default models (the base and one specialist per domain), so that the
    chapters and tests that use them find them instead of each paying for the training."""
    pretrained()
    for domain in DOMAINS:
        specialist(domain)


def _corpus_hash() -> str:
    return cache_key(**{d: corpus(d) for d in DOMAINS})
