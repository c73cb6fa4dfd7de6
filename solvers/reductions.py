"""Multiclass by reduction to binary problems: one-vs-rest (``ovr``) and one-vs-one (``ovo``),
each binary problem solved by any solver of the registry ([HL02]).

``ovr`` solves, for each class r, the binary soft-margin problem of "r against the others",
``min ½‖w_r‖² + Σ_i C_i loss(y_i^r (w_r·x_i + b_r))`` with ``y_i^r = +1`` if ``y_i = r`` else −1,
and predicts ``argmax_r f_r(x)``. ``ovo`` solves, for each pair i < j, the same problem on the
examples of classes i and j (``+1`` for i), and predicts by majority vote, ties to the lowest
class index as LIBSVM predicts (:class:`~svmbench.problems.models.OneVsOneModel`). The binary
problems are linear or kernel; their solver is ``binary_solver`` with ``binary_options``.

A reduction is not a solver of the Crammer–Singer problem: it solves k (or k(k−1)/2) other
problems. It still takes a :class:`~problems.multiclass.MulticlassHinge` — for its data, C,
bias and sample weights, so that the same problem object runs through every multiclass solver of
the harness — and builds the binary problems from it (``SoftMarginPrimal``/``SoftMarginDual`` or
``KernelDual``). Its result reports, honestly: for linear one-vs-rest with the problem's own bias,
the certified Crammer–Singer gap of the stacked ``W`` (large: the stacked one-vs-rest ``W`` is
not the Crammer–Singer optimum); for one-vs-one and kernel models, which have no ``W`` of the
Crammer–Singer problem, no multiclass certificate (``primal = dual = nan``,
``certified = False``). In every case ``info["binary_rel_gaps"]`` holds the certified relative
gap of each binary problem, and ``result.model`` is a ``OneVsRestModel`` or ``OneVsOneModel`` over
the binary problems' own models (kernel ones hold only their support vectors).

References
----------
.. [HL02] C.-W. Hsu, C.-J. Lin. A comparison of methods for multiclass support vector machines.
   IEEE Transactions on Neural Networks 13(2), 2002.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import KernelDual, MulticlassHinge, SoftMarginDual, SoftMarginPrimal
from svmbench.problems.base import Certificate
from svmbench.problems.gram import symmetric_gram
from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import Kernel, resolve_gamma
from svmbench.problems.models import (
    BinaryModel,
    KernelModel,
    LinearModel,
    OneVsOneModel,
    OneVsRestModel,
)
from svmbench.problems.validation import check_option, validated_input
from svmbench.solvers.base import (
    Clock,
    ConvergenceWarning,
    Outcome,
    Solver,
    SolveResult,
    Status,
)
from svmbench.solvers.binary_pairs import PairRows, binary_certificate, pair_rows
from svmbench.solvers.registry import register
from svmbench.solvers.smo_shared import lean_pair_applies, solve_shared_pair


def _zero_one_cost(problem) -> str | None:
    k = problem.n_classes
    if not np.array_equal(problem.cost, 1.0 - np.eye(k)):
        return "a reduction to binary problems cannot represent a cost matrix other than 0-1"
    return None


def _binary_solve(binary: Solver, bp, share=None, first_of=None) -> SolveResult:
    """``binary.solve(bp)``; for ``auto``, its first method run directly
    (:meth:`~solvers.auto.Auto.first_method`), and auto's next methods from that record
    (:meth:`~solvers.auto.Auto.go_on`) only when it stops at a limit or fails: a pair's
    record without auto's second pass of checks, certificate and record over the problem.
    The record's solve and compile times then include the first method's. ``share(bp)`` is
    called first when the method that runs is ``smo`` (which reads shared kernel rows); SMO
    then solves the pair (or a precomputed Gram's block) on its lean path
    (:func:`~solvers.smo_shared.solve_shared_pair`: the same chunks, certificates, statuses
    and exact finish as its ``solve``, without the generic per-solve wrappers) when the pair
    and its options allow
    (:func:`~solvers.smo_shared.lean_pair_applies`). ``first_of(bp)``, when given, stands
    for ``binary.first_method(bp)`` (:meth:`_Reduction._first_methods`)."""
    first_method = first_of or getattr(binary, "first_method", None)
    inner = None if first_method is None else first_method(bp)
    method = binary if inner is None else inner
    if share is not None and method.name == "smo":
        share(bp)
    lean = method.name == "smo" and lean_pair_applies(method, bp)  # or a precomputed Gram's
    if inner is None:
        return solve_shared_pair(binary, bp) if lean else binary.solve(bp)
    if lean:  # auto's call warns, if any
        first = solve_shared_pair(inner, bp, warns=False)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # auto's call warns, if any
            first = inner.solve(bp)
    if first.status not in binary.retried:
        return first
    res = binary.go_on(bp, first)
    return dataclasses.replace(
        res,
        solve_time=res.solve_time + first.solve_time,
        compile_time=res.compile_time + first.compile_time,
    )


_LINEAR_VIEWS = {"primal": SoftMarginPrimal, "dual": SoftMarginDual, "kernel": KernelDual}

#: The binary solvers whose loops read shared kernel rows (``auto`` runs ``smo`` on the pairs).
SHARED_ROW_SOLVERS = ("smo", "auto")
#: The cache budget of a binary solver that names none (SMO's default ``cache_mb``).
DEFAULT_CACHE_MB = 200.0


class _Reduction(Solver):
    """Shared machinery of ``ovr`` and ``ovo``.

    Parameters
    ----------
    binary_solver : str, default="clarabel"
        Registry name of the solver of every binary problem.
    binary_options : dict, default=None
        Options of that solver (``registry.get(binary_solver, **binary_options)``). A solver
        that draws a trace runs without one unless these name ``trace``: the reduction's record
        keeps no trace of its binary problems.
    kernel : {None, "linear", "poly", "rbf", "sigmoid", "precomputed"}, default=None
        None: linear binary problems (``SoftMarginPrimal``, ``SoftMarginDual`` or, if the binary
        solver takes only kernel duals, ``KernelDual(kernel="linear")`` — the first the binary
        solver accepts, or the one named by ``view``). A kernel name: ``KernelDual`` problems;
        ``"precomputed"`` reads the problem's ``X`` as the (n, n) Gram matrix, and the binary
        models index its columns (their ``support`` is global, ``n_train = n``).
    gamma, degree, coef0
        Kernel parameters, as in ``KernelDual``; ``gamma="scale"``/``"auto"`` is resolved once,
        on the multiclass problem's X and weights (as SVC), not on each binary problem's rows.
    bias : {None, "free", "regularized", "none"}, default=None
        Bias of the binary problems; None takes the multiclass problem's (a binary problem may
        have a free bias, as LIBSVM's; then no Crammer–Singer certificate is reported).
    view : {"auto", "primal", "dual", "kernel"}, default="auto"
        Which binary problem class carries a linear model.
    loss : {"hinge", "squared_hinge"}, default="hinge"
        Loss of the binary problems (LinearSVC's one-vs-rest uses the squared hinge).
    support_vectors : bool, default=False
        Linear binary models as SVC keeps them: the support vectors and ``α_j y_j`` (a linear
        ``KernelModel``) whenever the binary solver returns α, instead of ``(w, b)``.
    stacked_gap : bool, default=True
        One-vs-rest with linear models: certify the stacked ``(W, b)`` on the Crammer–Singer
        problem too (``info["crammer_singer"]``; its dual point is a small QP, most of a small
        fit's time). False leaves that diagnostic out; the record's certificate is the binary
        problems' either way.
    tol, max_iter, time_limit
        Unused by the reduction itself (give them to the binary solver in ``binary_options``);
        ``time_limit`` caps the sum of the binary solve times, checked between binary problems.
    """

    iteration_unit = "binary problems"
    supported: ClassVar = {MulticlassHinge: {"cost": _zero_one_cost}}
    #: A reduction solves other (binary) problems, not the Crammer–Singer one: `svmbench check`
    #: holds it to no distance from the Crammer–Singer optimum, only to its certificates.
    check_rtol: ClassVar[float] = math.inf
    warm_start_refusal = "does not take a warm start (it solves new binary problems)"
    reports_progress = False
    optimal_by_subproblems = True

    def __init__(
        self,
        *,
        binary_solver: str = "clarabel",
        binary_options: dict | None = None,
        kernel: str | None = None,
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        bias: str | None = None,
        view: str = "auto",
        loss: str = "hinge",
        support_vectors: bool = False,
        stacked_gap: bool = True,
        **common,
    ):
        binary_options = dict(binary_options or {})
        # one tol for the reduction and its binary problems, whichever side names it
        if "tol" in common and "tol" not in binary_options:
            binary_options["tol"] = common["tol"]
        elif "tol" in binary_options and "tol" not in common:
            common["tol"] = binary_options["tol"]
        super().__init__(**common)
        from svmbench.solvers import registry

        registry.solver_class(binary_solver)  # ValueError listing the names if unknown
        self.binary_solver = binary_solver
        self.binary_options = binary_options
        if kernel is not None:
            check_option("kernel", kernel, ("linear", "poly", "rbf", "sigmoid", "precomputed"))
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        if bias is not None:
            check_option("bias", bias, ("free", "regularized", "none"))
        self.bias = bias
        self.view = check_option("view", view, ("auto", "primal", "dual", "kernel"))
        self.loss = check_option("loss", loss, ("hinge", "squared_hinge"))
        self.support_vectors = bool(support_vectors)
        self.stacked_gap = bool(stacked_gap)

    def certify_result(self, problem: MulticlassHinge, result: SolveResult) -> Certificate:
        """The reduction's own certificate computed anew: each binary problem rebuilt and its
        certificate taken at the variables its solve returned (``info["binary_variables"]``),
        then summed as :func:`~solvers.binary_pairs.binary_certificate` does."""
        from svmbench.solvers import registry

        solver_cls = registry.solver_class(self.binary_solver)
        gamma = None
        if self.kernel is not None:
            gamma = resolve_gamma(self.gamma, problem.X, problem.sample_weight)
        pairs = self._pairs(problem.n_classes)
        solved = result.info.get("binary_variables", ())
        certificates = []
        for (pos, neg), variables in zip(pairs, solved, strict=False):
            bp = self._binary_problem(problem, pos, neg, solver_cls, gamma)
            certificates.append(bp.certificate(**variables))
        return binary_certificate(certificates, len(pairs) - len(certificates))

    # -- binary problems --------------------------------------------------------------------
    def _pairs(self, k: int) -> list[tuple[int, int]]:
        raise NotImplementedError

    def _binary_problem(
        self, problem: MulticlassHinge, pos: int, neg: int, solver_cls, gamma, rows=None,
        like=None, signs=None, gram=None,
    ):  # fmt: skip
        """The binary problem "pos against neg" on its rows
        (:func:`~solvers.binary_pairs.pair_rows`, if not given).
        ``like``: a kernel pair of this reduction already built by the constructor; without
        sample weights the next pairs take its checked parameters and skip the checks of rows
        and labels built here from the checked multiclass problem
        (``KernelDual._on_checked_rows``; a precomputed kernel's, blocks of ``gram``, the
        Gram matrix checked once, ``_on_checked_gram``); ``signs``, if given, ±1 of every
        example of ``problem`` against ``pos`` (the labels read at ``rows``)."""
        rows = pair_rows(problem, pos, neg) if rows is None else rows
        X = problem.X if gram is None else gram
        # the rows gathered: take copies dense rows in half the time of X[rows]
        X = X.take(rows, axis=0) if type(X) is np.ndarray else X[rows]
        if self.kernel == "precomputed":
            X = X.take(rows, axis=1)
        if self.kernel is not None and type(X) is not np.ndarray and sparse.issparse(X):
            X = X.toarray()
        gram_ok = gram is not None or self.kernel != "precomputed"
        if like is not None and problem.sample_weight is None and gram_ok:  # trusted
            # labels in {−1, +1}, both classes present: pos's and neg's rows
            y = np.where(problem.y[rows] == pos, 1.0, -1.0) if signs is None else signs.take(rows)
            if gram is not None:  # an exactly symmetric block
                return like._on_checked_gram(X, y)
            return like._on_checked_rows(np.ascontiguousarray(X, dtype=np.float64), y)
        with validated_input(X):  # rows of the checked multiclass X: finite, no second scan
            return self._binary_view(problem, X, rows, pos, solver_cls, gamma)

    def _shares_rows(self, problem: MulticlassHinge) -> bool:
        """Whether the pairs that ``smo`` solves share one table of kernel rows
        (:class:`KernelRows`): a one-vs-one reduction whose solver may run ``smo``
        (:data:`SHARED_ROW_SOLVERS`), a kernel computed from dense rows (not precomputed), the
        hinge loss, no regularized bias, and the whole table, ``n² · 8`` bytes, within the
        binary solver's ``cache_mb``. Every kernel entry is then computed at most once for all
        those pairs, by SMO's loops or by the certificates, instead of once per pair and again
        per certificate."""
        return not (
            self.name != "ovo"
            or self.binary_solver not in SHARED_ROW_SOLVERS
            or self.kernel in (None, "linear", "precomputed")
            or self.loss != "hinge"
            or (self.bias or problem.bias) == "regularized"
            or sparse.issparse(problem.X)
            or self.binary_options.get("storage", "auto") == "csr"
            or 8.0 * problem.n_samples**2
            > float(self.binary_options.get("cache_mb", DEFAULT_CACHE_MB)) * 2**20
        )

    def _shared_rows(self, problem: MulticlassHinge, gamma) -> KernelRows | None:
        """The table of kernel rows of ``problem``'s X (None unless :meth:`_shares_rows`)."""
        if not self._shares_rows(problem):
            return None
        kernel = Kernel(self.kernel, gamma, self.degree, self.coef0)
        return KernelRows(np.ascontiguousarray(problem.X, dtype=np.float64), kernel, problem.y)

    def _first_methods(self, binary: Solver, problem: MulticlassHinge):
        """``binary.first_method`` for the reduction's pairs, asked once per pair size where
        nothing else of what auto reads differs between them (its ``Features``): an RBF
        kernel (convex, no ``C·R²`` scale, no finite rank) without sample weights, the pairs
        sharing C, bias, loss and γ. None: auto's own, pair by pair."""
        first_method = getattr(binary, "first_method", None)
        if first_method is None or self.kernel != "rbf" or problem.sample_weight is not None:
            return first_method
        chosen: dict[int, Solver | None] = {}

        def first_of(bp):
            n = bp.n_samples
            if n not in chosen:
                chosen[n] = first_method(bp)
            return chosen[n]

        return first_of

    def _binary_view(self, problem, X, rows, pos: int, solver_cls, gamma):
        """The binary problem on the rows ``X`` in the view the binary solver accepts: the
        kernel dual for a kernel, else the first linear view its ``supported`` table names."""
        y = np.where(problem.y[rows] == pos, 1.0, -1.0)
        sw = None if problem.sample_weight is None else problem.sample_weight[rows]
        bias = self.bias or problem.bias
        common = dict(
            C=problem.C, loss=self.loss, bias=bias, bias_scale=problem.bias_scale, sample_weight=sw
        )
        if self.kernel is not None:
            return KernelDual(
                X, y, kernel=self.kernel, gamma=gamma, degree=self.degree,
                coef0=self.coef0, **common,
            )  # fmt: skip
        views = ("primal", "dual", "kernel") if self.view == "auto" else (self.view,)
        named = tuple(
            v for v in views if any(issubclass(_LINEAR_VIEWS[v], k) for k in solver_cls.supported)
        )
        views = named or views
        last = None
        for v in views:
            cls = _LINEAR_VIEWS[v]
            extra = {"kernel": "linear"} if cls is KernelDual else {}
            candidate = cls(X, y, **common, **extra)
            last = solver_cls.unsupported_reason(candidate)
            if last is None:
                return candidate
        raise TypeError(
            f"binary solver {self.binary_solver!r} accepts none of the linear views {views} "
            f"of the binary problems: {last}"
        )

    def _run(self, problem: MulticlassHinge, warm_start, clock: Clock, callback) -> Outcome:
        from svmbench.solvers import registry

        solver_cls = registry.solver_class(self.binary_solver)
        gamma = None
        if self.kernel is not None:
            gamma = resolve_gamma(self.gamma, problem.X, problem.sample_weight)
        models, results = [], []
        status = Status.OPTIMAL
        binary_time, compile_time, excluded = 0.0, 0.0, 0.0
        pairs = self._pairs(problem.n_classes)
        options = dict(self.binary_options)
        if registry.accepts_option(solver_cls, "trace"):
            # the reduction keeps no binary trace: its points would be estimated for nothing
            options.setdefault("trace", False)
        # one solver for every binary problem: its per-call set-up (options checked, auto's
        # chosen method built) is paid once, not once per pair
        binary = registry.get(self.binary_solver, **options)
        binary.records_problem_key = False  # its records are read here and dropped
        shared = self._shares_rows(problem)
        first_of = self._first_methods(binary, problem)
        table = None

        def share(bp):  # the pairs that run smo read one table, built for the first
            nonlocal table
            if table is None:
                table = self._shared_rows(problem, gamma)
            # the rows and classes of the pair on the table built here: nothing to check
            bp._share_checked_rows(table, rows, (min(pos, neg), max(pos, neg)))

        like = None  # the first kernel pair, checked by the constructor
        rows_of = PairRows(problem)
        gram = symmetric_gram(problem.X, checked=True) if self.kernel == "precomputed" else None
        for pos, neg in pairs:
            rows = rows_of(pos, neg)
            signs = rows_of.signs(pos) if like is not None else None
            bp = self._binary_problem(problem, pos, neg, solver_cls, gamma, rows, like, signs, gram)
            if like is None and isinstance(bp, KernelDual) and self.kernel is not None:
                like = bp
            tic = clock.elapsed
            res = _binary_solve(binary, bp, share if shared else None, first_of)
            # the binary solver keeps its own clock: count its solve time, not its compilation
            # nor its final certificate
            excluded += clock.elapsed - tic - res.solve_time
            binary_time += res.solve_time
            compile_time += res.compile_time
            results.append(res)
            models.append(self._model(bp, res, problem, pos, neg))
            if res.status is not Status.OPTIMAL and status is Status.OPTIMAL:
                status = res.status
            if clock.elapsed - excluded >= self.time_limit and len(models) < len(pairs):
                status = Status.TIME_LIMIT
                break
        unsolved = pairs[len(results) :]
        models += [self._unsolved_model(problem, pos, neg, gamma) for pos, neg in unsolved]
        if unsolved:  # a multiclass point needs every binary problem solved
            variables, cs_cert = {}, None
        else:
            variables, cs_cert = self._multiclass_point(problem, models)
        cert = binary_certificate(results, len(unsolved))
        pad = len(unsolved)
        info = {
            "strategy": self.name,
            "binary_solver": self.binary_solver,
            "binary_problem": results[0].problem,
            "binary_status": tuple(r.status.value for r in results) + ("not_run",) * pad,
            "binary_rel_gaps": tuple(r.rel_gap for r in results) + (math.inf,) * pad,
            "binary_certified": tuple(r.certified for r in results) + (False,) * pad,
            "binary_solve_times": tuple(r.solve_time for r in results) + (0.0,) * pad,
            "binary_iterations": tuple(r.iterations for r in results) + (0,) * pad,
            "unsolved_pairs": tuple(unsolved),
            "classes": problem.n_classes,
            # what each binary solve returned, for certify_result to judge anew
            "binary_variables": tuple(
                {k: getattr(r, k) for k in ("w", "b", "alpha") if getattr(r, k) is not None}
                for r in results
            ),
        }
        message = "the certificate of the binary problems: their summed objectives, the worst "
        if cs_cert is not None:
            info["crammer_singer"] = {
                "primal": cs_cert.primal, "dual": cs_cert.dual, "rel_gap": cs_cert.rel_gap,
                "certified": cs_cert.certified,
            }  # fmt: skip
            message += (
                "relative gap; the stacked one-vs-rest W on the Crammer–Singer problem: "
                f"relative gap {cs_cert.rel_gap:.3g} (info['crammer_singer'])"
            )
        elif "W" in variables:
            message += "relative gap (stacked_gap=False: no Crammer–Singer certificate of W)"
        else:
            message += "relative gap (no Crammer–Singer certificate for this reduction)"
        return Outcome(
            status=status,
            variables=variables,
            iterations=len(results),
            certificate=cert,
            message=message,
            info=info,
            compile_time=compile_time,
            excluded_time=excluded,
            model=self._reduction_model(models, problem.n_classes),
        )

    def _model(self, bp, res: SolveResult, problem, pos: int, neg: int) -> BinaryModel | None:
        """The binary result's model (None when it has none: non-finite iterates). Linear
        problems: ``(w, b)``, ``w = Σ_{j ∈ SV} α_j y_j x_j`` for a linear-kernel dual, or with
        ``support_vectors`` the support vectors of α. A precomputed kernel's model gets the
        problem's global row indices (it reads the columns of the whole training set)."""
        model = res.model
        if model is None or self.kernel not in (None, "precomputed"):
            return model
        if self.kernel == "precomputed":
            rows = pair_rows(problem, pos, neg)
            return dataclasses.replace(
                model, support=rows[model.support], n_train=problem.n_samples
            )
        if self.support_vectors and res.alpha is not None and not isinstance(model, KernelModel):
            support = np.flatnonzero(res.alpha)
            return KernelModel(
                bp.X[support], res.alpha[support] * bp.y[support], model.b, "linear", support,
                bp.n_samples,
            )  # fmt: skip
        if isinstance(model, KernelModel) and not self.support_vectors:
            w = np.asarray(model.support_vectors.T @ model.dual_coef).ravel()
            return LinearModel(w, model.b)
        return model

    def _unsolved_model(self, problem: MulticlassHinge, pos: int, neg: int, gamma):
        """The model of a binary problem the time limit left unsolved: ``w = 0`` (no support
        vector) and ``b = ±1`` for the class of larger total weight ``Σ C_i`` (the optimum as
        C → 0), so that the multiclass model still predicts; ``info["unsolved_pairs"]`` lists
        them."""
        rows = pair_rows(problem, pos, neg)
        C = problem.C * (
            np.ones(rows.size) if problem.sample_weight is None else problem.sample_weight[rows]
        )
        is_pos = problem.y[rows] == pos
        b = 1.0 if C[is_pos].sum() >= C[~is_pos].sum() else -1.0
        empty, d = np.zeros(0, dtype=np.int64), problem.X.shape[1]
        if self.kernel is None and not self.support_vectors:
            return LinearModel(np.zeros(d), b)
        kernel = self.kernel or "linear"
        precomputed = kernel == "precomputed"
        return KernelModel(
            None if precomputed else np.zeros((0, d)), np.zeros(0), b, kernel, empty,
            problem.n_samples if precomputed else rows.size,
            **({} if gamma is None else {"gamma": gamma, "degree": self.degree,
                                         "coef0": self.coef0}),
        )  # fmt: skip

    def _reduction_model(self, models, k: int):
        """The multiclass model over the binary ones (None if one of them has none)."""
        raise NotImplementedError

    def _multiclass_point(self, problem, models):
        """The multiclass variables of the binary models and their Crammer–Singer certificate
        (None where there is none)."""
        return {}, None


@register
class OneVsRest(_Reduction):
    """One-vs-rest: k binary problems "class r against the others"; the prediction is
    ``argmax_r f_r(x)`` (the lecture's confidences). See :class:`_Reduction` for the options.

    For linear models with the problem's own bias the result carries the stacked ``W``
    (``w_r`` of binary problem r) and ``b``, certified on the Crammer–Singer problem: a valid
    but large gap, since the one-vs-rest ``W`` is not the Crammer–Singer optimum.
    """

    name = "ovr"

    def _pairs(self, k):
        return [(r, -1) for r in range(k)]

    def _reduction_model(self, models, k: int) -> OneVsRestModel | None:
        if any(m is None for m in models):
            return None
        return OneVsRestModel(tuple(models), k)

    def _multiclass_point(self, problem, models):
        linear = all(isinstance(m, LinearModel) for m in models)
        if not linear or (self.bias or problem.bias) != problem.bias:
            return super()._multiclass_point(problem, models)
        W = np.vstack([m.w for m in models])
        b = np.array([m.b for m in models])
        if problem.bias == "none":
            b = np.zeros_like(b)
        return {"W": W, "b": b}, problem.certificate(W=W, b=b) if self.stacked_gap else None


@register
class OneVsOne(_Reduction):
    """One-vs-one (all pairs): k(k−1)/2 problems "class i against class j" (i < j) on the
    examples of the two classes; each model votes, the prediction is the class with the most
    votes, ties to the lowest class index (as LIBSVM and scikit-learn's SVC predict; the
    lecture's rule, by summed confidences, is ``OneVsOneModel(..., tie_break="confidence")``).
    No Crammer–Singer certificate (the models have no common W).
    See :class:`_Reduction` for the options."""

    name = "ovo"

    def _pairs(self, k):
        return [(i, j) for i in range(k) for j in range(i + 1, k)]

    def _reduction_model(self, models, k: int) -> OneVsOneModel | None:
        if any(m is None for m in models):
            return None
        return OneVsOneModel(tuple(models), tuple(self._pairs(k)), k)
