"""Data sets by name: the spec language (:func:`load`, :func:`describe`, :func:`estimate_bytes`),
its registry :data:`DATASETS`, and :func:`prepare`.

Every data set function returns a :class:`~svmbench.problems.dataset_record.Dataset` whose ``spec``
string reproduces it exactly through :func:`load`: the seeded generators of
:mod:`~svmbench.problems.synthetic` (``gaussian``, ``quadrant``, ``xor``, ``circles``,
``blobs``; ``outliers`` for the one-class SVM), scikit-learn's sets of
:mod:`~svmbench.problems.sklearn_sets` (``iris``, ``wine``, ``digits``, ``breast_cancer``) and
:func:`~svmbench.problems.libsvm_files.libsvm`, which reads an svmlight/LIBSVM file, and the
regression sets of :mod:`~svmbench.problems.regression_sets`
(``diabetes``, ``regression``, ``friedman1``, ``friedman2``, ``friedman3``: real targets,
``task="regression"``, subsampled and split uniformly). The registry holds them, so they are
also reachable here (``datasets.gaussian(...)``). Binary tasks have float64 labels in {-1, +1};
multiclass tasks have int64 labels in 0..k-1; regressions finite float64 targets.

Post-processing
---------------
:func:`prepare` (and the spec keys ``n``, ``split``, ``seed``, ``sparse``, ``dense``) subsamples
(stratified), splits off a stratified test set and converts between dense and CSR, in that order.
Where a generator has its own ``n``, ``seed`` or ``dense`` parameter, the spec key means the
generator's parameter; the split then uses the generator's seed.

Spec strings
------------
``name`` or ``name:key=value,key=value``, e.g. ``gaussian:n=2000,d=20,sep=1.5,seed=0`` or
``breast_cancer:n=200,seed=1``. Values are converted to the type of the parameter (integers, reals,
booleans written true/false/yes/no/1/0, strings). String values cannot contain commas.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import typing
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from svmbench.problems.dataset_record import Dataset, check_bool, check_seed, join_spec
from svmbench.problems.libsvm_files import BYTES_PER_FILE_BYTE, libsvm
from svmbench.problems.regression_sets import diabetes, friedman1, friedman2, friedman3, regression
from svmbench.problems.sklearn_sets import breast_cancer, digits, iris, wine
from svmbench.problems.splits import allocate, stratified_choice, to_csr, to_dense
from svmbench.problems.synthetic import blobs, circles, gaussian, outliers, quadrant, xor
from svmbench.problems.untrusted import machine_memory
from svmbench.problems.validation import check_int, check_real

__all__ = [
    "DATASETS",
    "DatasetInfo",
    "describe",
    "estimate_bytes",
    "load",
    "prepare",
]


# --------------------------------------------------------------------------------------------------
# Post-processing: subsample, split, format
# --------------------------------------------------------------------------------------------------


def prepare(
    dataset: Dataset,
    *,
    n: int | None = None,
    split: float | None = None,
    seed: int | None = None,
    sparse: bool = False,
    dense: bool = False,
) -> Dataset:
    """Subsample, split and convert a data set; the returned ``spec`` records what was done.

    The steps run in this order: subsample to ``n`` rows, split off a test set, convert ``X``
    (and ``X_test``). Subsample and split keep the rows in their original relative order.

    Parameters
    ----------
    dataset : Dataset
        The input; it is not modified.
    n : int, default=None
        Keep ``n`` rows drawn without replacement, stratified: each class gets a share
        proportional to its size (largest remainders) and at least one row. Not available for
        generators that take ``n`` themselves (ask them for ``n`` points instead).
    split : float in (0, 1), default=None
        Fraction of rows moved to ``X_test``/``y_test``: ``ceil(split * n_samples)`` rows,
        stratified, with every class present in both parts.
    seed : int, default=None
        Seed of the subsample and split; default: the generator's seed, or 0 for sets without
        one, or the seed of an earlier subsample. A spec holds one seed, so a generator's data
        set, or one already subsampled, can only be split with the seed it already has. The
        subsample draws from ``np.random.default_rng([seed, 1])`` and the split from
        ``np.random.default_rng([seed, 2])``, streams independent of the generator's, so that
        subsampling then splitting in two calls equals doing both in one.
    sparse : bool, default=False
        Convert ``X`` to a float64 CSR matrix.
    dense : bool, default=False
        Convert ``X`` to a C-contiguous float64 ndarray.

    Returns
    -------
    Dataset
        A new data set; ``dataset`` itself if nothing was asked.

    Raises
    ------
    ValueError
        For ``n`` larger than the set or smaller than its number of classes, a ``split`` outside
        (0, 1) or too small/large to hold every class on both sides, ``sparse`` and ``dense``
        together, or a step that was already applied.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a Dataset, got {type(dataset).__name__}")
    if n is not None:
        n = check_int("n", n, low=1)
    if split is not None:
        split = check_real("split", split, low=0.0, high=1.0)
    if seed is not None:
        seed = check_seed(seed)
    sparse, dense = check_bool("sparse", sparse), check_bool("dense", dense)
    if sparse and dense:
        raise ValueError("sparse and dense cannot both be True")
    if n is None and split is None and not sparse and not dense:
        return dataset

    name, raw = _split_spec(dataset.spec)
    own = _parameters(DATASETS[name].function) if name in DATASETS else {}
    base_seed = int(raw["seed"]) if raw.get("seed", "").isdigit() else 0
    if n is not None or split is not None:
        if dataset.X_test is not None:
            raise ValueError(f"{dataset.spec!r} is already split; subsample or split it only once")
        if seed is None:
            seed = base_seed
        elif seed != base_seed and ("seed" in own or "n" in raw or "split" in raw):
            raise ValueError(
                f"seed must equal the seed={base_seed} already used by {dataset.spec!r} (a spec "
                f"holds one seed), got {seed}"
            )
        raw["seed"] = str(seed)
    X, y, X_test, y_test = dataset.X, dataset.y, dataset.X_test, dataset.y_test
    # a regression is one stratum: its rows are drawn uniformly
    strata = (lambda t: np.zeros(t.shape[0])) if dataset.is_regression else (lambda t: t)

    if n is not None:
        if "n" in own:
            raise ValueError(
                f"n: {name} takes n itself; generate {n} points instead of subsampling"
            )
        if "n" in raw:
            raise ValueError(f"n: {dataset.spec!r} is already subsampled; subsample only once")
        if n > X.shape[0]:
            raise ValueError(f"n must be <= n_samples={X.shape[0]} of {name}, got {n}")
        counts = np.unique(strata(y), return_counts=True)[1]
        if n < counts.size:
            raise ValueError(f"n must be >= the number of classes {counts.size} of {name}, got {n}")
        rng = np.random.default_rng([seed, 1])  # a stream apart from the generator's
        keep = stratified_choice(strata(y), allocate(counts, n, low=1, high=counts), rng)
        X, y = X[keep], y[keep]
        raw["n"] = str(n)

    if split is not None:
        counts = np.unique(strata(y), return_counts=True)[1]
        n_test = math.ceil(split * y.shape[0])
        if counts.min() < 2 or not counts.size <= n_test <= y.shape[0] - counts.size:
            raise ValueError(
                f"split={split!r} cannot put every class of {name} in both parts "
                f"(class sizes {counts.tolist()}, {n_test} test rows); choose another split"
            )
        rng = np.random.default_rng([seed, 2])  # so that n then split == n and split at once
        test = stratified_choice(strata(y), allocate(counts, n_test, low=1, high=counts - 1), rng)
        train = np.setdiff1d(np.arange(y.shape[0]), test, assume_unique=True)
        X, y, X_test, y_test = X[train], y[train], X[test], y[test]
        raw["split"] = repr(split)

    if sparse:
        X, X_test = to_csr(X), to_csr(X_test)
        raw["sparse"] = "true"
        if "dense" in own:
            raw["dense"] = "false"
        else:
            raw.pop("dense", None)
    if dense:
        X, X_test = to_dense(X), to_dense(X_test)
        raw["dense"] = "true"
        raw.pop("sparse", None)
    return Dataset(name, join_spec(name, raw), X, y, dataset.classes, X_test, y_test, dataset.task)


