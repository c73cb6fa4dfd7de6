"""Fuzzing the model-file reader: can a mutated model file crash, hang or exhaust memory?

Run ``python -m svmbench.benchmarks.studies.fuzz_model_files [--n 10000] [--seed 0]
[--timeout 10] [--budget-mb 64] [--memory-mb 512] [--keep DIR]``.

Each file is a valid model file (:func:`base_parts`: every model kind, dense and CSR support
vectors, every kernel, classifiers with labels and feature names) mutated one to three times
(:data:`MUTATORS`: JSON values, keys, kinds, nesting and text; array values, dtypes and shapes;
``.npy`` headers that lie; members removed, added, renamed or duplicated; deflated members and
bombs; CSR structure), then, for some, cut or altered as bytes (:data:`BYTE_MUTATORS`:
truncation, flipped bytes, the ZIP's size fields), or replaced by a file of another kind. A
worker process loads each with ``load_model(path, max_bytes=--budget-mb)`` and predicts with
what it got (:func:`exercise`), under ``RLIMIT_AS`` = its size after warm-up plus ``--memory-mb``
and with a ``--timeout`` per file: a worker killed by a signal counts as a crash, one past the
timeout as a hang (both are restarted), a ``MemoryError`` as an allocation over the budget. The
other outcomes: a model that loads and predicts finite values (ok), a ``ValueError`` or
``TypeError`` at loading or predicting (a clean refusal), any other exception (a bug, printed).
The counts are printed with the environment; ``--keep`` saves the files of every failure. The
bar is zero crashes, hangs, allocations over the budget and other exceptions.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import pickle
import random
import select
import struct
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import sparse

from svmbench.problems.linear_regression_model import LinearRegressionModel
from svmbench.problems.loaded_classifier import LoadedClassifier
from svmbench.problems.logistic_model import LogisticModel, MultinomialLogisticModel
from svmbench.problems.model_files import load_model, save_model
from svmbench.problems.models import (
    ChainModel,
    CrammerSingerModel,
    KernelModel,
    LinearModel,
    OneVsOneModel,
    OneVsRestModel,
)
from svmbench.problems.regression_model import KernelRegressionModel

META = "__svmbench__"


# ---- valid files ------------------------------------------------------------------------------
@dataclass
class Parts:
    """A model file before it is written: its metadata and its members (arrays, or the raw
    bytes of an ``.npy`` member), and whether the members are deflated."""

    meta: dict
    members: dict[str, np.ndarray | bytes]
    compress: bool = False
    extra: list[tuple[str, bytes]] = field(default_factory=list)  # further (duplicate) members

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        method = zipfile.ZIP_DEFLATED if self.compress else zipfile.ZIP_STORED
        with zipfile.ZipFile(buf, "w", compression=method) as zf:
            text = json.dumps(self.meta) if isinstance(self.meta, dict | list) else self.meta
            raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
            items = [(META, np.frombuffer(raw, np.uint8)), *self.members.items()]
            for name, value in items:
                data = value if isinstance(value, bytes) else _npy(value)
                zf.writestr(f"{name}.npy", data)
            with warnings.catch_warnings():  # a duplicate name is the point
                warnings.simplefilter("ignore", UserWarning)
                for name, data in self.extra:
                    zf.writestr(name, data)
        return buf.getvalue()


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asanyarray(array), allow_pickle=False)
    return buf.getvalue()


def base_models() -> dict:
    """Small valid models and classifiers of every kind."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 4))
    csr = sparse.csr_matrix(np.where(rng.random((6, 4)) < 0.5, X, 0.0))
    coef = np.array([1.0, -0.5, 0.25, -1.0, 0.75, -0.5])

    def kernel(sv, kind, **kw):
        return KernelModel(sv, coef, 0.1, kind, np.arange(6), 9, **kw)

    linear = LinearModel(rng.normal(size=4), -0.2)
    rbf = kernel(X, "rbf", gamma=0.5)
    poly = kernel(csr, "poly", gamma=0.3, degree=3, coef0=1.0)
    pairs = ((0, 1), (0, 2), (1, 2))
    return {
        "linear": linear,
        "rbf-dense": rbf,
        "poly-csr": poly,
        "sigmoid": kernel(X, "sigmoid", gamma=0.1, coef0=-0.5),
        "linear-kernel-csr": kernel(csr, "linear"),
        "precomputed": kernel(None, "precomputed"),
        "crammer_singer": CrammerSingerModel(rng.normal(size=(3, 4)), rng.normal(size=3)),
        "ovr": OneVsRestModel((linear, rbf, LinearModel(rng.normal(size=4))), 3),
        "ovo": OneVsOneModel((rbf, poly, kernel(X, "rbf", gamma=2.0)), pairs, 3),
        "chain": ChainModel(rng.normal(size=(3, 4)), rng.normal(size=(3, 3))),
        "chain-no-T": ChainModel(rng.normal(size=(2, 4))),
        "regression-csr": KernelRegressionModel(csr, coef, 0.1, "rbf", np.arange(6), 9, gamma=0.5),
        "linear-regression": LinearRegressionModel(rng.normal(size=4), 0.2),
        "multinomial": MultinomialLogisticModel(rng.normal(size=(3, 4)), rng.normal(size=3)),
        "logistic-ovr": OneVsRestModel(
            tuple(LogisticModel(rng.normal(size=4), b) for b in (0.3, -1.0, 0.0)), 3
        ),
        "labels-str": LoadedClassifier(linear, ["no", "yes"], ["a", "b", "c", "d"]),
        "labels-int-ovo": LoadedClassifier(
            OneVsOneModel((rbf, poly, linear), pairs, 3, tie_break="confidence"), [3, 7, 11]
        ),
        "labels-float-cs": LoadedClassifier(
            CrammerSingerModel(rng.normal(size=(3, 4)), np.zeros(3)), [0.5, 1.5, 2.5]
        ),
    }


