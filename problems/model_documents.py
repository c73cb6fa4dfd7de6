"""The model document of a model file, checked against its schema before any array is read, and
the model built from it once its arrays are read and checked.

A model document (docs/ARCHITECTURE.md §7) is JSON: ``{"kind": ..., "arrays": {<field>:
"dense" | {"csr": [rows, cols]}}, <parameters>, "models": [...]}``. :func:`check_document` checks
one against the schema of its kind, every entry for its JSON type and range:

kind                   fields
=====================  =================================================================
and returns the arrays it names (:class:`ArraySpec`: the member, float numbers or integer
indices, the dimensions as symbols that the arrays of one model share), which
:func:`check_shapes` compares with the members' headers before anything is read. A field of the
wrong type, out of its range, unknown or missing is a :class:`DamagedModelFile` naming it;
an unknown kind a ``ValueError``. :func:`build_model` then refuses NaN and infinite numbers and a
CSR matrix whose structure is broken (``indptr`` starting at 0, non-decreasing, ending at the
number of non-zeros; column indices in range; canonicalized) before the model classes, and any
jitted code after them, see the arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse

from svmbench.problems.kernels import KERNELS
from svmbench.problems.linear_regression_model import LinearRegressionModel
from svmbench.problems.logistic_model import LogisticModel, MultinomialLogisticModel
from svmbench.problems.model_archive import MAX_DIMENSION, DamagedModelFile, NpyHeader
from svmbench.problems.models import (
    ChainModel,
    CrammerSingerModel,
    KernelModel,
    LinearModel,
    Model,
    OneVsOneModel,
    OneVsRestModel,
)
from svmbench.problems.regression_model import KernelRegressionModel

__all__ = [
    "FLOAT",
    "INDEX",
    "KINDS",
    "MAX_DEGREE",
    "ArraySpec",
    "Layout",
    "build_model",
    "check_document",
    "check_shapes",
]

#: The largest polynomial degree (a prediction multiplies ``degree`` times per kernel value).
MAX_DEGREE = 10_000
FLOAT, INDEX = "float", "index"
KINDS: dict[str, type[Model]] = {
    cls.kind: cls
    for cls in (
        LinearModel, KernelModel, CrammerSingerModel, OneVsRestModel, OneVsOneModel, ChainModel,
        LogisticModel, KernelRegressionModel, MultinomialLogisticModel, LinearRegressionModel,
    )
}  # fmt: skip


class ArraySpec(NamedTuple):
    """An array a document names: its member, its role (:data:`FLOAT` numbers or
    :data:`INDEX` integers) and its dimensions (symbols shared within one model, or numbers)."""

    member: str
    role: str
    dims: tuple[str | int, ...]


class Layout(NamedTuple):
    """What a document says of its arrays: the arrays, the sizes it states itself (the shape of
    a CSR matrix) by symbol, and the numbers a prediction builds beyond the arrays, as products
    of sizes (a CSR matrix's width: the linear kernel's ``w``; q² for a chain's Viterbi steps),
    which count in the memory budget."""

    arrays: list[ArraySpec]
    sizes: dict[str, int]
    implied: list[tuple[str | int, ...]]


# ---- the JSON types of the parameters ----------------------------------------------------------
def _real(low: float | None = None) -> Callable[[str, Any], float]:
    def check(name, value):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DamagedModelFile(f"{name} must be a real number, got {_shown(value)}")
        value = float(value)
        if not math.isfinite(value) or (low is not None and value < low):
            bound = "a finite number" if low is None else f"a finite number >= {low:g}"
            raise DamagedModelFile(f"{name} must be {bound}, got {value}")
        return value

    return check


def _integer(low: int, high: int) -> Callable[[str, Any], int]:
    def check(name, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise DamagedModelFile(f"{name} must be an integer, got {_shown(value)}")
        if not low <= value <= high:
            raise DamagedModelFile(f"{name} must be an integer in [{low}, {high}], got {value}")
        return value

    return check


def _option(options) -> Callable[[str, Any], str]:
    def check(name, value):
        if not isinstance(value, str) or value not in options:
            raise DamagedModelFile(f"{name} must be one of {list(options)}, got {_shown(value)}")
        return value

    return check


def _shown(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'…' if len(text) > 60 else ''}"


_REQUIRED = object()
#: kind → {parameter: (check, default)}
_SCALARS: dict[str, dict[str, tuple[Callable, Any]]] = {
    "linear": {"b": (_real(), 0.0)},
    "logistic": {"b": (_real(), 0.0)},
    "linear_regression": {"b": (_real(), 0.0)},
    "kernel": {
        "b": (_real(), _REQUIRED),
        "kernel": (_option(KERNELS), _REQUIRED),
        "n_train": (_integer(0, MAX_DIMENSION), _REQUIRED),
        "gamma": (_real(0.0), 1.0),
        "degree": (_integer(1, MAX_DEGREE), 3),
        "coef0": (_real(), 0.0),
    },
    "crammer_singer": {},
    "multinomial_logistic": {},
    "ovr": {"n_classes": (_integer(2, MAX_DIMENSION), _REQUIRED)},
    "ovo": {
        "n_classes": (_integer(2, MAX_DIMENSION), _REQUIRED),
        "tie_break": (_option(("first", "confidence")), "first"),
    },
    "chain": {},
}
#: kind → {array: (role, dims as symbols, optional)}
_ARRAYS: dict[str, dict[str, tuple[str, tuple[str, ...], bool]]] = {
    "linear": {"w": (FLOAT, ("d",), False)},
    "logistic": {"w": (FLOAT, ("d",), False)},
    "linear_regression": {"w": (FLOAT, ("d",), False)},
    "kernel": {
        "support_vectors": (FLOAT, ("n", "d"), True),
        "dual_coef": (FLOAT, ("n",), False),
        "support": (INDEX, ("n",), False),
    },
    "crammer_singer": {"W": (FLOAT, ("k", "d"), False), "b": (FLOAT, ("k",), False)},
    "multinomial_logistic": {"W": (FLOAT, ("k", "d"), False), "b": (FLOAT, ("k",), False)},
    "ovr": {},
    "ovo": {},
    "chain": {"E": (FLOAT, ("q", "d"), False), "T": (FLOAT, ("q", "q"), True)},
}
_SCALARS["kernel_regression"] = _SCALARS["kernel"]
_ARRAYS["kernel_regression"] = _ARRAYS["kernel"]
#: The kinds of a kernel expansion (support vectors dense, CSR, or none when precomputed).
_EXPANSIONS = ("kernel", "kernel_regression")
_BINARY = ("linear", "kernel", "logistic")


def check_document(doc, prefix: str = "m", *, binary_only: bool = False) -> Layout:
    """The arrays ``doc`` names (members under ``prefix``) and the sizes it states, after
    checking the document against the schema of its kind (see the module docstring).

    Raises
    ------
    ValueError
        For an unknown kind.
    DamagedModelFile
        Naming the entry that is missing, unknown, of the wrong type or out of its range.
    """
    if not isinstance(doc, dict):
        raise DamagedModelFile(f"a model entry is a {type(doc).__name__}, not an object")
    kind = doc.get("kind")
    if kind is None:
        raise DamagedModelFile("a model entry has no kind")
    if not isinstance(kind, str) or kind not in KINDS:
        shown = repr(kind)[:60] if isinstance(kind, str) else _shown(kind)
        raise ValueError(f"unknown model kind {shown}; known kinds: {sorted(KINDS)}")
    if binary_only and kind not in _BINARY:
        raise DamagedModelFile(f"a reduction holds binary models (linear, kernel), not {kind!r}")
    arrays, scalars = _ARRAYS[kind], _SCALARS[kind]
    reductions = ("models", "pairs") if kind == "ovo" else ("models",) if kind == "ovr" else ()
    known = {"kind", "arrays", *scalars, *reductions, *(a for a, s in arrays.items() if s[2])}
    for key in doc:
        if key not in known:
            raise DamagedModelFile(f"the {kind} model has no entry {_shown(key)}")
    for name, (check, default) in scalars.items():
        if name in doc:
            check(f"the {kind} model's {name}", doc[name])
        elif default is _REQUIRED:
            raise DamagedModelFile(f"the {kind} model lacks its {name}")
    entries = doc.get("arrays", {})
    if not isinstance(entries, dict):
        raise DamagedModelFile(f"the arrays of the {kind} model are not an object")
    layout = Layout([], {}, [])
    for name in entries:
        if name not in arrays:
            raise DamagedModelFile(f"the {kind} model has no array {_shown(name)}")
    for name, (role, dims, optional) in arrays.items():
        symbols = tuple(f"{prefix}:{s}" for s in dims)
        if name in entries and name in doc:
            raise DamagedModelFile(f"the {kind} model's {name} is both an array and null")
        if name not in entries:
            if not optional:
                raise DamagedModelFile(f"the {kind} model lacks the array {name}")
            if doc.get(name) is not None:
                raise DamagedModelFile(f"the {kind} model's {name} must be an array or null")
            continue
        _add_arrays(layout, kind, name, entries[name], f"{prefix}.{name}", role, symbols)
    if kind in _EXPANSIONS:
        precomputed = doc["kernel"] == "precomputed"
        if precomputed == ("support_vectors" in entries):
            need = "no" if precomputed else "their"
            raise DamagedModelFile(f"a {doc['kernel']} kernel model takes {need} support vectors")
    if kind == "chain":
        layout.implied.append((f"{prefix}:q", f"{prefix}:q"))
    if reductions:
        _add_reduction(layout, kind, doc, prefix)
    return layout


def _add_arrays(layout: Layout, kind, name, entry, member, role, symbols) -> None:
    if entry == "dense":
        layout.arrays.append(ArraySpec(member, role, symbols))
        return
    csr = entry.get("csr") if isinstance(entry, dict) and len(entry) == 1 else None
    if not (kind in _EXPANSIONS and name == "support_vectors" and isinstance(csr, list)):
        raise DamagedModelFile(f"the entry of the {kind} model's array {name} is {_shown(entry)}")
    if len(csr) != 2:
        raise DamagedModelFile(f"the CSR shape of {name} must be [rows, columns], got {csr}")
    rows, cols = (_integer(0, MAX_DIMENSION)(f"the CSR shape of {name}", v) for v in csr)
    nnz = f"{member}:nnz"
    layout.arrays.extend(
        [
            ArraySpec(f"{member}.data", FLOAT, (nnz,)),
            ArraySpec(f"{member}.indices", INDEX, (nnz,)),
            ArraySpec(f"{member}.indptr", INDEX, (rows + 1,)),
        ]
    )
    layout.sizes.update({symbols[0]: rows, symbols[1]: cols})
    layout.implied.append((cols,))


def _add_reduction(layout: Layout, kind: str, doc: dict, prefix: str) -> None:
    models, k = doc.get("models"), doc["n_classes"]
    if not isinstance(models, list):
        raise DamagedModelFile(f"the {kind} model lists no binary models")
    if kind == "ovr" and len(models) != k:
        raise DamagedModelFile(f"the ovr model of {k} classes holds {len(models)} binary models")
    if kind == "ovo":
        pairs = doc.get("pairs")
        if not isinstance(pairs, list) or len(pairs) != len(models):
            raise DamagedModelFile("the ovo model needs one pair of classes per binary model")
        seen: set[tuple[int, int]] = set()
        for pair in pairs:
            if not (
                isinstance(pair, list)
                and len(pair) == 2
                and all(isinstance(c, int) and not isinstance(c, bool) for c in pair)
                and all(0 <= c < k for c in pair)
                and pair[0] != pair[1]
            ):
                raise DamagedModelFile(
                    f"the ovo model's pairs must be pairs of distinct classes in [0, {k}), got "
                    f"{_shown(pair)}"
                )
            key = (min(pair), max(pair))
            if key in seen:
                raise DamagedModelFile(f"the ovo model has the pair {key} twice")
            seen.add(key)
        covered = len({c for pair in seen for c in pair})
        if covered != k:
            raise DamagedModelFile(
                f"the ovo model's pairs tell {covered} of its n_classes = {k} classes apart"
            )
    for i, nested in enumerate(models):
        inner = check_document(nested, f"{prefix}.{i}", binary_only=True)
        layout.arrays.extend(inner.arrays)
        layout.sizes.update(inner.sizes)
        layout.implied.extend(inner.implied)


def check_shapes(layout: Layout, headers: Mapping[str, NpyHeader], max_bytes: int) -> None:
    """Every array of ``layout`` present in ``headers`` with its role's dtype and the dimensions
    of its symbols (a symbol takes one value, the one the document states if it does), no other
    member, and the arrays with what a prediction builds within ``max_bytes`` as float64 (an
    empty array counts its largest dimension: a (10⁶, 0) array still makes 10⁶ scores);
    :class:`DamagedModelFile` naming the first that is not."""
    values = dict(layout.sizes)
    named = set()
    for spec in layout.arrays:
        named.add(spec.member)
        header = headers.get(spec.member)
        if header is None:
            raise DamagedModelFile(f"it lacks the array {spec.member}")
        kinds = "f" if spec.role == FLOAT else "iu"
        if header.dtype.kind not in kinds:
            want = "floating-point numbers" if spec.role == FLOAT else "integers"
            raise DamagedModelFile(f"the array {spec.member} holds {header.dtype}, not {want}")
        if len(header.shape) != len(spec.dims):
            raise DamagedModelFile(
                f"the array {spec.member} has shape {header.shape}, not {len(spec.dims)}-D"
            )
        for dim, value in zip(spec.dims, header.shape, strict=True):
            if isinstance(dim, int):
                if value != dim:
                    raise DamagedModelFile(
                        f"the array {spec.member} has shape {header.shape}; its metadata says "
                        f"{dim} entries"
                    )
            else:
                _bind(values, dim, value, spec.member)
    for member in headers:
        if member not in named:
            raise DamagedModelFile(f"it holds the array {member[:80]}, which its metadata lacks")
    numbers = sum(max(h.size, *h.shape, 1) for h in headers.values())
    numbers += sum(math.prod(values.get(d, 0) if isinstance(d, str) else d for d in product)
                   for product in layout.implied)  # fmt: skip
    if 8 * numbers > max_bytes:
        raise DamagedModelFile(
            f"its model holds or builds {numbers} numbers ({8 * numbers} bytes as float64), over "
            f"the memory budget of {max_bytes} bytes"
        )


def _bind(values: dict[str, int], symbol: str, value: int, member: str) -> None:
    if values.setdefault(symbol, value) != value:
        model, _, name = symbol.rpartition(":")
        raise DamagedModelFile(
            f"the arrays of model {model} disagree on {name}: {values[symbol]} and {value} "
            f"(at {member})"
        )


# ---- building ----------------------------------------------------------------------------------
def build_model(doc: dict, arrays: Mapping[str, np.ndarray], prefix: str = "m") -> Model:
    """The model of a document that :func:`check_document` accepted and of its arrays, whose
    shapes :func:`check_shapes` accepted: numbers finite, CSR structure sound, then the model
    class's own checks (their errors become :class:`DamagedModelFile`)."""
    kind = doc["kind"]
    values: dict[str, Any] = {}
    for name in _SCALARS[kind]:
        if name in doc:
            values[name] = doc[name]
    entries = doc.get("arrays", {})
    for name in _ARRAYS[kind]:
        member = f"{prefix}.{name}"
        if name not in entries:
            if name in doc:
                values[name] = None
            continue
        if entries[name] == "dense":
            values[name] = _finite(member, arrays[member])
        else:
            values[name] = _csr(member, arrays, tuple(entries[name]["csr"]))
    if kind in ("ovr", "ovo"):
        nested = doc["models"]
        values["models"] = tuple(
            build_model(m, arrays, f"{prefix}.{i}") for i, m in enumerate(nested)
        )
    if kind == "ovo":
        values["pairs"] = tuple(tuple(p) for p in doc["pairs"])
    try:
        return KINDS[kind](**values)
    except (TypeError, ValueError) as exc:
        raise DamagedModelFile(f"the {kind} model at {prefix} is inconsistent: {exc}") from None


def _finite(member: str, array: np.ndarray) -> np.ndarray:
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise DamagedModelFile(f"the array {member} holds NaN or infinite numbers")
    return array


def _csr(member: str, arrays: Mapping[str, np.ndarray], shape: tuple[int, int]):
    data = _finite(f"{member}.data", arrays[f"{member}.data"])
    indices, indptr = arrays[f"{member}.indices"], arrays[f"{member}.indptr"]
    rows, cols = shape
    if indptr.min() < 0 or indptr.max() > data.size:  # also unsigned ones past int64
        indptr = np.array([1])
    indptr = indptr.astype(np.int64)
    if indptr[0] != 0 or indptr[-1] != data.size or np.any(np.diff(indptr) < 0):
        raise DamagedModelFile(
            f"the CSR matrix {member} has a broken indptr (it must start at 0, never decrease "
            f"and end at its {data.size} non-zeros)"
        )
    if indices.size and (indices.min() < 0 or indices.max() >= cols):
        raise DamagedModelFile(f"the CSR matrix {member} has column indices outside [0, {cols})")
    index = np.int32 if max(cols, data.size) < 2**31 else np.int64
    matrix = sparse.csr_matrix(
        (data.astype(np.float64), indices.astype(index), indptr.astype(index)), shape=(rows, cols)
    )
    matrix.sum_duplicates()  # canonical: sorted, no duplicates
    return matrix
