"""Every torch optimizer in the package behaves like one from ``torch.optim`` (DESIGN.md, section 2).

One table, one parametrised test per behaviour, as pytorch-optimizer does: the loss falls on a
small model; a parameter whose ``.grad`` is None is skipped; ``zero_grad`` works; several param
groups with their own hyperparameters work, and a bad value inside a group is refused;
``step(closure)`` returns the loss; ``state_dict()`` resumes bit-identically; torch's global
random generator is never touched; and with its extra ingredient switched off the method equals
its torch baseline.

A new optimizer gets a row in ``SPECS``, and every check holds for every row.
"""
from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import torch

from optbook.distributed.fedada2 import SM3
from optbook.training.lowrank_sampling import LowRankAdam
from optbook.training.momentum_sam import MSAM, SAM, AdamWMSAM
from optbook.training.pazo_methods import HiZOO, MeZO, PaZO, ZOAdam
from optbook.training.valley_explorer import ALTO, EAdam, ESGD, Lamb


@dataclass
class Spec:
    """How to build and drive one optimizer.

    ``closure``: "backward" (the closure zeroes grads, computes the loss, calls backward, returns
    the loss; the optimizer may call it more than once), "forward" (zeroth-order: the closure
    returns the loss and never calls backward). ``good``/``bad`` are hyperparameters for a second
    param group (accepted / refused). ``baseline``: (kwargs switching the ingredient off, the
    torch optimizer it must then equal), or None where torch has no equivalent.
    """

    name: str
    make: Callable[..., torch.optim.Optimizer]
    closure: str = "backward"
    good: dict = field(default_factory=dict)
    bad: dict = field(default_factory=dict)
    baseline: tuple[dict, Callable[..., torch.optim.Optimizer]] | None = None
    steps: int = 30


SPECS = [
    Spec("MSAM", lambda p, **k: MSAM(p, **{"lr": 0.05, "rho": 0.05, **k}), good={"lr": 0.01}, bad={"rho": -1.0},
         baseline=({"rho": 0.0}, lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))),
    Spec("SAM", lambda p, **k: SAM(p, **{"lr": 0.05, **k}), good={"lr": 0.01}, bad={"rho": -1.0},
         baseline=({"rho": 0.0}, lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))),
    Spec("AdamWMSAM", lambda p, **k: AdamWMSAM(p, **{"lr": 0.01, "rho": 0.05, **k}), good={"lr": 0.001},
         bad={"lr": -1.0},
         baseline=({"rho": 0.0}, lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=1e-2))),
    Spec("MeZO", lambda p, **k: MeZO(p, **{"lr": 0.02, "eps": 1e-3, "seed": 0, **k}), closure="forward",
         good={"lr": 0.01}, bad={"eps": 0.0}, steps=200),
    Spec("PaZO", lambda p, **k: PaZO(p, **{"lr": 0.005, "eps": 1e-3, "momentum": 0.8, "seed": 0, **k}),
         closure="forward", good={"momentum": 0.5}, bad={"beta": 2.0}, steps=200),
    Spec("HiZOO", lambda p, **k: HiZOO(p, **{"lr": 0.02, "eps": 1e-3, "seed": 0, **k}), closure="forward",
         good={"lr": 0.01}, bad={"momentum": 0.9}, steps=200),
    Spec("ZOAdam", lambda p, **k: ZOAdam(p, **{"lr": 0.01, "eps": 1e-3, "seed": 0, **k}), closure="forward",
         good={"lr": 0.005}, bad={"betas": (1.5, 0.999)}, steps=200),
    Spec("LowRankAdam", lambda p, **k: LowRankAdam(p, **{"lr": 0.01, "rank": 2, "update_gap": 5, "seed": 0, **k}),
         good={"lr": 0.001}, bad={"lr": -1.0},
         baseline=({"rank": 6}, lambda p: torch.optim.Adam(p, lr=0.01))),  # no weight above rank 6: plain Adam
    Spec("Lamb", lambda p, **k: Lamb(p, **{"lr": 0.01, **k}), good={"lr": 0.001}, bad={"lr": -1.0}),
    Spec("ESGD", lambda p, **k: ESGD(p, **{"lr": 0.05, **k}), good={"lr": 0.01}, bad={"alpha": 1e6},
         baseline=({"alpha": 0.0}, lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))),
    Spec("EAdam", lambda p, **k: EAdam(p, **{"lr": 0.01, **k}), good={"lr": 0.001}, bad={"alpha": 1e6},
         baseline=({"alpha": 0.0}, lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.9, 0.99), eps=1e-6))),
    Spec("ALTO", lambda p, **k: ALTO(p, **{"lr": 0.01, **k}), good={"lr": 0.001}, bad={"alpha": 1e6},
         baseline=({"alpha": 0.0}, lambda p: Lamb(p, lr=0.01))),
    Spec("SM3", lambda p, **k: SM3(p, **{"lr": 0.05, **k}), good={"lr": 0.01}, bad={"eps": -1.0},
         baseline=({"cover": "full"}, lambda p: torch.optim.Adagrad(p, lr=0.05, eps=1e-6))),
]

def _case(check: str):
    return [pytest.param(s, id=s.name) for s in SPECS]


