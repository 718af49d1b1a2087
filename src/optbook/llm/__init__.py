"""Part VII: large language models (compression, alignment, fusion, reasoning) at CPU scale."""

#: The paper's methods of each chapter, each with the baselines the chapter compares it with, as
#: "module.name" in this package or a full dotted path. The book's index of methods
#: (book/methods.md, through :func:`optbook.methods.index`) is built from this table; the tests
#: check that every chapter in the book has an entry and that every name resolves.
METHODS: dict[str, dict[str, tuple[str, ...]]] = {}
