"""Part I: classical methods, new guarantees (chapters 01-08)."""

#: The paper's methods of each chapter, each with the baselines the chapter compares it with, as
#: "module.name" in this package or a full dotted path. The book's index of methods
#: (book/methods.md, through :func:`optbook.methods.index`) is built from this table; the tests
#: check that every chapter in the book has an entry and that every name resolves.
METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    "01": {"bfgs_methods.bfgs": ("bfgs_methods.gradient_descent", "bfgs_methods.damped_newton")},
    "02": {"sparse_polyak_methods.sparse_polyak": ("sparse_polyak_methods.polyak_iht", "sparse_polyak_methods.constant_step_iht")},
    "03": {"reduction_maps.reduced_gradient_descent": ("reduction_maps.gradient_descent",
                                                       "reduction_maps.alternating_least_squares",
                                                       "reduction_maps.alternating_gradient_descent")},
    "04": {"relu_gradient_flow.train_shallow_relu": ("relu_gradient_flow.linear_least_squares",
                                                     "relu_gradient_flow.random_features_floor")},
    "05": {"hebbian.stdp": ("hebbian.noisy_exponentiated_gradient", "hebbian.projected_sgd",
                            "hebbian.hebbian_additive_noise")},
    "06": {"starshaped.StarClassifier": ("sklearn.svm.SVC", "sklearn.neural_network.MLPClassifier"),
           "starshaped.fit_star": ()},
    "07": {"denoiser_prox.mmse_averaging": ("denoiser_prox.fixed_sigma_averaging",
                                            "denoiser_prox.gradient_descent_prox",
                                            "denoiser_prox.accelerated_gradient_prox")},
    "08": {"lowrank_inverse.theorem21_bound": ("lowrank_inverse.eymn_bound", "lowrank_inverse.neumann_bound"),
           "lowrank_inverse.contour_rank_inverse": ("lowrank_inverse.best_rank_inverse",)},
}

from ..exports import lazy_exports  # noqa: E402  (after METHODS, which it reads)

__all__, __getattr__, __dir__ = lazy_exports(__name__, METHODS)
