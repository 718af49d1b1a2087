"""optbook: the tested core of *Frontiers of Optimization*.

Subpackages: :mod:`optbook.core` (shared machinery), :mod:`optbook.viz` (plotly figure
builders), :mod:`optbook.widgets` (live explorers), :mod:`optbook.claims` (the registry of
each chapter's headline claim), and one package per part of the book.
"""
__version__ = "0.1.0"
