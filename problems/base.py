"""Shared types of every problem: the certificate, the exported QP and the Problem base class."""

from __future__ import annotations

import abc
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache, cached_property, lru_cache, partial
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems.rounding import REFINE_GAP_RTOL

#: Relative tolerance of weak duality: a gap below ``-WEAK_DUALITY_RTOL * max(1, |P|)`` means
#: the two points are not what they claim to be (or the kernel is indefinite).
WEAK_DUALITY_RTOL = 1e-9


def relative_gap(gap: float, primal: float) -> float:
    """``gap / max(1, |P|)``, the scale-free gap every stopping rule and test uses."""
    return gap / max(1.0, abs(primal))


@dataclass(frozen=True)
class Certificate:
    """The judgement of a candidate solution, computed by the problem, never by a solver.

    Attributes
    ----------
    primal, dual : float
        ``P`` at a feasible primal point and ``D`` at a feasible dual point.
    gap, rel_gap : float
        ``P - D`` and ``(P - D) / max(1, |P|)``.
    certified : bool
        True when weak duality holds for this problem (convex, PSD kernel) and the gap is
        non-negative up to rounding; the gap then bounds the suboptimality of both points.
    residuals : mapping of str to float
        How far the points handed over were from feasibility before they were repaired
        (e.g. ``"dual_box"``, ``"dual_equality"``, ``"primal_margin"``), and ``"rounding"``
        where the problem bounds its own arithmetic (:attr:`rounding`).
    primal_point : mapping of str to ndarray or float
        The feasible primal variables used for ``primal`` (``w, b`` or ``alpha, b`` or ``W, b``).
    dual_point : ndarray
        The feasible dual variables used for ``dual`` (``alpha`` or ``beta``).
    """

    primal: float
    dual: float
    gap: float
    rel_gap: float
    certified: bool
    residuals: Mapping[str, float] = field(default_factory=dict)
    primal_point: Mapping[str, Any] = field(default_factory=dict, repr=False)
    dual_point: np.ndarray | None = field(default=None, repr=False)

    @property
    def rounding(self) -> float:
        """A bound on ``|computed gap − exact gap|`` from float64 rounding
        (``residuals["rounding"]``, :mod:`~problems.rounding`); 0 where the problem gives none.
        It travels in ``residuals`` so that every record keeps it."""
        return float(self.residuals.get("rounding", 0.0))

    def meets(self, tol: float) -> bool:
        """Whether the certificate bears ``optimal`` at ``tol``: certified, and
        ``(gap + rounding)/max(1, |P|) ≤ tol`` — the exact gap within tol whatever the
        rounding of the arithmetic that computed it."""
        return bool(self.certified and self.gap + self.rounding <= tol * max(1.0, abs(self.primal)))

    def under_rounding_floor(self, tol: float) -> bool:
        """Whether no further iteration can make the certificate meet ``tol``: certified, the
        gap already within the rounding allowance, the allowance above ``tol·max(1, |P|)``,
        and the allowance refined (the relative gap at most
        :data:`~problems.rounding.REFINE_GAP_RTOL`)."""
        floor = self.rounding
        size = max(1.0, abs(self.primal))
        return bool(
            self.certified
            and floor > tol * size
            and self.gap <= floor
            and self.gap <= REFINE_GAP_RTOL * size
        )


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    """The dataclass fields of a problem class, in order (``dataclasses.fields`` rebuilds them
    at every call)."""
    return tuple(f.name for f in fields(cls))


def make_certificate(
    primal: float,
    dual: float,
    *,
    convex: bool = True,
    residuals: Mapping[str, float] | None = None,
    primal_point: Mapping[str, Any] | None = None,
    dual_point: np.ndarray | None = None,
    rounding: float | None = None,
) -> Certificate:
    """Assemble a :class:`Certificate`; ``certified`` needs convexity, finiteness, weak duality.

    ``rounding`` (the problem's bound on the gap's rounding error) goes to
    ``residuals["rounding"]``; a non-finite bound certifies nothing."""
    primal, dual = float(primal), float(dual)
    gap = primal - dual
    finite = math.isfinite(primal)
    rel = relative_gap(gap, primal) if finite else math.inf
    certified = bool(
        convex
        and finite
        and math.isfinite(dual)
        and gap >= -WEAK_DUALITY_RTOL * max(1.0, abs(primal))
    )
    residuals = dict(residuals or {})
    if rounding is not None:
        residuals["rounding"] = rounding = float(rounding)
        certified = certified and math.isfinite(rounding)
    # the frozen dataclass's fields set at once (it has no __post_init__)
    cert = object.__new__(Certificate)
    cert.__dict__.update(
        primal=primal,
        dual=dual,
        gap=gap,
        rel_gap=float(rel),
        certified=certified,
        residuals=residuals,
        primal_point=dict(primal_point or {}),
        dual_point=dual_point,
    )
    return cert


