"""Part II: geometry, constraints and structure (chapters 09-15)."""

#: The paper's methods of each chapter, each with the baselines the chapter compares it with, as
#: "module.name" in this package or a full dotted path. The book's index of methods
#: (book/methods.md, through :func:`optbook.methods.index`) is built from this table; the tests
#: check that every chapter in the book has an entry and that every name resolves.
METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    "09": {"linf_regression.mwu_irls": ("linf_regression.lawson_irls", "linf_regression.linf_exchange",
                                        "linf_regression.softmax_newton", "linf_regression.linf_lp",
                                        "linf_regression.linf_cvxpy"),
           "linf_regression.qsc_trust_region": ("linf_regression.damped_newton", "linf_regression.gradient_descent")},
    "10": {"hom_pgd_methods.hom_pgd": ("hom_pgd_methods.pgd_projection", "hom_pgd_methods.frank_wolfe", "hom_pgd_methods.quadratic_penalty")},
    "11": {"birkhoff.birkhoff_extension": ("birkhoff.bottleneck_decomposition",),
           "birkhoff.be_frank_wolfe": ("birkhoff.sinkhorn_gd", "birkhoff.faq", "birkhoff.two_opt",
                                       "birkhoff.random_search")},
    "12": {"semi_infinite.idb_pd": ("semi_infinite.penalty_gda", "semi_infinite.exchange_method")},
    "13": {"riemannian_nonsmooth.ro2nc": ("riemannian_nonsmooth.riemannian_subgradient", "riemannian_nonsmooth.o2nc"),
           "riemannian_nonsmooth.zo_ro2nc": ("riemannian_nonsmooth.zo_rsgd",)},
    "14": {"uniform_wrappers.BoostingWrapper": ("uniform_wrappers.IdentityWrapper",),
           "uniform_wrappers.zo_ftrl_runs": ("uniform_wrappers.zo_oga_runs", "uniform_wrappers.continuous_greedy")},
    "15": {"quantum_zo.jordan_gradient": ("quantum_zo.gaussian_smoothing_gradient",
                                          "quantum_zo.coordinate_fd_gradient"),
           "quantum_zo.mirror_descent": ("quantum_zo.zo_gradient_descent",)},
}

from ..exports import lazy_exports  # noqa: E402  (after METHODS, which it reads)

__all__, __getattr__, __dir__ = lazy_exports(__name__, METHODS)
