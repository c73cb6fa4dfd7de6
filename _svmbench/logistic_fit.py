"""``SVMClassifier(loss="logistic")``: L2-regularized logistic regression, certified.

The estimator's fit hands over here when ``loss="logistic"``: the binary problem is
:class:`~svmbench.problems.Logistic` (``½‖w‖² + Σ C_i log(1 + e^{−y_i f(x_i)})``, the estimator's
``C``, bias, ``sample_weight × class_weight``), solved by any solver that accepts it
(``"auto"``: the registry's ``auto``, which picks by its rules); more than two classes by
one-vs-rest (one binary problem per class, ``multiclass="ovr"`` or ``"auto"``), or by the
multinomial loss (``multiclass="multinomial"``, for two classes too:
:class:`~svmbench.problems.MultinomialLogistic`, ``½‖W‖_F² + Σ_i C_i (log Σ_r e^{f_r(x_i)} −
f_{y_i}(x_i))``, bias regularized or none). Probabilities come from the model: ``σ(f(x))`` for
two classes, the one-vs-rest ``σ(f_r(x))`` normalized to sum 1 (scikit-learn's and LIBLINEAR's
``ovr`` rule), the softmax of the multinomial scores; ``predict_proba`` exists by the one rule
of :mod:`svmbench.probability`.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.utils.class_weight import compute_class_weight

from svmbench import solve_outcome
from svmbench.problems import Logistic, MultinomialLogistic
from svmbench.problems.models import OneVsRestModel
from svmbench.solvers import registry

__all__ = ["fit"]


def _check_parameters(est, k: int) -> None:
    if est.kernel != "linear":
        raise ValueError(
            f"loss='logistic' is solved for kernel='linear' only, got kernel={est.kernel!r}; "
            "pass kernel='linear'"
        )
    if math.isinf(est.C):
        raise ValueError(
            "loss='logistic' needs a finite C: with C=inf the logistic loss of separable data "
            "has no minimizer"
        )
    if est.multiclass == "multinomial" and est.bias == "free":
        raise ValueError(
            "multiclass='multinomial' takes bias='regularized' or 'none', got bias='free': a "
            "free bias of the multinomial loss is unique only up to a constant added to every "
            "class (pass bias='regularized', LIBLINEAR's -B, or bias='none')"
        )
    if k > 2 and est.multiclass not in ("auto", "ovr", "multinomial"):
        raise ValueError(
            "loss='logistic' handles more than two classes by one-vs-rest (multiclass='ovr' "
            f"or 'auto') or by the multinomial loss (multiclass='multinomial'), got "
            f"multiclass={est.multiclass!r}"
        )


def fit(est, X, y, y_index, weights, previous):
    """Fit ``est`` (an SVMClassifier with ``loss="logistic"``, ``classes_`` set) on the encoded
    labels; sets the fitted attributes as the estimator's own fit does. Returns ``est``."""

    k = est.classes_.size
    _check_parameters(est, k)
    name = est._solver_name(k)
    options = est._solver_options(name)
    if est.multiclass == "multinomial":
        return _fit_multinomial(est, X, y, y_index, weights, previous, name, options)
    targets = [1] if k == 2 else list(range(k))
    results = []
    for r in targets:
        problem = Logistic(
            X, np.where(y_index == r, 1.0, -1.0), C=float(est.C), bias=est.bias,
            bias_scale=float(est.bias_scale), sample_weight=weights,
        )  # fmt: skip
        why = registry.solver_class(name).unsupported_reason(problem)
        if why is not None:
            raise ValueError(f"solver {name!r} cannot fit loss='logistic': {why}")
        solver = registry.get(name, **options)
        warm = _warm_start(previous, solver, problem) if k == 2 else None
        results.append(
            solve_outcome.solve_and_report(
                solver,
                problem,
                warm,
                family="liblinear",
                max_iter=est.max_iter,
                time_limit=est.time_limit,
            )
        )
    result = results[0] if k == 2 else _one_vs_rest(results, k)
    intercept = np.array([m.b for m in _binary_models(result.model)])
    return _set_fitted(est, X, y, result, [r.iterations for r in results], intercept)