@dataclass(frozen=True)
class QP:
    """A problem exported in OSQP's form: ``min ½ xᵀPx + qᵀx  s.t.  l ≤ Ax ≤ u``.

    ``P`` is the upper triangle in CSC format, ``A`` is CSC; infinite bounds are ``±np.inf``.
    ``objective(x) + offset`` equals the problem's primal objective (``sense="primal"``) or minus
    its dual objective (``sense="dual"``). ``recover(x, y)`` maps a QP solution and OSQP-signed
    multipliers ``y`` (``Px + q + Aᵀy = 0``, ``y < 0`` on active lower bounds) back to the
    problem's variables as keyword arguments of ``Problem.certificate``.
    """

    P: sparse.csc_matrix
    q: np.ndarray
    A: sparse.csc_matrix
    l: np.ndarray
    u: np.ndarray
    recover: Callable[[np.ndarray, np.ndarray], dict[str, Any]] = field(repr=False)
    sense: str = "primal"
    offset: float = 0.0
    #: For a feasibility problem (hard margin): maps an infeasibility certificate of the
    #: constraints (OSQP's ``prim_inf_cert``, sign as OSQP gives it) to the problem's Farkas vector.
    recover_farkas: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)

    @property
    def n_variables(self) -> int:
        return self.P.shape[0]

    @property
    def n_constraints(self) -> int:
        return self.A.shape[0]

    def objective(self, x: np.ndarray) -> float:
        """``½ xᵀPx + qᵀx`` with ``P`` stored as its upper triangle."""
        Px = self.P @ x + self.P.T @ x - self.P.diagonal() * x
        return float(0.5 * x @ Px + self.q @ x)


def _hash_array(h, a) -> None:
    if a is None:
        h.update(b"none")
    elif sparse.issparse(a):
        a = sparse.csr_matrix(a)
        h.update(f"csr{a.shape}".encode())
        for part in (a.indptr, a.indices, a.data):
            h.update(_byte_view(part))
    else:
        a = np.ascontiguousarray(a)
        h.update(f"{_dtype_text(a.dtype)}{a.shape}".encode())
        h.update(_byte_view(a))


def _key_of(kind: str, arrays, params) -> str:
    """SHA-256 of the kind, each ``(name, array)`` (its dtype, shape and bytes) and the
    parameters as sorted JSON: :attr:`Problem.key`, 24 hexadecimal digits."""
    h = hashlib.sha256(kind.encode())
    for name, value in arrays:
        h.update(name.encode())
        _hash_array(h, value)
    h.update(json.dumps(params, sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


@lru_cache(maxsize=64)
def _dtype_text(dtype: np.dtype) -> str:
    """``str(dtype)``, remembered: NumPy builds the text anew on every call (10 µs, a large part
    of a small problem's key)."""
    return str(dtype)


def _byte_view(a: np.ndarray) -> memoryview:
    """The bytes of ``a`` (C order) as a view, not a copy: what ``a.tobytes()`` holds."""
    a = np.ascontiguousarray(a)
    return memoryview(a.reshape(-1).view(np.uint8)) if a.size else memoryview(b"")


class Problem(abc.ABC):
    """Base of every problem: an immutable description plus the mathematics that judges solutions.

    Subclasses are frozen dataclasses whose constructor validates the input once.
    """

    #: Short stable name used by the registry, the CLI and the results store.
    kind: ClassVar[str]
    #: Whether weak duality holds (False for indefinite kernels).
    convex: bool = True

    @property
    @abc.abstractmethod
    def n_samples(self) -> int: ...

    @property
    @abc.abstractmethod
    def n_features(self) -> int: ...

    @abc.abstractmethod
    def certificate(self, **variables) -> Certificate:
        """Judge a candidate: build any missing side, repair feasibility, return the gap."""

    @abc.abstractmethod
    def to_qp(self) -> QP:
        """Export the problem as a :class:`QP` in OSQP's form with the map back."""

    def model_from(self, variables: Mapping[str, Any]) -> Any:
        """The self-contained predictive model of a solution's variables (``w, b``; ``alpha,
        b``; ``W, b``): an object of :mod:`svmbench.problems.models`, or None where there is
        none (this default), where the variables it needs are missing, or where they are not
        finite. ``Solver._result`` fills ``SolveResult.model`` with it."""
        return None

    def params(self) -> dict[str, Any]:
        """The scalar parameters of the problem (everything but the arrays)."""
        out = {}
        for name in _field_names(type(self)):
            v = getattr(self, name)
            if isinstance(v, np.ndarray) or sparse.issparse(v):
                continue
            out[name] = v
        return out

    @cached_property
    def key(self) -> str:
        """Stable hash of the data bytes and parameters: the cache key of reference optima."""
        return self.deferred_key()()

    def deferred_key(self) -> Callable[[], str]:
        """A function of no arguments returning :attr:`key`, which holds the hashed arrays and
        parameters only (not the problem and its caches, a Gram matrix say): a record asks it
        when its ``problem_key`` is first read, so that a fit whose key nobody reads hashes
        nothing."""
        known = self.__dict__.get("key")
        if known is not None:
            return lambda: known
        arrays, params = [], {}
        for name in _field_names(type(self)):  # one pass: the arrays, and params()'s values
            v = getattr(self, name)
            array = isinstance(v, np.ndarray) or sparse.issparse(v)
            if array or v is None:
                arrays.append((name, v))
            if not array:
                params[name] = v
        return partial(_key_of, self.kind, tuple(arrays), params)

    def describe(self) -> str:
        """One line naming the problem and its parameters."""
        p = ", ".join(f"{k}={v}" for k, v in self.params().items())
        return f"{self.kind}(n={self.n_samples}, d={self.n_features}, {p})"
