"""svmlight/LIBSVM files: :func:`libsvm` reads one into a
:class:`~svmbench.problems.dataset_record.Dataset` (CSR or dense, binary or multiclass) whose
``spec`` reproduces it through :func:`~svmbench.problems.datasets.load`.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
import sklearn.datasets

from svmbench.problems.dataset_record import Dataset, check_bool, format_spec
from svmbench.problems.untrusted import machine_memory, open_regular
from svmbench.problems.validation import check_int

__all__ = ["BYTES_PER_FILE_BYTE", "libsvm", "max_file_bytes"]

#: What a file held as CSR takes at most per byte of text (16 bytes per non-zero of at least
#: four characters, the parser's buffers doubling as they grow): docs/ARCHITECTURE.md §3.
BYTES_PER_FILE_BYTE = 8
_COMPRESSED = (b"\x1f\x8b", b"BZh")  # gzip, bzip2: the text is read as it is, never expanded


def max_file_bytes() -> int:
    """The largest svmlight/LIBSVM file read: one whose CSR matrix fits in the machine's
    physical memory (:data:`BYTES_PER_FILE_BYTE` bytes per byte of the file)."""
    memory = machine_memory()
    return (1 << 62) if memory is None else memory // BYTES_PER_FILE_BYTE


def libsvm(
    path: str | os.PathLike,
    *,
    dense: bool = False,
    zero_based: bool | str = "auto",
    n_features: int | None = None,
) -> Dataset:
    """Read an svmlight/LIBSVM file with :func:`sklearn.datasets.load_svmlight_file`.

    Parameters
    ----------
    path : str or path-like
        The file; a relative path is read relative to the working directory (and kept relative
        in the spec). It may not contain a comma.
    dense : bool, default=False
        Return ``X`` as a dense ndarray instead of CSR.
    zero_based : bool or "auto", default="auto"
        Whether column indices start at 0, as in ``load_svmlight_file``.
    n_features : int, default=None
        Number of columns; default: the largest index found.

    Returns
    -------
    Dataset
        With two distinct labels, a binary task: the smaller label -> -1, the larger -> +1, and
        ``classes`` are the original labels as text (e.g. ``("-1", "1")``). With more labels, a
        multiclass task with labels 0..k-1 in increasing order of the original labels.

    Raises
    ------
    ValueError
        If the path is missing or not a regular file (a FIFO or a directory is never read), the
        file is larger than :func:`max_file_bytes`, compressed, cannot be parsed, holds a label
        or a value that is not a finite number (``nan``, ``inf``), or a single class.
    """
    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"path must be a str or os.PathLike of str, got {type(path).__name__}")
    if "," in path:
        raise ValueError(f"path must not contain ',' (spec strings separate parameters), {path!r}")
    dense = check_bool("dense", dense)
    if not (isinstance(zero_based, bool) or zero_based == "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if n_features is not None:
        n_features = check_int("n_features", n_features, low=1)
    with open_regular(path, max_bytes=max_file_bytes(), what="svmlight/LIBSVM file") as fh:
        if fh.read(3).startswith(_COMPRESSED):
            raise ValueError(f"path: {path!r} is compressed; decompress it first")
        fh.seek(0)
        try:
            X, labels = sklearn.datasets.load_svmlight_file(
                fh, n_features=n_features, zero_based=zero_based, dtype=np.float64
            )
        except (ValueError, OverflowError, UnicodeDecodeError) as exc:
            # OverflowError: a feature index beyond the parser's integer range
            raise ValueError(
                f"path: cannot read {path!r} as an svmlight/LIBSVM file: {exc}"
            ) from None
    bad = labels[~np.isfinite(labels)]
    if bad.size:
        raise ValueError(
            f"path: {path!r} holds the label {bad[0]:g} on {bad.size} line(s): labels must be "
            "finite numbers"
        )
    if not np.all(np.isfinite(X.data)):
        raise ValueError(f"path: {path!r} holds a NaN or infinite feature value")
    values, y = np.unique(labels, return_inverse=True)
    if values.size == 0:
        raise ValueError(f"path: {path!r} holds no examples (empty, or only comments)")
    if values.size < 2:
        raise ValueError(f"path: {path!r} holds a single class (label {values[0]:g}); need >= 2")
    classes = tuple(f"{v:g}" for v in values)
    y = np.where(y == 1, 1.0, -1.0) if values.size == 2 else y.astype(np.int64)
    X = sp.csr_matrix(X)
    X.sum_duplicates()
    X.sort_indices()
    if dense:
        X = X.toarray()
    params = {"path": path, "dense": dense, "zero_based": zero_based, "n_features": n_features}
    return Dataset("libsvm", format_spec("libsvm", params), X, y, classes)