def base_parts() -> dict[str, Parts]:
    """The parts of each base model as :func:`save_model` writes them."""
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, model in base_models().items():
            path = Path(folder) / f"{name}.npz"
            save_model(model, path)
            with np.load(path, allow_pickle=False) as archive:  # our own file
                meta = json.loads(archive[META].tobytes())
                members = {k: archive[k] for k in archive.files if k != META}
            out[name] = Parts(meta, members)
    return out


# ---- mutations of the parts -------------------------------------------------------------------
_NAN, _INF = float("nan"), float("inf")
JSON_VALUES = [
    None, True, False, 0, 1, -1, 2, 3, 7, 10**4, 10**9, 2**31, 2**63, -(2**63), 10**30, 0.5,
    -1.5, 1e308, -1e308, 5e-324, _NAN, _INF, -_INF, "", "x", "rbf", "poly", "precomputed",
    "dense", "linear", "kernel", "ovo", "chain", "first", {"csr": [6, 4]}, {"csr": [10**9, 10**9]},
    {"csr": [6]}, [], [0, 1], [[0, 1]], [[0, 1], [0, 1]], [1, "a"], {}, {"kind": "linear"},
    {"kind": "ovo", "models": []}, {"kind": "str", "values": ["a", "b"]},
]  # fmt: skip


def _slots(value, out=None) -> list[tuple]:
    """Every (container, key) of a JSON document, depth first."""
    out = [] if out is None else out
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        out.append((value, key))
        if isinstance(child, dict | list):
            _slots(child, out)
    return out


def _deep(rng: random.Random):
    depth = rng.choice([5, 40, 200, 2000, 5000])
    return json.loads("[" * depth + "]" * depth) if depth < 900 else {"deep": depth}


def json_value(rng, parts: Parts) -> None:
    container, key = rng.choice(_slots(parts.meta))
    value = _deep(rng) if rng.random() < 0.05 else copy.deepcopy(rng.choice(JSON_VALUES))
    if isinstance(value, dict) and "deep" in value:  # too deep for json.loads: as text later
        parts.meta = json.dumps(parts.meta).replace('"kind"', "[" * value["deep"], 1)
        return
    container[key] = value


