"""Part IV: distributed and federated learning (chapters 21-22)."""

#: The paper's methods of each chapter, each with the baselines the chapter compares it with, as
#: "module.name" in this package or a full dotted path. The book's index of methods
#: (book/methods.md, through :func:`optbook.methods.index`) is built from this table; the tests
#: check that every chapter in the book has an entry and that every name resolves.
METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    "21": {"fedada2.LocalSM3": ("fedada2.LocalSGD", "fedada2.LocalAdaGrad", "fedada2.LocalAdam"),
           "fedada2.SM3": ("torch.optim.Adagrad",)},
    "22": {"sketched_adaptive.run_sadl": ()},
}

from ..exports import lazy_exports  # noqa: E402  (after METHODS, which it reads)

__all__, __getattr__, __dir__ = lazy_exports(__name__, METHODS)
