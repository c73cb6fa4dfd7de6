"""LIBSVM's model files: :func:`write_libsvm_model` and :func:`read_libsvm_model`.

LIBSVM (``svm-train`` writes, ``svm-predict`` reads) keeps a C-SVC in a text file: a header of
``keyword values`` lines, then ``SV`` and one line per support vector::

    svm_type c_svc
    kernel_type linear | polynomial | rbf | sigmoid | precomputed
    degree 3              (polynomial)
    gamma 0.5             (polynomial, rbf, sigmoid)
    coef0 0               (polynomial, sigmoid)
    nr_class k
    total_sv n
    rho   <k(k−1)/2 values, one per pair (i, j), i < j, in the order (0,1), (0,2), …, (k−2,k−1)>
    label <k integers>
    probA <k(k−1)/2 values>   (optional: a model trained with -b 1)
    probB <k(k−1)/2 values>   (optional)
    nr_sv <k counts: the support vectors of each class, which come grouped by class>
    SV
    <k−1 coefficients> <index:value ...>      (1-based indices; precomputed: 0:<serial number>)

The pair (i, j) decides ``Σ_{s ∈ i} a_{j−1,s} K(x_s, x) + Σ_{s ∈ j} a_{i,s} K(x_s, x) − rho_p``:
the support vectors of class i keep their coefficient of that pair in row ``j − 1``, those of
class j in row ``i``. A positive value votes for ``label[i]`` (for two classes: predicts
``label[0]``, the FIRST label is the positive side); the most votes win, ties to the first.

svmbench's side: a binary :class:`~svmbench.problems.models.KernelModel` is the pair (0, 1) with
``rho = −b``; a :class:`~svmbench.problems.models.OneVsOneModel` over kernel models is the pairs,
each support vector stored once in the class its coefficient's sign names. The labels are a
classifier's integer ``classes_`` (``classes_[1]``, predicted where ``f ≥ 0``, is written first),
or for a bare model ``+1, −1`` (binary) and ``0..k−1`` (one-vs-one).

Reading is for untrusted files (docs/ARCHITECTURE.md §7): a regular file of at most
:data:`MAX_FILE_BYTES`, lines of at most :data:`MAX_LINE_BYTES`, every header field checked for
type, range and count before anything is allocated from it, every support-vector line for its
coefficient count, finite numbers, increasing positive indices up to
:data:`MAX_FEATURE_INDEX`; the model built from it holds at most :data:`MAX_MODEL_VALUES` numbers
(a linear kernel's dense ``w``, built at prediction, included).
Anything else is a ``ValueError`` naming the file and the line.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from array import array

import numpy as np
from scipy import sparse

from svmbench.problems.loaded_classifier import LoadedClassifier
from svmbench.problems.model_documents import MAX_DEGREE
from svmbench.problems.models import KernelModel, LinearModel, Model, OneVsOneModel
from svmbench.problems.untrusted import open_regular

__all__ = [
    "MAX_CLASSES",
    "MAX_FEATURE_INDEX",
    "MAX_FILE_BYTES",
    "MAX_LINE_BYTES",
    "MAX_MODEL_VALUES",
    "LibsvmClassifier",
    "read_libsvm_model",
    "write_libsvm_model",
]

#: The largest file :func:`read_libsvm_model` reads (1 GiB).
MAX_FILE_BYTES = 1 << 30
#: The longest line it reads (32 MiB: a dense support vector of about a million features).
MAX_LINE_BYTES = 32 << 20
#: The most classes a file may declare (k(k−1)/2 binary models are built: 32 640 for 256).
MAX_CLASSES = 256
#: The largest feature index (LIBSVM's indices are C ints).
MAX_FEATURE_INDEX = 2**31 - 1
#: The most numbers the model built from a file may hold (the support vectors of all pairs).
MAX_MODEL_VALUES = 1 << 27
#: Dense support vectors when they fill at least half their matrix; CSR otherwise.
_DENSE_FILL = 0.5

_INT32 = (-(2**31), 2**31 - 1)
_KERNEL_NAMES = {name: name for name in ("linear", "rbf", "sigmoid", "precomputed")}
_KERNEL_NAMES["polynomial"] = "poly"
_LIBSVM_KERNEL = {ours: theirs for theirs, ours in _KERNEL_NAMES.items()}
_OTHER_SVM_TYPES = ("nu_svc", "one_class", "epsilon_svr", "nu_svr")
_HEADER_KEYS = (
    "svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv", "rho",
    "label", "probA", "probB", "nr_sv",
)  # fmt: skip
_NUM = rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER = re.compile(_NUM)
_NUMBERS = re.compile(_NUM + rb"(?: " + _NUM + rb")*")
_INTEGER = re.compile(rb"[+-]?\d{1,19}")
_INDICES = re.compile(rb"\d{1,10}(?: \d{1,10})*")


# ---- writing ------------------------------------------------------------------------------------
def _parts(obj) -> tuple[Model, list[int], tuple | None, tuple | None]:
    """The model, its LIBSVM labels (in LIBSVM's order) and probA/probB of what was given."""
    if not isinstance(obj, Model):
        if not hasattr(obj, "model_") and hasattr(obj, "best_estimator_"):  # SVMClassifierCV
            obj = obj.best_estimator_
        model, classes = getattr(obj, "model_", None), getattr(obj, "classes_", None)
        if not isinstance(model, Model) or classes is None:
            raise TypeError(
                "write_libsvm_model takes a KernelModel, a OneVsOneModel over KernelModels, or a "
                f"fitted svmbench classifier holding one, got {type(obj).__name__}"
            )
        classes = np.asarray(classes)
        if classes.ndim != 1 or classes.dtype.kind not in "iu":
            raise ValueError(
                "LIBSVM model files hold integer labels; the classifier's classes_ are "
                f"{classes.dtype} {classes.tolist()!r} (encode them as integers first)"
            )
        values = [int(c) for c in classes]
        if any(not _INT32[0] <= c <= _INT32[1] for c in values):
            raise ValueError(f"LIBSVM labels are 32-bit C ints; got {values}")
        if isinstance(model, KernelModel):  # classes_[1] is predicted where f ≥ 0
            values = [values[1], values[0]] if len(values) == 2 else values
        prob = getattr(obj, "prob_a_", None), getattr(obj, "prob_b_", None)
        return model, values, *prob
    if isinstance(obj, OneVsOneModel):
        return obj, list(range(obj.n_classes)), None, None
    return obj, [1, -1], None, None


def _pair_models(model: Model) -> tuple[int, list[tuple[KernelModel, float]]]:
    """``k`` and, for each LIBSVM pair (i, j) in order, the kernel model and the sign that makes
    its decision value positive for class i."""
    if isinstance(model, LinearModel):
        raise TypeError(
            "a LinearModel holds w and b but no support vectors, which a LIBSVM model file "
            "needs; train with a kernel solver (KernelDual(kernel='linear'), e.g. "
            "SVMClassifier(kernel='linear', solver='smo')) to get a linear-kernel KernelModel"
        )
    if isinstance(model, KernelModel):
        _check_finite(model)
        return 2, [(model, 1.0)]
    if not isinstance(model, OneVsOneModel):
        raise TypeError(
            "LIBSVM's C-SVC is a binary kernel model or one-vs-one over kernel models; got a "
            f"{type(model).__name__} (fit with multiclass='ovo' and a kernel solver)"
        )
    if model.tie_break != "first":
        raise ValueError(
            f"LIBSVM breaks vote ties to the first class; this model breaks them by "
            f"{model.tie_break!r}, which a LIBSVM file cannot say"
        )
    k, by_pair = model.n_classes, {}
    for m, (p, q) in zip(model.models, model.pairs, strict=True):
        if not isinstance(m, KernelModel):
            raise TypeError(
                f"every pair of a one-vs-one model must be a KernelModel for LIBSVM; pair "
                f"{(p, q)} is a {type(m).__name__}"
            )
        _check_finite(m)
        key, sign = ((p, q), 1.0) if p < q else ((q, p), -1.0)
        if key in by_pair:
            raise ValueError(f"the one-vs-one model has the pair {key} twice")
        by_pair[key] = (m, sign)
    order = [(i, j) for i in range(k) for j in range(i + 1, k)]
    if set(by_pair) != set(order):
        raise ValueError(f"a LIBSVM model needs every pair of the {k} classes once")
    first = by_pair[order[0]][0]

    def used(m):  # the parameters the kernel reads (the linear kernel reads none)
        return m.kernel if m.kernel == "linear" else m.kernel_params

    for m, _ in by_pair.values():
        if used(m) != used(first) or m.n_features != first.n_features:
            raise ValueError("the pairs of the one-vs-one model must share one kernel")
    return k, [by_pair[p] for p in order]


def _check_finite(m: KernelModel) -> None:
    sv = m.support_vectors
    values = () if sv is None else (sv.data if sparse.issparse(sv) else sv)
    if not (np.all(np.isfinite(m.dual_coef)) and np.all(np.isfinite(values))):
        raise ValueError("cannot write a model holding NaN or infinite numbers")


def _row(m: KernelModel, s: int) -> tuple[np.ndarray, np.ndarray]:
    """The 0-based indices (increasing, int64) and values of the nonzeros of support vector s."""
    sv = m.support_vectors
    if sparse.issparse(sv):
        row = sv[s]
        order = np.argsort(row.indices)
        idx, val = row.indices[order].astype(np.int64), row.data[order]
        return idx[val != 0], val[val != 0]
    idx = np.flatnonzero(sv[s]).astype(np.int64)
    return idx, sv[s][idx]


def _row_key(m: KernelModel, s: int):
    if m.kernel == "precomputed":
        return int(m.support[s])
    idx, val = _row(m, s)
    return idx.tobytes(), val.tobytes()


def _fmt(x: float) -> str:
    return repr(float(x))  # the shortest text that reads back to the same double


def _sv_text(m: KernelModel, s: int) -> str:
    if m.kernel == "precomputed":
        return f"0:{int(m.support[s]) + 1}"
    return " ".join(f"{i + 1}:{_fmt(v)}" for i, v in zip(*_row(m, s), strict=True))


def write_libsvm_model(model, path: str | os.PathLike) -> None:
    """Write a kernel C-SVC as a LIBSVM model file that ``svm-predict`` reads.

    Parameters
    ----------
    model : KernelModel, OneVsOneModel over KernelModels, or a fitted classifier holding one
        A fitted :class:`~svmbench.SVMClassifier` (``multiclass="ovo"`` for more than two
        classes), the best estimator of an ``SVMClassifierCV``, or what
        :func:`read_libsvm_model` returned. A classifier's ``classes_`` must be integers (LIBSVM
        labels are C ints); a bare binary model is written with the labels ``1, -1`` (LIBSVM
        predicts 1 where our ``f > 0``), a bare one-vs-one model with ``0..k−1``.
    path : str or path-like
        Written through a temporary file in the same directory, then renamed: a reader never
        sees half a file, and a refused model leaves ``path`` untouched.

    Raises
    ------
    TypeError
        For a model LIBSVM cannot express: a ``LinearModel`` (no support vectors), one-vs-rest,
        Crammer–Singer, one-vs-one over linear models.
    ValueError
        For non-integer labels, ``tie_break="confidence"``, pairs of different kernels.
    """
    model, labels, prob_a, prob_b = _parts(model)
    k, pairs = _pair_models(model)
    if len(labels) != k or len(set(labels)) != k:
        raise ValueError(f"a LIBSVM model of {k} classes needs {k} distinct labels, got {labels}")
    first = pairs[0][0]
    # each support vector once, in the class its coefficient's sign names, with k−1 coefficients
    rows: list[dict] = [{} for _ in range(k)]  # class → key → (model, row, coefficients)
    pair_index = 0
    for i in range(k):
        for j in range(i + 1, k):
            m, sign = pairs[pair_index]
            pair_index += 1
            for s, c in enumerate(m.dual_coef):
                c = sign * float(c)
                if c == 0.0:  # contributes nothing; its class cannot be told
                    continue
                cls, slot = (i, j - 1) if c >= 0 else (j, i)
                entry = rows[cls].setdefault(_row_key(m, s), (m, s, [0.0] * (k - 1)))
                entry[2][slot] += c
    rho = [-sign * m.b for m, sign in pairs]
    lines = ["svm_type c_svc", f"kernel_type {_LIBSVM_KERNEL[first.kernel]}"]
    if first.kernel == "poly":
        lines.append(f"degree {first.degree}")
    if first.kernel in ("poly", "rbf", "sigmoid"):
        lines.append(f"gamma {_fmt(first.gamma)}")
    if first.kernel in ("poly", "sigmoid"):
        lines.append(f"coef0 {_fmt(first.coef0)}")
    lines += [
        f"nr_class {k}",
        f"total_sv {sum(len(r) for r in rows)}",
        "rho " + " ".join(_fmt(r) for r in rho),
        "label " + " ".join(str(v) for v in labels),
    ]
    for name, values in (("probA", prob_a), ("probB", prob_b)):
        if values is not None:
            lines.append(f"{name} " + " ".join(_fmt(v) for v in values))
    lines += ["nr_sv " + " ".join(str(len(r)) for r in rows), "SV"]
    for by_key in rows:
        for m, s, coefs in by_key.values():
            lines.append(" ".join(_fmt(c) for c in coefs) + " " + _sv_text(m, s))
    text = "\n".join(lines) + "\n"
    target = os.fspath(path)
    fd, tmp = tempfile.mkstemp(prefix=".libsvm-model-", dir=os.path.dirname(target) or ".")
    try:
        os.fchmod(fd, 0o644)  # as svm-train's file, not mkstemp's owner-only mode
        with os.fdopen(fd, "w", encoding="ascii", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):  # not renamed: an error
            os.unlink(tmp)


# ---- reading ------------------------------------------------------------------------------------
class LibsvmClassifier(LoadedClassifier):
    """A LIBSVM model read by :func:`read_libsvm_model`: a
    :class:`~svmbench.problems.loaded_classifier.LoadedClassifier` predicting LIBSVM's labels.

    Attributes (besides ``model_``, ``classes_``, ``n_features_in_``)
    ----------
    labels_ : ndarray of int64
        The labels in the file's order (``classes_`` too, except that a binary model's
        ``classes_`` is ``[label[1], label[0]]``: ``classes_[1]`` is predicted where ``f ≥ 0``).
    prob_a_, prob_b_ : ndarray of shape (k(k−1)/2,) or None
        The file's Platt parameters (``-b 1``), kept but not used: svmbench computes no
        probabilities.
    """

    def __init__(self, model: Model, labels, prob_a=None, prob_b=None):
        labels = np.asarray(labels, dtype=np.int64)
        classes = labels[::-1] if labels.size == 2 else labels
        super().__init__(model, classes)
        self.labels_ = labels
        self.prob_a_ = prob_a
        self.prob_b_ = prob_b

    def __repr__(self) -> str:
        return (
            f"LibsvmClassifier({type(self.model_).__name__}, kernel={self.kernel!r}, "
            f"labels={self.labels_.tolist()!r}, n_features_in_={self.n_features_in_})"
        )

    @property
    def kernel(self) -> str:
        """The kernel, in svmbench's name (``"poly"`` for LIBSVM's ``polynomial``)."""
        model = self.model_ if isinstance(self.model_, KernelModel) else self.model_.models[0]
        return model.kernel

    def pairwise_decision_function(self, X) -> np.ndarray:
        """LIBSVM's decision values: (n,) for two classes, else (n, k(k−1)/2) in pair order."""
        X = self._check_X(X)
        if isinstance(self.model_, KernelModel):
            return self.model_.decision_function(X)
        return np.column_stack([m.decision_function(X) for m in self.model_.models])


class _Bad(Exception):
    pass


def _int(token: bytes, what: str, low: int, high: int) -> int:
    if not _INTEGER.fullmatch(token):
        raise _Bad(f"{what} must be an integer, got {token[:40]!r}")
    value = int(token)
    if not low <= value <= high:
        raise _Bad(f"{what} must be in [{low}, {high}], got {value}")
    return value


def _float(token: bytes, what: str) -> float:
    if not _NUMBER.fullmatch(token):
        raise _Bad(f"{what} must be a finite number, got {token[:40]!r}")
    value = float(token)
    if not math.isfinite(value):
        raise _Bad(f"{what} must be a finite number, got {token[:40]!r}")
    return value


def _floats(tokens: list[bytes], what: str) -> np.ndarray:
    if tokens and not _NUMBERS.fullmatch(b" ".join(tokens)):
        bad = next(t for t in tokens if not _NUMBER.fullmatch(t))
        raise _Bad(f"{what} must be finite numbers, got {bad[:40]!r}")
    values = np.array(tokens, dtype=bytes).astype(np.float64) if tokens else np.empty(0)
    if not np.all(np.isfinite(values)):
        raise _Bad(f"{what} must be finite numbers (one overflows)")
    return values


def _lines(fh):
    """``(line number, stripped bytes)`` of a binary file, each at most MAX_LINE_BYTES long."""
    number = 0
    while True:
        line = fh.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise _Bad(f"line {number} is longer than {MAX_LINE_BYTES} bytes")
        yield number, line.strip()


def _read_header(lines) -> tuple[dict, dict]:
    """The header's ``keyword → value tokens`` and ``keyword → line number``, up to ``SV``."""
    fields: dict = {}
    where: dict = {}
    for number, line in lines:
        tokens = line.split()
        if not tokens:
            continue
        key = tokens[0].decode("ascii", "replace")
        if key == "SV":
            if len(tokens) != 1:
                raise _Bad(f"line {number}: 'SV' stands alone on its line")
            return fields, where
        if key not in _HEADER_KEYS:
            raise _Bad(
                f"line {number}: unknown header keyword {key[:40]!r} (a C-SVC header has "
                f"{', '.join(_HEADER_KEYS)}, then SV)"
            )
        if key in fields:
            raise _Bad(f"line {number}: {key} appears twice")
        fields[key], where[key] = tokens[1:], number
    raise _Bad("the file ends before the SV line (truncated, or not a LIBSVM model)")


def _check_header(fields: dict, where: dict, size: int) -> dict:
    """The checked header: kernel, its parameters, k, total, rho, labels, nr_sv, probA/B."""

    def parse(key, fn, count=1):
        if key not in fields:
            raise _Bad(f"the header lacks {key}, which this C-SVC model needs")
        tokens = fields[key]
        try:
            if len(tokens) != count:
                raise _Bad(f"{key} must have {count} value{'s' if count > 1 else ''}")
            return fn(tokens)
        except _Bad as exc:
            raise _Bad(f"line {where[key]}: {exc}") from None

    def name(tokens):
        return tokens[0].decode("ascii", "replace")[:40]

    svm_type = parse("svm_type", name)
    if svm_type != "c_svc":
        kind = "a LIBSVM type svmbench does not read" if svm_type in _OTHER_SVM_TYPES else "unknown"
        raise _Bad(
            f"line {where['svm_type']}: svm_type {svm_type!r} ({kind}): only C-SVC models "
            "(svm_type c_svc) are read"
        )
    libsvm_kernel = parse("kernel_type", name)
    if libsvm_kernel not in _KERNEL_NAMES:
        raise _Bad(f"line {where['kernel_type']}: unknown kernel_type {libsvm_kernel!r}")
    kernel = _KERNEL_NAMES[libsvm_kernel]
    h: dict = {"kernel": kernel}
    if kernel == "poly":
        h["degree"] = parse("degree", lambda t: _int(t[0], "degree", 1, MAX_DEGREE))
    if kernel in ("poly", "rbf", "sigmoid"):
        h["gamma"] = parse("gamma", lambda t: _float(t[0], "gamma"))
        if h["gamma"] <= 0:
            raise _Bad(f"line {where['gamma']}: gamma must be > 0, got {h['gamma']}")
    if kernel in ("poly", "sigmoid"):
        h["coef0"] = parse("coef0", lambda t: _float(t[0], "coef0"))
    k = parse("nr_class", lambda t: _int(t[0], "nr_class", 2, MAX_CLASSES))
    total = parse("total_sv", lambda t: _int(t[0], "total_sv", 1, _INT32[1]))
    # each support vector line holds at least k−1 coefficients of two bytes ("0 "): no more can
    # fit in the file, and nothing is allocated for more
    if 2 * (k - 1) * total > size:
        raise _Bad(
            f"line {where['total_sv']}: total_sv = {total} support vectors of {k - 1} "
            f"coefficients cannot fit in a file of {size} bytes"
        )
    n_pairs = k * (k - 1) // 2
    h["rho"] = parse("rho", lambda t: _floats(t, "rho"), n_pairs)
    labels = parse("label", lambda t: [_int(x, "a label", *_INT32) for x in t], k)
    if len(set(labels)) != k:
        raise _Bad(f"line {where['label']}: the labels must be distinct, got {labels}")
    nr_sv = parse("nr_sv", lambda t: [_int(x, "nr_sv", 0, total) for x in t], k)
    if sum(nr_sv) != total:
        raise _Bad(f"line {where['nr_sv']}: nr_sv sums to {sum(nr_sv)}, but total_sv is {total}")
    for key in ("probA", "probB"):
        h[key] = parse(key, lambda t, key=key: _floats(t, key), n_pairs) if key in fields else None
    h.update(k=k, total=total, labels=labels, nr_sv=nr_sv)
    return h


def _read_svs(lines, h: dict):
    """Coefficients (k−1, n), then the support vectors as CSR parts (indices 0-based)."""
    k, total, precomputed = h["k"], h["total"], h["kernel"] == "precomputed"
    coef, count = np.empty((k - 1, total)), 0
    indptr, indices, data = array("q", [0]), array("q"), array("d")
    for number, line in lines:
        if not line:
            if count < total:
                raise _Bad(f"line {number}: an empty line where support vector {count + 1} is due")
            continue
        if count == total:
            raise _Bad(f"line {number}: more support vector lines than total_sv = {total}")
        tokens = line.split()
        if len(tokens) < k - 1 or any(b":" in t for t in tokens[: k - 1]):
            raise _Bad(f"line {number}: a support vector line starts with {k - 1} coefficients")
        try:
            coef[:, count] = _floats(tokens[: k - 1], "the coefficients")
            pairs = [t.partition(b":") for t in tokens[k - 1 :]]
            if any(sep != b":" for _, sep, _ in pairs):
                raise _Bad("features must be index:value pairs")
            idx_tok = [p[0] for p in pairs]
            if idx_tok and not _INDICES.fullmatch(b" ".join(idx_tok)):
                bad = next(t for t in idx_tok if not _INDICES.fullmatch(t))
                raise _Bad(f"feature indices must be integers of at most 10 digits, got {bad!r}")
            idx = np.array(idx_tok, dtype=bytes).astype(np.int64) if idx_tok else np.empty(0, int)
            vals = _floats([p[2] for p in pairs], "feature values")
        except _Bad as exc:
            raise _Bad(f"line {number}: {exc}") from None
        if precomputed:
            if idx.size != 1 or idx[0] != 0 or vals[0] != int(vals[0]) or not vals[0] >= 1:
                raise _Bad(f"line {number}: a precomputed kernel's SV is 0:<serial number ≥ 1>")
            if vals[0] > MAX_FEATURE_INDEX:
                raise _Bad(f"line {number}: serial number {vals[0]:g} > {MAX_FEATURE_INDEX}")
        elif idx.size:
            if idx[0] < 1 or idx[-1] > MAX_FEATURE_INDEX:
                raise _Bad(
                    f"line {number}: feature indices must be in [1, {MAX_FEATURE_INDEX}], got "
                    f"{int(idx[0]) if idx[0] < 1 else int(idx[-1])}"
                )
            if np.any(np.diff(idx) <= 0):
                raise _Bad(f"line {number}: feature indices must increase strictly")
            indices.extend((idx - 1).tolist())
            data.extend(vals.tolist())
        if precomputed:
            indices.append(int(vals[0]) - 1)
            data.append(1.0)
        indptr.append(len(indices))
        count += 1
    if count < total:
        raise _Bad(f"the file ends after {count} of total_sv = {total} support vector lines")
    return coef, np.frombuffer(indptr, np.int64), np.frombuffer(indices, np.int64), data


def _build(h: dict, coef, indptr, indices, data, n_features) -> Model:
    k, total, kernel = h["k"], h["total"], h["kernel"]
    widest = int(indices.max()) + 1 if indices.size else 0
    if n_features is None:
        n_features = widest
    elif not isinstance(n_features, int | np.integer) or n_features < widest:
        raise ValueError(f"n_features must be an int >= {widest} (the widest support vector)")
    n_features = int(n_features)
    params = {key: h[key] for key in ("gamma", "degree", "coef0") if key in h}
    start = np.concatenate([[0], np.cumsum(h["nr_sv"])])
    if kernel == "precomputed":
        serial, svs, n_train = indices, None, n_features
    else:
        serial, n_train = np.arange(total), total
        dense = indices.size >= _DENSE_FILL * total * n_features
        stored = (k - 1) * (total * n_features if dense else indices.size)
        stored += n_features if kernel == "linear" else 0  # a prediction's w = Σ c_s x_s
        if stored > MAX_MODEL_VALUES:
            raise _Bad(
                f"its one-vs-one support vectors (and a linear kernel's w) would hold {stored} "
                f"numbers (over MAX_MODEL_VALUES = {MAX_MODEL_VALUES})"
            )
        values = np.frombuffer(data, np.float64)
        svs = sparse.csr_matrix((values, indices, indptr), shape=(total, n_features))
        if dense:
            svs = svs.toarray()
    models = []
    for i in range(k):
        for j in range(i + 1, k):
            rows = np.r_[start[i] : start[i + 1], start[j] : start[j + 1]]
            c = np.concatenate(
                [coef[j - 1, start[i] : start[i + 1]], coef[i, start[j] : start[j + 1]]]
            )
            models.append(
                KernelModel(
                    support_vectors=None if svs is None else svs[rows],
                    dual_coef=c, b=-float(h["rho"][len(models)]), kernel=kernel,
                    support=serial[rows], n_train=n_train, **params,
                )
            )  # fmt: skip
    if k == 2:
        return models[0]
    pairs = tuple((i, j) for i in range(k) for j in range(i + 1, k))
    return OneVsOneModel(tuple(models), pairs, k)


def read_libsvm_model(
    path: str | os.PathLike, *, n_features: int | None = None
) -> LibsvmClassifier:
    """Read a LIBSVM C-SVC model file (untrusted input; see the module docstring).

    Parameters
    ----------
    path : str or path-like
    n_features : int, optional
        The columns ``X`` will have; default the largest feature index of the support vectors
        (LIBSVM does not record it). For a precomputed kernel: the training examples (the columns
        of the test kernel), default the largest serial number.

    Returns
    -------
    LibsvmClassifier
        ``model_`` a :class:`~svmbench.problems.models.KernelModel` (two classes) or a
        :class:`~svmbench.problems.models.OneVsOneModel` over them (pairs in LIBSVM's order, ties
        to the first class as LIBSVM), predicting the file's labels; ``prob_a_``, ``prob_b_``.
        A point exactly on a boundary (decision value 0) votes for class i of its pair here, j
        in LIBSVM.

    Raises
    ------
    ValueError
        For anything but a regular file of at most :data:`MAX_FILE_BYTES` holding a well-formed
        C-SVC model: the message names the file and the line.
    """
    where = os.fspath(path)
    with open_regular(where, max_bytes=MAX_FILE_BYTES, what="LIBSVM model file") as fh:
        try:
            lines = _lines(fh)
            header = _check_header(*_read_header(lines), os.fstat(fh.fileno()).st_size)
            parts = _read_svs(lines, header)
            model = _build(header, *parts, n_features)
        except (_Bad, OSError) as exc:
            raise ValueError(f"{where}: not a readable LIBSVM C-SVC model file: {exc}") from None
    return LibsvmClassifier(model, header["labels"], header["probA"], header["probB"])