def json_delete(rng, parts: Parts) -> None:
    container, key = rng.choice(_slots(parts.meta))
    del container[key]


def json_add(rng, parts: Parts) -> None:
    dicts = [parts.meta] + [c[k] for c, k in _slots(parts.meta) if isinstance(c[k], dict)]
    rng.choice(dicts)[rng.choice(["extra", "kind", "arrays", "models", "b", "w", "csr"])] = (
        copy.deepcopy(rng.choice(JSON_VALUES))
    )


def json_numbers(rng, parts: Parts) -> None:
    """Counts and parameters pushed to their edges: n_classes, n_train, degree, gamma, shapes."""
    numeric = [(c, k) for c, k in _slots(parts.meta) if type(c[k]) in (int, float)]
    if numeric:
        container, key = rng.choice(numeric)
        value = container[key]
        container[key] = rng.choice(
            [value + 1, value - 1, -value, 0, 10**9, 2**31 - 1, 2**62, value * 1e300]
        )


def json_text(rng, parts: Parts) -> None:
    text = bytearray(json.dumps(parts.meta).encode())
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(text))
        choice = rng.random()
        if choice < 0.4:
            text[at] = rng.randrange(256)
        elif choice < 0.7:
            del text[at:]
        else:
            text[at:at] = rng.choice([b"[", b"{", b'"', b"\\", b"\xff", b"NaN", b"1e999"])
    parts.meta = bytes(text)


def json_version(rng, parts: Parts) -> None:
    parts.meta["version"] = rng.choice([0, 1, 2, 3, 99, -1, "2", 2.0, None, True, [2]])
    if rng.random() < 0.3:
        parts.meta["format"] = rng.choice(["other", None, 1, "svmbench-model "])


def _array_name(rng, parts: Parts) -> str | None:
    names = [k for k, v in parts.members.items() if isinstance(v, np.ndarray)]
    return rng.choice(names) if names else None


def array_values(rng, parts: Parts) -> None:
    name = _array_name(rng, parts)
    if name is None or parts.members[name].size == 0:
        return
    array = parts.members[name].copy()
    flat = array.reshape(-1)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(flat.size)
        if array.dtype.kind == "f":
            flat[at] = rng.choice([_NAN, _INF, -_INF, 1e308, -1e308, 5e-324, 0.0, 1e150])
        elif array.dtype.kind in "iu":
            info = np.iinfo(array.dtype)
            values = [-1, flat.size, 6, 9, 2**31 - 1, info.max, info.min]
            flat[at] = rng.choice([v for v in values if info.min <= v <= info.max])
        else:
            flat[at] = not flat[at]
    parts.members[name] = array


def array_dtype(rng, parts: Parts) -> None:
    name = _array_name(rng, parts)
    if name is None:
        return
    dtype = rng.choice(
        ["bool", "int8", "int32", "uint8", "uint64", "float16", "float32", ">f8", "<i8",
         "complex128", "U3", "S3", "M8[D]", "object"]
    )  # fmt: skip
    array = parts.members[name]
    if dtype == "object":  # a pickled object array, written by hand
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "|O", "fortran_order": False, "shape": array.shape}
        )
        parts.members[name] = header.getvalue() + pickle.dumps(array.tolist())
        return
    with np.errstate(all="ignore"):
        parts.members[name] = array.astype(dtype)


def array_shape(rng, parts: Parts) -> None:
    name = _array_name(rng, parts)
    if name is None:
        return
    a = parts.members[name]
    options = [
        lambda: a.reshape(-1)[:-1] if a.size else a,
        lambda: np.concatenate([a.reshape(-1), a.reshape(-1)[:1]]),
        lambda: a.reshape(1, -1),
        lambda: a.reshape(-1, 1),
        lambda: a.reshape(1, 1, -1),
        lambda: a[:0],
        lambda: a.T,
        lambda: np.asfortranarray(a),
        lambda: np.zeros((0, 10**6), a.dtype),
        lambda: np.repeat(a, 2, axis=0),
    ]
    parts.members[name] = rng.choice(options)()


