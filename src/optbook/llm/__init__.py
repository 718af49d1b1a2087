"""Part VII: large language models (compression, alignment, fusion, reasoning) at CPU scale."""

#: The paper's methods of each chapter, each with the baselines the chapter compares it with, as
#: "module.name" in this package or a full dotted path. The book's index of methods
#: (book/methods.md, through :func:`optbook.methods.index`) is built from this table; the tests
#: check that every chapter in the book has an entry and that every name resolves.
METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    "33": {"sparse_plus_lowrank.threebasil": ("sparse_plus_lowrank.hassle_free", "sparse_plus_lowrank.oats",
                                              "sparse_plus_lowrank.eora", "sparse_plus_lowrank.wanda"),
           "sparse_plus_lowrank.transformer_matching": ()},
    "34": {"alignment_distortion.nlhf_kl": ("alignment_distortion.rlhf_policy", "alignment_distortion.kl_tilt"),
           "alignment_distortion.maximal_lottery": ("alignment_distortion.borda_scores",),
           "alignment_distortion.distortion": ()},
    "35": {"infifpo.fused_reference": ("infifpo.max_margin_weights",),
           "infifpo.preference_loss": ()},
    "36": {"proximal_preference.pro_loss": ("proximal_preference.dpo_loss", "proximal_preference.ipo_loss",
                                            "proximal_preference.dpo_nll_loss", "proximal_preference.kto_loss",
                                            "proximal_preference.sft_loss"),
           "proximal_preference.pro_loss_torch": ("proximal_preference.dpo_loss_torch",)},
    "37": {"adaptive_reasoning.train_dpo": ("adaptive_reasoning.merge",),
           "adaptive_reasoning.build_pairs": ()},
}

from ..exports import lazy_exports  # noqa: E402  (after METHODS, which it reads)

__all__, __getattr__, __dir__ = lazy_exports(__name__, METHODS)