def _fit_multinomial(est, X, y, y_index, weights, previous, name, options):
    """One :class:`MultinomialLogistic` problem over every class (two included)."""
    problem = MultinomialLogistic(
        X, y_index, C=float(est.C), bias=est.bias, bias_scale=float(est.bias_scale),
        sample_weight=weights,
    )  # fmt: skip
    why = registry.solver_class(name).unsupported_reason(problem)
    if why is not None:
        raise ValueError(f"solver {name!r} cannot fit multiclass='multinomial': {why}")
    solver = registry.get(name, **options)
    warm = None
    if (
        previous is not None
        and previous.problem == MultinomialLogistic.kind
        and solver.warm_start_uses
        and previous.W is not None
        and previous.W.shape == (problem.n_classes, problem.n_features)
    ):
        warm = (previous.W, previous.b)
    result = solve_outcome.solve_and_report(
        solver, problem, warm, family="liblinear", max_iter=est.max_iter,
        time_limit=est.time_limit,
    )  # fmt: skip
    intercept = None if result.model is None else result.model.b.copy()
    return _set_fitted(est, X, y, result, [result.iterations], intercept)


def _set_fitted(est, X, y, result, iterations, intercept):
    from svmbench.solvers.base import Status

    est.result_ = result
    est.model_ = result.model
    est.n_iter_ = np.array(iterations, dtype=np.int32)
    est.fit_status_ = 0 if result.status is Status.OPTIMAL else 1
    for attribute in ("support_", "support_vectors_", "dual_coef_", "n_support_"):
        est.__dict__.pop(attribute, None)
    est._coef_sparse = False
    est._intercept = intercept
    est.shape_fit_ = X.shape
    est.class_weight_ = compute_class_weight(est.class_weight, classes=est.classes_, y=y)
    return est


def _warm_start(previous, solver, problem):
    """The previous binary result when it fits this problem and the solver starts from it."""
    if previous is None or previous.problem != Logistic.kind or not solver.warm_start_uses:
        return None
    if previous.w is None or previous.w.shape[0] != problem.n_features:
        return None
    if previous.alpha is not None and previous.alpha.shape[0] != problem.n_samples:
        return (previous.w, previous.b if problem.bias != "none" else 0.0)
    return previous


def _binary_models(model):
    return model.models if isinstance(model, OneVsRestModel) else (model,)


def _one_vs_rest(results, k: int):
    """One record for the k binary problems: their summed objectives, the worst relative gap,
    certified when each is (as the ``ovr`` reduction reports), the first status short of
    ``optimal``; ``info`` holds each problem's gap, status and iterations."""
    from dataclasses import replace

    from svmbench.solvers.base import Status

    status = next((r.status for r in results if r.status is not Status.OPTIMAL), Status.OPTIMAL)
    certified = all(r.certified for r in results)
    primal = float(sum(r.primal for r in results))
    dual = float(sum(r.dual for r in results))
    return replace(
        results[0],
        status=status,
        primal=primal,
        dual=dual,
        gap=primal - dual,
        rel_gap=max(r.rel_gap for r in results) if certified else math.inf,
        certified=certified,
        iterations=int(sum(r.iterations for r in results)),
        solve_time=float(sum(r.solve_time for r in results)),
        compile_time=float(sum(r.compile_time for r in results)),
        wall_time=float(sum(r.wall_time for r in results)),
        certify_time=float(sum(r.certify_time for r in results)),
        trace=(),
        w=None,
        b=None,
        alpha=None,
        model=OneVsRestModel(tuple(r.model for r in results), k),
        message="one-vs-rest: the binary problems' summed objectives and worst relative gap",
        info={
            "strategy": "ovr",
            "binary_rel_gaps": tuple(r.rel_gap for r in results),
            "binary_status": tuple(r.status.value for r in results),
            "binary_iterations": tuple(r.iterations for r in results),
        },
    )
