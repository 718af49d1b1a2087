"""Part VI: decisions under uncertainty: bandits, online algorithms, games, control (chapters 27-32)."""

#: The paper's methods of each chapter, each with the baselines the chapter compares it with, as
#: "module.name" in this package or a full dotted path. The book's index of methods
#: (book/methods.md, through :func:`optbook.methods.index`) is built from this table; the tests
#: check that every chapter in the book has an entry and that every name resolves.
METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    "27": {"colts.COLTS": ("colts.SafeLTS",)},
    "28": {"ski_rental.soac": ("ski_rental.always_rent", "ski_rental.buy_all_now", "ski_rental.bundle_break_even",
                               "ski_rental.follow_opt", "ski_rental.bundle_karlin", "ski_rental.bundle_lp",
                               "ski_rental.per_item_karlin"),
           "ski_rental.optimal_lp": ()},
    "29": {"mean_field.app": ("mean_field.mirror_descent", "mean_field.damped_best_response",
                              "mean_field.fictitious_play")},
    "30": {"maxucb.MaxUCB": ("maxucb.RoundRobin", "maxucb.ThresholdAscent", "maxucb.QoMaxETC", "maxucb.MaxMedian")},
    "31": {"freeze_thaw.CFBO": ("freeze_thaw.FreezeThawEI", "freeze_thaw.RandomSearch",
                                "freeze_thaw.SuccessiveHalving")},
    "32": {"cooling_control.cem": ("cooling_control.RulePolicy", "cooling_control.ScheduledRulePolicy",
                                   "cooling_control.PIPolicy", "cooling_control.RandomPolicy"),
           "cooling_control.distill": (),
           "cooling_env.LiquidCoolingEnv": ()},
}

from ..exports import lazy_exports  # noqa: E402  (after METHODS, which it reads)

__all__, __getattr__, __dir__ = lazy_exports(__name__, METHODS)
