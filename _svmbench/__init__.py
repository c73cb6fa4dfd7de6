"""svmbench: support vector machines trained by many convex-optimization methods, benchmarked
with certified duality gaps.

The subpackages (installed from the repository's root folders)::

    svmbench.problems    WHAT is solved: formulations, certificates, models, data sets
    svmbench.solvers     HOW it is solved: one module per method, ``registry.get(name, ...)``
    svmbench.benchmarks  the harness and the ``svmbench`` command (``import svmbench.benchmarks``:
                         the library never imports it)

``import svmbench`` is light: the numerical back ends (Numba, CVXPY, Clarabel, OSQP, matplotlib,
Dask) load when first used. The scikit-learn estimators are ``svmbench.SVMClassifier``,
``svmbench.SVMClassifierCV``, ``svmbench.SVMRegressor``, ``svmbench.LinearSVMRegressor``,
``svmbench.NuSVMClassifier``, ``svmbench.NuSVMRegressor`` and ``svmbench.OneClassSVM``.
"""

from __future__ import annotations

import importlib

#: The one place the version is written (pyproject.toml reads it from here): asking
#: ``importlib.metadata`` instead would read a stale ``svmbench.egg-info`` left by a build in the
#: working directory.
__version__ = "0.2.0"

#: Public names loaded on first access (PEP 562), so that ``import svmbench`` stays light.
_LAZY = {
    "SVMClassifier": "svmbench.estimators",
    "SVMClassifierCV": "svmbench.model_selection",
    "SVMRegressor": "svmbench.regressors",
    "LinearSVMRegressor": "svmbench.linear_regressor",
    "NuSVMClassifier": "svmbench.nu_estimators",
    "NuSVMRegressor": "svmbench.nu_estimators",
    "OneClassSVM": "svmbench.nu_estimators",
    "SVMConvergenceWarning": "svmbench.solve_outcome",
    "SVMNumericalWarning": "svmbench.solve_outcome",
    "load_model": "svmbench.problems.model_files",
    "save_model": "svmbench.problems.model_files",
    "problems": "svmbench.problems",
    "solvers": "svmbench.solvers",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        return module if module.__name__.endswith("." + name) else getattr(module, name)
    raise AttributeError(f"module 'svmbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
