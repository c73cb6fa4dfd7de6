"""What the two reference solvers (OSQP, Clarabel) share, and the cache of reference optima.

A reference exports the problem with ``problem.to_qp()``, hands the QP to an external solver,
maps the solution back with ``qp.recover`` and lets the problem certify it. ``tol`` is, as for
every solver, the certified relative gap asked for; the library runs to its own tolerance
``eps`` (tight by default). A success the library claims is ``optimal`` only if the problem
certifies it at ``tol`` (else ``not_certified``); a claimed
infeasibility only if its Farkas vector passes the problem's check.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import numpy as np

from svmbench.problems import (
    HardMarginPrimal,
    KernelDual,
    MulticlassHinge,
    NuSVCDual,
    NuSVRDual,
    OneClassDual,
    SoftMarginDual,
    SoftMarginPrimal,
    SVRPrimal,
)
from svmbench.problems.base import Problem
from svmbench.problems.svr import SVRDual
from svmbench.problems.validation import check_real
from svmbench.solvers.base import Solver, SolveResult, Status
from svmbench.solvers.clock import Clock
from svmbench.solvers.time_budget import kernel_matrix_seconds, refused_outcome, stage_refusal


def _psd_kernel_only(problem: KernelDual) -> str | None:
    if not problem.convex:
        return (
            f"the {problem.kernel} kernel matrix is indefinite (smallest eigenvalue "
            f"{problem.min_eigenvalue:.3g}): a convex QP solver cannot solve it"
        )
    if not problem.gram_fits_in_memory:
        return "the dense kernel QP exceeds the Gram memory limit"
    return None


ALL_PROBLEMS = {
    HardMarginPrimal: {},
    SoftMarginPrimal: {},
    SoftMarginDual: {},
    KernelDual: {"kernel": _psd_kernel_only},
    MulticlassHinge: {},
    SVRDual: {"kernel": _psd_kernel_only},
    SVRPrimal: {},
    NuSVCDual: {"kernel": _psd_kernel_only},
    NuSVRDual: {"kernel": _psd_kernel_only},
    OneClassDual: {"kernel": _psd_kernel_only},
}


class QPReference(Solver):
    """Base of the references: solve ``problem.to_qp()`` and certify the recovered point.

    Parameters
    ----------
    tol : float, default=1e-6
        The certified relative gap asked for: a success the library claims is ``optimal`` only
        if the problem certifies it with ``rel_gap ≤ tol``.
    eps : float or None, default=None
        The library's own tolerance; None: the reference's fixed tight ``default_eps``. The
        exact finish then makes the certified gap of a binary dual's optimum about 1e-14
        whatever ``eps``; tightening ``eps`` with ``tol`` would only stall a first-order library
        (OSQP at 1e-10 runs to ``max_iter`` where, polished at 1e-7, it is exact).
    """

    supported = ALL_PROBLEMS
    default_max_iter = 200_000
    reports_progress = False
    #: The library's tolerance when ``eps`` is None.
    default_eps: ClassVar[float] = 1e-10
    former_names: ClassVar[Mapping[str, str]] = {"tol": "eps", "gap_check": "tol"}

    def __init__(self, *, eps: float | None = None, **common):
        super().__init__(**common)
        self.eps = self.default_eps if eps is None else check_real("eps", eps, low=0.0)

    @classmethod
    def memory_estimate(cls, problem: Problem, **_) -> float:
        """The exported QP with the library's copies and factor, from measured peak RSS with a
        margin (docs/measurements.md, "Reference solvers"): ``c·8n²`` bytes for a kernel dual,
        c = 12 for Clarabel, 8 for OSQP, 32 for CVXPY (it factors K first); for the linear forms
        ``32·8·(nnz(X) + n)`` bytes per class."""
        n, X = problem.n_samples, problem.X
        if isinstance(problem, KernelDual | SVRDual):
            m = 2 * n if isinstance(problem, SVRDual) else n  # ε-SVR's QP has 2n variables
            return {"clarabel": 12, "osqp": 8}.get(cls.name, 32) * 8.0 * m * m
        nnz = X.nnz if hasattr(X, "nnz") else X.size
        k = int(problem.y.max()) + 1 if isinstance(problem, MulticlassHinge) else 1
        return 32 * 8.0 * (nnz + n) * k

    def _setup_seconds(self, problem: Problem) -> tuple[float, str] | None:
        """Estimated seconds of the library's set-up on the exported QP, and how they were
        estimated (None: not estimated; the stages are then only checked against the limit)."""
        return None

    def _bounded_export(self, problem: Problem, clock: Clock):
        """``(problem.to_qp(), None)`` when the export and the library's set-up can end within
        the time limit (:func:`~solvers.time_budget.stage_refusal`), else ``(None, outcome)``:
        the record of a solve stopped at the limit, no point. The limit is checked before the
        export (against both estimates) and after it (against the set-up's)."""
        limit = self.time_limit
        if not math.isfinite(limit):
            return problem.to_qp(), None
        export, setup = kernel_matrix_seconds(problem, as_csc=True), self._setup_seconds(problem)
        estimates = [e for e in (export, setup) if e is not None]
        seconds = sum(e[0] for e in estimates) if estimates else None
        how = "; ".join(e[1] for e in estimates)
        stage = f"exporting the QP and {self.name}'s set-up"
        refusal = stage_refusal(clock, limit, stage, seconds, how)
        if refusal is None:
            qp = problem.to_qp()
            stage = f"{self.name}'s set-up"
            refusal = stage_refusal(clock, limit, stage, *(setup or (None, "")))
            if refusal is None:
                return qp, None
        return None, refused_outcome(refusal, problem)

    def _judge(self, problem, status: Status, variables, farkas, raw: str):
        """Re-check a claimed optimum or infeasibility with the problem's own certificate.

        A claimed optimum keeps its status here, its certificate drawn: ``Solver.solve``
        finishes it and makes it ``not_certified`` unless the problem certifies it at ``tol``,
        as for any method whose own rule held."""
        cert = None
        message = f"{self.name} status: {raw}"
        if status is Status.OPTIMAL:
            cert = problem.certificate(**variables)
        elif status is Status.INFEASIBLE:
            if not isinstance(
                problem, HardMarginPrimal
            ) or not problem.is_infeasibility_certificate(farkas):
                residuals = problem.check_farkas(farkas) if farkas is not None else {}
                status = Status.NUMERICAL_ERROR
                message += f", but its infeasibility certificate fails the check: {residuals}"
        return status, cert, message


#: Bumped whenever the cached layout of a ``SolveResult`` changes (a cached reference of another
#: format is never read back).
CACHE_FORMAT = 3


class ReferenceCache:
    """Reference results keyed by ``(problem.key, solver options)``: in memory, and on disk when
    a directory is given (``SVMBENCH_CACHE_DIR``), so a reference is never solved twice."""

    def __init__(self, directory: str | os.PathLike | None = None):
        self.directory = Path(directory) if directory else None
        self._memory: dict[str, SolveResult] = {}

    def _key(self, problem: Problem, solver: Solver) -> str:
        opts = ",".join(f"{k}={v!r}" for k, v in sorted(solver.options().items()))
        digest = hashlib.sha256(opts.encode()).hexdigest()[:12]
        return f"v{CACHE_FORMAT}-{problem.key}-{solver.name}-{digest}"

    def get(self, problem: Problem, solver: Solver) -> SolveResult:
        key = self._key(problem, solver)
        if key in self._memory:
            return self._memory[key]
        path = self.directory / f"{key}.npz" if self.directory else None
        result = _read_result(path) if path is not None and path.is_file() else None
        if result is None:
            result = solver.solve(problem)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                _write_result(path, result)
        self._memory[key] = result
        return result


#: The scalar fields of a cached result (JSON); the arrays are ``.npy`` members, the model a
#: model file beside it (svmbench's format, read by its checked reader). Nothing is pickled.
_SCALARS = (
    "solver", "problem", "problem_key", "primal", "dual", "gap", "rel_gap", "certified",
    "iterations", "iteration_unit", "solve_time", "compile_time", "wall_time", "certify_time",
    "message",
)  # fmt: skip
_ARRAYS = ("w", "alpha", "W", "beta", "farkas")
#: A cache file larger than this is not read (it is solved again).
MAX_CACHE_BYTES = 1 << 30


def _write_result(path: Path, result: SolveResult) -> None:
    """``result`` as an ``.npz`` of arrays and a JSON document, written beside and renamed into
    place; its model, when it has one the model format holds, as ``<path>.model``."""
    from svmbench.problems.model_files import save_model

    doc = {name: getattr(result, name) for name in _SCALARS}
    doc.update(
        status=result.status.value, residuals={k: float(v) for k, v in result.residuals.items()}
    )
    arrays = {n: np.asarray(getattr(result, n), dtype=np.float64) for n in _ARRAYS
              if getattr(result, n) is not None}  # fmt: skip
    b = result.b
    if isinstance(b, np.ndarray):
        arrays["b"] = np.asarray(b, dtype=np.float64)
    else:
        doc["b"] = None if b is None else float(b)
    for name in ("qp_x", "qp_y"):  # a warm start's vectors
        if name in result.info:
            arrays[name] = np.asarray(result.info[name], dtype=np.float64)
    arrays["doc"] = np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        np.savez(fh, **arrays)
    os.replace(tmp, path)
    if result.model is not None:
        with contextlib.suppress(TypeError, ValueError):  # a model the format does not hold
            save_model(result.model, path.with_name(path.name + ".model"))


def _read_result(path: Path) -> SolveResult | None:
    """The result written by :func:`_write_result`, or None for a file that is not one (too
    large, damaged, of another layout): the reference is then solved again. Never unpickles."""
    from svmbench.problems.model_files import load_model

    try:
        if path.stat().st_size > MAX_CACHE_BYTES:
            return None
        with np.load(path, allow_pickle=False) as archive:
            doc = json.loads(bytes(archive["doc"]).decode())
            arrays = {n: archive[n] for n in archive.files if n != "doc"}
        fields = {name: doc[name] for name in _SCALARS}
        status = Status(doc["status"])
        residuals = {str(k): float(v) for k, v in dict(doc["residuals"]).items()}
        b = arrays.pop("b", None) if "b" in arrays else doc.get("b")
        info = {name: arrays.pop(name) for name in ("qp_x", "qp_y") if name in arrays}
        model_path = path.with_name(path.name + ".model")
        model = load_model(model_path) if model_path.is_file() else None
        return SolveResult(
            **fields, status=status, residuals=residuals, b=b, info=info, model=model,
            **{n: arrays.get(n) for n in _ARRAYS},
        )  # fmt: skip
    except (OSError, ValueError, TypeError, KeyError, json.JSONDecodeError, EOFError):
        return None


_DEFAULT_CACHE = ReferenceCache(os.environ.get("SVMBENCH_CACHE_DIR") or None)


def reference_solution(problem: Problem, solver: str = "clarabel", **options) -> SolveResult:
    """The reference optimum of ``problem`` by ``solver`` (``"clarabel"`` or ``"osqp"``), cached.

    Raises ``RuntimeError`` when the reference does not reach a certified optimum (or, for the
    hard margin, a checked infeasibility certificate).
    """
    from svmbench.solvers import registry

    result = _DEFAULT_CACHE.get(problem, registry.get(solver, **options))
    if result.status not in (Status.OPTIMAL, Status.INFEASIBLE) and solver == "clarabel":
        # Clarabel can stop on InsufficientProgress on a rank-deficient kernel at large C (a
        # 4-point polynomial kernel at C = 1e3, found by the property tests): OSQP, polished,
        # then stands in, certified by the same problem
        osqp = registry.get("osqp", tol=options.get("tol", 1e-6), eps=1e-9)
        fallback = _DEFAULT_CACHE.get(problem, osqp)
        if fallback.status in (Status.OPTIMAL, Status.INFEASIBLE):
            return fallback
    if result.status not in (Status.OPTIMAL, Status.INFEASIBLE):
        raise RuntimeError(
            f"reference {solver} failed on {problem.describe()}: {result.status.value} "
            f"({result.message})"
        )
    return result
