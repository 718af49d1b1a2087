"""Part III: training deep networks: zeroth-order, low-rank, sharpness (chapters 16-20)."""

#: The paper's methods of each chapter, each with the baselines the chapter compares it with, as
#: "module.name" in this package or a full dotted path. The book's index of methods
#: (book/methods.md, through :func:`optbook.methods.index`) is built from this table; the tests
#: check that every chapter in the book has an entry and that every name resolves.
METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    "16": {"pazo_methods.pazo": ("pazo_methods.zo_sgd", "pazo_methods.zo_adam", "pazo_methods.hizoo"), "pazo_methods.pspsa": ("pazo_methods.zo_sgd",)},
    "17": {"lowrank_sampling.LowRankAdam": ("torch.optim.Adam",),
           "lowrank_sampling.lowrank_adam": ("lowrank_sampling.full_adam", "lowrank_sampling.projected_sgd")},
    "18": {"momentum_sam.MSAM": ("momentum_sam.SAM", "torch.optim.SGD"), "momentum_sam.AdamWMSAM": ("torch.optim.AdamW",)},
    "19": {"valley_explorer.ALTO": ("valley_explorer.Lamb",), "valley_explorer.ESGD": ("torch.optim.SGD",),
           "valley_explorer.EAdam": ("torch.optim.Adam",)},
    "20": {"bandit_schedulers.train_proxy": ("optbook.core.bandits.UCB1", "optbook.core.bandits.EpsilonGreedy",
                                             "optbook.core.bandits.RandomPolicy")},
}

from ..exports import lazy_exports  # noqa: E402  (after METHODS, which it reads)

__all__, __getattr__, __dir__ = lazy_exports(__name__, METHODS)