def _model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)  # the test's own model init; the optimizers must not rely on it
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()


def _data(seed: int = 1):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(64, 6, generator=gen, dtype=torch.float64)
    return X, torch.sin(X[:, :1]) + 0.1 * X[:, 1:2]


def _closure(spec: Spec, model, opt, X, y):
    def loss_fn():
        return torch.nn.functional.mse_loss(model(X), y)

    if spec.closure == "forward":
        return loss_fn

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss
    return closure


@torch.no_grad()
def _loss(model, X, y) -> float:
    return float(torch.nn.functional.mse_loss(model(X), y))


def _value(loss) -> float:
    return float(loss.detach()) if isinstance(loss, torch.Tensor) else float(loss)


def _run(spec: Spec, model, opt, steps: int, X, y) -> list[float]:
    closure = _closure(spec, model, opt, X, y)
    return [_value(opt.step(closure)) for _ in range(steps)]


def _flat(model) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


@pytest.mark.parametrize("spec", _case("loss"))
def test_loss_falls_and_step_returns_it(spec):
    model, (X, y) = _model(), _data()
    opt = spec.make(model.parameters())
    start = _loss(model, X, y)
    losses = _run(spec, model, opt, spec.steps, X, y)
    assert all(isinstance(v, float) for v in losses)
    assert abs(losses[0] - start) <= 0.05 * start  # step(closure) returns the loss at the iterate
    assert _loss(model, X, y) < 0.8 * start


@pytest.mark.parametrize("spec", _case("none_grad"))
def test_parameter_without_gradient_is_skipped(spec):
    """torch.optim skips a parameter whose .grad is None. A zeroth-order method has no .grad at
    all; its equivalent is to leave a frozen parameter (requires_grad=False) alone."""
    model, (X, y) = _model(), _data()
    unused = torch.nn.Parameter(torch.ones(3, dtype=torch.float64),
                                requires_grad=spec.closure != "forward")
    opt = spec.make([*model.parameters(), unused])
    _run(spec, model, opt, 3, X, y)
    assert unused.grad is None and torch.equal(unused.detach(), torch.ones(3, dtype=torch.float64))


@pytest.mark.parametrize("spec", _case("zero_grad"))
def test_zero_grad(spec):
    model, (X, y) = _model(), _data()
    opt = spec.make(model.parameters())
    torch.nn.functional.mse_loss(model(X), y).backward()
    opt.zero_grad()
    assert all(p.grad is None or not p.grad.any() for p in model.parameters())


@pytest.mark.parametrize("spec", _case("groups"))
def test_param_groups_carry_their_own_hyperparameters(spec):
    model, (X, y) = _model(), _data()
    first, second = list(model[0].parameters()), list(model[2].parameters())
    opt = spec.make([{"params": first}, {"params": second, **spec.good}])
    key, value = next(iter(spec.good.items()))
    assert opt.param_groups[1][key] == value and opt.param_groups[0][key] != value
    _run(spec, model, opt, 3, X, y)
    with pytest.raises(ValueError, match=next(iter(spec.bad))):
        spec.make([{"params": first}, {"params": second, **spec.bad}])


@pytest.mark.parametrize("spec", _case("resume"))
def test_state_dict_resumes_bit_identically(spec):
    X, y = _data()
    model = _model()
    opt = spec.make(model.parameters())
    _run(spec, model, opt, 7, X, y)
    saved_model, saved_opt = copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict())
    _run(spec, model, opt, 7, X, y)
    straight = _flat(model)

    resumed = _model(seed=99)  # different init: everything must come from the saved state
    resumed.load_state_dict(saved_model)
    # Another seed, where the optimizer takes one: its random state must come from the saved state.
    seeded = "seed" in inspect.signature(type(opt).__init__).parameters
    opt2 = spec.make(resumed.parameters(), **({"seed": 12345} if seeded else {}))
    opt2.load_state_dict(saved_opt)
    _run(spec, resumed, opt2, 7, X, y)
    assert torch.equal(_flat(resumed), straight)


@pytest.mark.parametrize("spec", _case("global_rng"))
def test_global_rng_is_untouched(spec):
    model, (X, y) = _model(), _data()
    before = torch.get_rng_state()
    seeded = "seed" in inspect.signature(type(spec.make([torch.nn.Parameter(torch.zeros(1))])).__init__).parameters
    opt = spec.make(model.parameters(), **({"seed": None} if seeded else {}))
    _run(spec, model, opt, 3, X, y)
    assert torch.equal(torch.get_rng_state(), before)


@pytest.mark.parametrize("spec", [s for s in _case("baseline") if s.values[0].baseline is not None])
def test_reduces_to_its_torch_baseline(spec):
    off, make_baseline = spec.baseline
    X, y = _data()
    a, b = _model(), _model()
    _run(spec, a, spec.make(a.parameters(), **off), 10, X, y)
    base = make_baseline(b.parameters())
    for _ in range(10):
        base.zero_grad()
        torch.nn.functional.mse_loss(b(X), y).backward()
        base.step()
    torch.testing.assert_close(_flat(a), _flat(b), rtol=1e-10, atol=1e-12)