# --------------------------------------------------------------------------------------------------
# Registry and spec strings
# --------------------------------------------------------------------------------------------------


class DatasetInfo(NamedTuple):
    """A registry entry: the function that makes the data set and a one-line description."""

    function: Callable[..., Dataset]
    description: str


DATASETS: dict[str, DatasetInfo] = {
    "gaussian": DatasetInfo(gaussian, "two Gaussian clouds, means ±sep/2·u (dense or sparse)"),
    "quadrant": DatasetInfo(quadrant, "+1 in x1>0,x2>0 and -1 in x1>0,x2<0, label noise"),
    "xor": DatasetInfo(xor, "uniform on [-1,1]², label sign(x1·x2), label noise"),
    "circles": DatasetInfo(circles, "two concentric circles (sklearn make_circles)"),
    "blobs": DatasetInfo(blobs, "k Gaussian blobs, multiclass (sklearn make_blobs)"),
    "iris": DatasetInfo(iris, "Fisher's iris, 150×4, 3 classes"),
    "wine": DatasetInfo(wine, "UCI wine, 178×13, 3 classes"),
    "digits": DatasetInfo(digits, "handwritten digits 8×8, 1797×64, 10 classes or 0-4 vs 5-9"),
    "breast_cancer": DatasetInfo(breast_cancer, "Wisconsin breast cancer, 569×30, binary"),
    "libsvm": DatasetInfo(libsvm, "an svmlight/LIBSVM file (path=...)"),
    "diabetes": DatasetInfo(diabetes, "diabetes progression, 442×10, regression"),
    "regression": DatasetInfo(regression, "y = Xw + noise, regression (sklearn make_regression)"),
    "friedman1": DatasetInfo(friedman1, "Friedman #1 on [0,1]^d (d ≥ 5), regression"),
    "friedman2": DatasetInfo(friedman2, "Friedman #2, 4 features, regression"),
    "friedman3": DatasetInfo(friedman3, "Friedman #3, 4 features, regression"),
    # outlier detection (the one-class SVM)
    "outliers": DatasetInfo(outliers, "Gaussian bulk (+1) with uniform outliers (-1)"),
}