def header_lie(rng, parts: Parts) -> None:
    """An ``.npy`` header declaring another shape or dtype than the bytes that follow."""
    name = rng.choice([META, *parts.members])
    value = parts.members.get(name)
    data = _npy(value) if isinstance(value, np.ndarray) else value
    if name == META or data is None:
        return
    fh = io.BytesIO(data)
    np.lib.format.read_magic(fh)
    shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
    body = data[fh.tell() :]
    shape = rng.choice([(10**12,), (0,), (2**31,), (3, 10**9), (10**6, 0), tuple(shape[::-1]),
                        (len(body) // max(1, dtype.itemsize),), (2, 2, 2), ()])  # fmt: skip
    descr = rng.choice([dtype.str, "<i8", "<f4", "|O", "<c16", "|b1", "<U1", "|V8", "<f16"])
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": descr, "fortran_order": rng.random() < 0.2, "shape": shape}
    )
    parts.members[name] = header.getvalue() + body


def members(rng, parts: Parts) -> None:
    """A member removed, added, renamed, duplicated, or the metadata moved."""
    names = list(parts.members)
    choice = rng.randrange(5)
    if choice == 0 and names:
        del parts.members[rng.choice(names)]
    elif choice == 1:
        parts.members[rng.choice(["m.extra", "m.9.w", "x", "m.w.data"])] = np.zeros(3)
    elif choice == 2 and names:
        old = rng.choice(names)
        parts.members[rng.choice(["m.W", "m.w", "m.0.w", old + "x"])] = parts.members.pop(old)
    elif choice == 3 and names:
        name = rng.choice(names)
        value = parts.members[name]
        parts.extra.append((f"{name}.npy", value if isinstance(value, bytes) else _npy(value)))
    else:
        parts.extra.append(("notes.txt", b"not an array"))


def csr_structure(rng, parts: Parts) -> None:
    """indptr and indices of a CSR matrix broken: not monotone, off the end, out of range."""
    names = [
        k
        for k, v in parts.members.items()
        if k.endswith((".indptr", ".indices")) and getattr(v, "dtype", np.dtype(bool)).kind in "iu"
    ]
    if not names:
        return
    name = rng.choice(names)
    a = parts.members[name].copy()
    if a.size == 0:
        return
    if name.endswith(".indptr"):
        change = rng.randrange(4)
        if change == 0:
            a[0] = 1
        elif change == 1:
            a[-1] += rng.choice([1, -1, 10**9])
        elif change == 2:
            a[:] = a[::-1]
        else:
            a[a.size // 2] = -5
    else:
        a[rng.randrange(a.size)] = rng.choice([-1, 4, 5, 2**31 - 1, 10**6])
    parts.members[name] = a


def deflate_bomb(rng, parts: Parts) -> None:
    """Members deflated; sometimes one of them a long run of zeros (a bomb)."""
    parts.compress = True
    name = _array_name(rng, parts)
    if name is not None and rng.random() < 0.3:
        parts.members[name] = np.zeros(rng.choice([2**17, 2**22]))


MUTATORS = {
    f.__name__: f
    for f in (
        json_value, json_delete, json_add, json_numbers, json_text, json_version, array_values,
        array_dtype, array_shape, header_lie, members, csr_structure, deflate_bomb,
    )
}  # fmt: skip


# ---- mutations of the bytes -------------------------------------------------------------------
def truncate(rng, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


def flip_bytes(rng, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def zip_sizes(rng, data: bytes) -> bytes:
    """A size field of a local or central ZIP header set to another value."""
    out = bytearray(data)
    spots = [(i, (18, 22)) for i in _find_all(data, b"PK\x03\x04")]
    spots += [(i, (20, 24)) for i in _find_all(data, b"PK\x01\x02")]
    spots += [(i, (12,)) for i in _find_all(data, b"PK\x05\x06")]
    if spots:
        at, offsets = rng.choice(spots)
        spot = at + rng.choice(offsets)
        value = rng.choice([0, 1, 2**31, 2**32 - 1, rng.randrange(2**32)])
        out[spot : spot + 4] = struct.pack("<L", value)
    return bytes(out)


def _find_all(data: bytes, needle: bytes) -> list[int]:
    found, at = [], data.find(needle)
    while at >= 0:
        found.append(at)
        at = data.find(needle, at + 1)
    return found


BYTE_MUTATORS = {f.__name__: f for f in (truncate, flip_bytes, zip_sizes)}


def other_file(rng) -> bytes:
    """A file of another kind: text, random bytes, a pickle, a bare array, a LIBSVM model, an
    empty or foreign ZIP archive."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        if rng.random() < 0.5:
            zf.writestr("w.npy", _npy(np.zeros(3)))
    return rng.choice(
        [
            b"", b"hello\n", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))),
            pickle.dumps({"w": [1.0, 2.0]}), _npy(np.zeros(3)), buf.getvalue(),
            b"svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 0\nrho 0\nlabel 1 -1\n",
        ]
    )  # fmt: skip


def mutated_file(rng: random.Random, bases: dict[str, Parts]) -> tuple[str, bytes]:
    """One mutated file and what was done to it."""
    if rng.random() < 0.03:
        return "other-file", other_file(rng)
    name = rng.choice(sorted(bases))
    parts = copy.deepcopy(bases[name])
    done = [name]
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        mutator = rng.choice(sorted(MUTATORS))
        if isinstance(parts.meta, dict | list) or not mutator.startswith("json"):
            try:
                MUTATORS[mutator](rng, parts)
                done.append(mutator)
            except Exception:  # a mutation that does not apply to these parts (or dtype)
                pass
    data = parts.to_bytes()
    if rng.random() < 0.25:
        mutator = rng.choice(sorted(BYTE_MUTATORS))
        data = BYTE_MUTATORS[mutator](rng, data) if data else data
        done.append(mutator)
    return "+".join(done), data


# ---- one file ----------------------------------------------------------------------------------
def exercise(path, *, max_bytes: int = 64 << 20) -> str:
    """``"ok"`` when the file loads and predicts finite values of the right shape, ``"refused"``
    on a ``ValueError`` from loading (the file's fault) or a ``ValueError`` or ``TypeError``
    from predicting; any other exception propagates, and an ``"ok"`` model whose predictions
    are wrong in kind raises ``AssertionError``."""
    try:
        model = load_model(path, max_bytes=max_bytes)
    except ValueError:
        return "refused"
    d = model.n_features_in_ if isinstance(model, LoadedClassifier) else model.n_features
    rng = np.random.default_rng(1)
    where = (np.arange(3), rng.integers(0, d, size=3)) if d else ([], [])
    inputs = [sparse.csr_matrix((rng.normal(size=len(where[0])), where), shape=(3, d))]
    if d <= 10_000:
        inputs.append(rng.normal(size=(3, d)))
    try:
        for X in inputs:
            with warnings.catch_warnings():  # feature names: an ndarray has none
                warnings.simplefilter("ignore", UserWarning)
                labels, scores = model.predict(X), model.decision_function(X)
            assert labels.shape == (3,), labels.shape
            assert np.all(np.isfinite(scores)), scores
            classes = getattr(model, "classes_", None)
            if classes is not None:
                assert set(labels.tolist()) <= set(classes.tolist())
    except (ValueError, TypeError):
        return "refused"
    return "ok"


# ---- the campaign -----------------------------------------------------------------------------
def _worker(budget: int, memory: int) -> None:
    """Read paths from stdin, answer one JSON line each; the address space capped after the
    warm-up (imports, every base model loaded and predicted once)."""
    import resource

    with tempfile.TemporaryDirectory() as folder:
        for name, parts in base_parts().items():
            path = Path(folder) / name
            path.write_bytes(parts.to_bytes())
            assert exercise(path, max_bytes=budget) == "ok", name
    with open("/proc/self/statm") as fh:
        size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (size + memory, resource.RLIM_INFINITY))
    print(json.dumps({"ready": size}), flush=True)
    for line in sys.stdin:
        try:
            outcome = exercise(line.strip(), max_bytes=budget)
        except MemoryError:
            outcome = "over-budget"
        except BaseException as exc:  # a bug: reported, not fatal
            outcome = f"error: {type(exc).__name__}: {str(exc)[:200]}"
        print(json.dumps({"outcome": outcome}), flush=True)


class _Worker:
    def __init__(self, budget_mb: int, memory_mb: int):
        env = {**os.environ, "NUMBA_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # fmt: skip
        args = ["--worker", "--budget-mb", str(budget_mb), "--memory-mb", str(memory_mb)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __spec__.name, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        ready = self._answer(600)
        if ready is None or "ready" not in ready:
            raise RuntimeError(f"the worker did not start: {ready}")

    def _answer(self, timeout: float):
        readable, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not readable:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else {"died": self.proc.wait()}

    def run(self, path: str, timeout: float) -> str:
        self.proc.stdin.write(path + "\n")
        self.proc.stdin.flush()
        answer = self._answer(timeout)
        if answer is None:
            self.stop()
            return "hang"
        if "died" in answer:
            return f"crash (signal {-answer['died']})" if answer["died"] < 0 else "crash"
        return answer["outcome"]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def campaign(n: int, seed: int, timeout: float, budget_mb: int, memory_mb: int, keep):
    """Counts of the outcomes of ``n`` mutated files, and the failures."""
    bases = base_parts()
    counts: Counter = Counter()
    failures = []
    worker = _Worker(budget_mb, memory_mb)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for i in range(n):
            what, data = mutated_file(random.Random(f"{seed}:{i}"), bases)
            path = os.path.join(folder, f"file{i}.npz")
            with open(path, "wb") as fh:
                fh.write(data)
            outcome = worker.run(path, timeout)
            counts[outcome.split(":")[0].split(" (")[0]] += 1
            if outcome not in ("ok", "refused"):
                failures.append((i, what, outcome))
                if keep:
                    Path(keep).mkdir(parents=True, exist_ok=True)
                    Path(keep, f"file{i}.npz").write_bytes(data)
                if outcome in ("hang", "over-budget") or outcome.startswith("crash"):
                    worker.stop()
                    worker = _Worker(budget_mb, memory_mb)
            os.unlink(path)
    worker.stop()
    return counts, failures, time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="mutated files (default 10000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per file")
    parser.add_argument("--budget-mb", type=int, default=64, help="load_model's max_bytes")
    parser.add_argument("--memory-mb", type=int, default=512, help="address space over warm-up")
    parser.add_argument("--keep", help="save the files of every failure in this folder")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.budget_mb << 20, args.memory_mb << 20)
        return
    from svmbench.benchmarks.harness.environment import summary

    print(summary(note=f"worker: 1 thread, RLIMIT_AS warm-up + {args.memory_mb} MiB"))
    counts, failures, seconds = campaign(
        args.n, args.seed, args.timeout, args.budget_mb, args.memory_mb, args.keep
    )
    for i, what, outcome in failures[:50]:
        print(f"file {i} ({what}): {outcome}")
    bad = sum(v for k, v in counts.items() if k not in ("ok", "refused"))
    print(
        f"{args.n} files in {seconds:.0f} s: {counts['ok']} ok loads, {counts['refused']} clean "
        f"refusals, {counts['crash']} crashes, {counts['hang']} hangs, {counts['over-budget']} "
        f"over the budget, {counts['error']} other exceptions ({bad} failures)"
    )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
