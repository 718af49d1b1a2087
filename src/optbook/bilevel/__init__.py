"""Part V: bilevel and nested optimization (chapters 23-26)."""

#: The paper's methods of each chapter, each with the baselines the chapter compares it with, as
#: "module.name" in this package or a full dotted path. The book's index of methods
#: (book/methods.md, through :func:`optbook.methods.index`) is built from this table; the tests
#: check that every chapter in the book has an entry and that every name resolves.
METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    "23": {"pbgd_free_methods.pbgd_free": ("pbgd_free_methods.pbgd", "pbgd_free_methods.aid")},
    "24": {"kernel_bilevel.KernelBilevelIV": ("kernel_bilevel.ols", "kernel_bilevel.two_stage_least_squares")},
    "25": {"at_bptt.distill": ()},
    "26": {"ld3m.ld3m_sample": (), "ld3m.distill": ()},
}

from ..exports import lazy_exports  # noqa: E402  (after METHODS, which it reads)

__all__, __getattr__, __dir__ = lazy_exports(__name__, METHODS)