# Post-processing keys accepted by every spec (a generator's own parameter of the same name wins).
_POST_KINDS = {"n": "int", "split": "float", "seed": "int", "sparse": "bool", "dense": "bool"}
_REQUIRED = object()
_TRUE_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def describe() -> list[tuple[str, str]]:
    """Return ``(name, description)`` for every registered data set, in registry order."""
    return [(name, info.description) for name, info in DATASETS.items()]


def load(spec: str) -> Dataset:
    """Make the data set described by a spec string.

    Parameters
    ----------
    spec : str
        ``name`` or ``name:key=value,...``, e.g. ``"gaussian:n=2000,d=20,sep=1.5,seed=0"``,
        ``"digits:binary=1,n=300"``, ``"libsvm:path=data/a1a.txt"`` or ``"iris:split=0.3"``.
        Keys are the function's parameters plus ``n``, ``split``, ``seed``, ``sparse``,
        ``dense`` of :func:`prepare`.

    Returns
    -------
    Dataset
        Its ``spec`` is the canonical form: every parameter of the function with defaults
        filled in (None omitted), then the post-processing keys that were used (and ``seed``
        when the function takes one or a subsample or split was asked), sorted by key.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the valid ones), an unknown or repeated key, a
        missing required parameter, a value of the wrong type or out of range, or a data set
        that :func:`estimate_bytes` says needs more than the machine's physical memory (refused
        before anything is generated or read).
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str, got {type(spec).__name__}")
    name, raw = _split_spec(spec)
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; expected one of {', '.join(DATASETS)}")
    own = _parameters(DATASETS[name].function)
    kwargs, post = {}, {}
    for key, text in raw.items():
        if key in own:
            kwargs[key] = _convert(key, text, own[key][1])
        elif key in _POST_KINDS:
            post[key] = _convert(key, text, _POST_KINDS[key])
        else:
            valid = ", ".join(sorted(set(own) | set(_POST_KINDS)))
            raise ValueError(f"{name}: unknown parameter {key!r}; expected one of {valid}")
    for key, (default, _) in own.items():
        if default is _REQUIRED and key not in kwargs:
            raise ValueError(f"{name}: missing required parameter {key!r}")
    need, memory = estimate_bytes(spec), machine_memory()
    if need is not None and memory is not None and need > memory:
        raise ValueError(
            f"data spec {spec!r} needs ~{need / 2**20:.0f} MB (estimate_bytes), more than this "
            f"machine's {memory / 2**20:.0f} MB of memory"
        )
    return prepare(DATASETS[name].function(**kwargs), **post)


#: Shapes of the packaged sets, for :func:`estimate_bytes`.
_SHAPES = {
    "iris": (150, 4), "wine": (178, 13), "breast_cancer": (569, 30), "digits": (1797, 64),
    "diabetes": (442, 10),
}  # fmt: skip


def estimate_bytes(spec: str) -> int | None:
    """A coarse upper bound of the memory ``load(spec)`` takes at its peak, in bytes, from the
    spec alone: nothing is generated or read (the one file system call is a libsvm file's size).

    ``X`` takes ``8nd`` bytes dense and ``16·nnz + 8(n + 1)`` as CSR, with ``nnz = n·d·density``
    for a sparse ``gaussian``; the generators and scikit-learn's loaders peak at four times ``X``
    (a draw, the class shift, their sum, a shuffle; ``64·nnz + 16d`` for the sparse mask, its
    positions, rows, columns and values, and the direction), labels and permutations add
    ``32n``, the parsing of a packaged set 1 MB. A subsample or split adds one copy of ``X``, a
    ``sparse`` or ``dense`` conversion the converted copy. An svmlight/LIBSVM file held as CSR
    takes at most 8 times its size (16 bytes per non-zero of at least 4 characters, the
    parser's buffers doubling as they grow).

    Returns
    -------
    int or None
        None where the spec does not tell: an unknown name or parameter, a value of the wrong
        type, a missing libsvm file, or a dense libsvm set (its shape is in the file). ``load``
        then reports what is wrong, or reads the file.
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str, got {type(spec).__name__}")
    try:
        name, raw = _split_spec(spec)
        if name not in DATASETS:
            return None
        own = _parameters(DATASETS[name].function)
        values = {}
        for key, text in raw.items():
            kind = own[key][1] if key in own else _POST_KINDS.get(key)
            if kind is None:
                return None
            values[key] = _convert(key, text, kind)
    except ValueError:
        return None
    defaults = {k: default for k, (default, _) in own.items() if default is not _REQUIRED}
    p = {**defaults, **values}
    density = None
    if name == "libsvm":
        path = p.get("path")
        if not isinstance(path, str) or p.get("dense") or not os.path.isfile(path):
            return None
        size = os.path.getsize(path)
        copies = ("split" in values) + ("n" in values)
        return BYTES_PER_FILE_BYTE * size + 4 * size * copies
    if name in _SHAPES:
        n, d = _SHAPES[name]  # a subsample is drawn from the whole set, read first
    elif name in ("xor", "circles"):
        n, d = p.get("n"), 2
    elif name in ("friedman2", "friedman3"):
        n, d = p.get("n"), 4
    else:
        n, d = p.get("n"), p.get("d")
        density = p.get("density") if name == "gaussian" else None
    if not (isinstance(n, int) and isinstance(d, int)) or n < 1 or d < 1:
        return None
    if isinstance(density, float) and 0.0 < density <= 1.0:
        nnz = math.ceil(n * d * density)
        x_bytes, peak = 16 * nnz + 8 * (n + 1), 64 * nnz + 8 * (n + 1) + 16 * d  # u, shift
    else:
        x_bytes = 8 * n * d
        peak = 4 * x_bytes
    total = peak + 32 * n + (2**20 if name in _SHAPES else 0)  # the loaders' parsing
    if "split" in values or ("n" in values and "n" not in own):
        total += x_bytes
    if values.get("sparse") and density is None:
        total += 16 * n * d + 8 * (n + 1)
    if values.get("dense") and density is not None:
        total += 8 * n * d
    return total


def _split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"name:a=1,b=x"`` -> ``("name", {"a": "1", "b": "x"})`` (no type conversion)."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"spec must start with a dataset name, got {spec!r}")
    raw: dict[str, str] = {}
    if not rest.strip():
        return name, raw
    for item in rest.split(","):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key or not value:
            raise ValueError(f"{name}: expected key=value in the spec, got {item.strip()!r}")
        if key in raw:
            raise ValueError(f"{name}: parameter {key!r} given twice")
        raw[key] = value
    return name, raw


@functools.cache
def _parameters(function: Callable) -> dict[str, tuple[object, str]]:
    """Parameter name -> (default or _REQUIRED, kind) where kind is read from the annotation."""
    hints = typing.get_type_hints(function)
    result = {}
    for key, param in inspect.signature(function).parameters.items():
        types = set(typing.get_args(hints[key]) or (hints[key],)) - {type(None)}
        if types == {bool}:
            kind = "bool"
        elif types == {bool, str}:
            kind = "bool_or_str"
        elif types == {int}:
            kind = "int"
        elif types == {float}:
            kind = "float"
        else:
            kind = "str"
        default = _REQUIRED if param.default is inspect.Parameter.empty else param.default
        result[key] = (default, kind)
    return result


def _convert(key: str, text: str, kind: str):
    """Convert a spec value to the parameter's kind; range checks are left to the function."""
    word = text.lower()
    if kind in ("bool", "bool_or_str") and word in _TRUE_WORDS:
        return _TRUE_WORDS[word]
    if kind == "bool":
        raise ValueError(f"{key} must be a boolean (true/false/yes/no/1/0), got {text!r}")
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = float(text)  # accept 1e5 for 100000
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value.is_integer():
            return int(value)
        raise ValueError(f"{key} must be an integer, got {text!r}")
    if kind == "float":
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{key} must be a real number, got {text!r}") from None
    return text
