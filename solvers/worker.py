"""A library call that cannot be interrupted, run in a forked worker process stopped at a deadline.

Some libraries hold the interpreter for as long as they run and check no clock of ours (LIBSVM
inside scikit-learn; Clarabel before its first iteration, whose factorization can take minutes on
a sparse problem that fills in). Their cost depends on the data's conditioning and structure, not
only on its size, so no estimate made beforehand is honest. With a time limit such a call runs
in a child forked from this process (the inputs are shared, copy-on-write, never serialized), and
the child is killed at the deadline. The child returns plain arrays and JSON scalars through a
pipe, as an ``.npz`` read with ``allow_pickle=False``: nothing is unpickled. Where ``fork`` is not
available the call runs in this process, as without a limit.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: The key of the seconds a worker's call took beyond ``fn()`` itself (the fork, the transfer),
#: in the dict it returns: a solver's clock leaves them out.
OVERHEAD = "__overhead__"

#: The exceptions a failed call re-raises under their own type (any other: ``RuntimeError``).
_PASSED_ON = (ValueError, TypeError, MemoryError, ArithmeticError, RuntimeError)


@dataclass(frozen=True)
class Stopped:
    """A worker killed at its deadline: ``seconds`` it was given."""

    seconds: float


#: Whether this process forks workers for such calls (see :func:`calls_stay_in_this_process`).
_FORKING = {"enabled": True}


def calls_stay_in_this_process() -> None:
    """Run every call in this process from now on: for a process that its parent itself stops
    at a deadline (the harness's local workers), where a fork per call would only add its cost
    to the timings (a small anchor fit took 1.5 to 2 times as long in a forked child)."""
    _FORKING["enabled"] = False


def can_fork() -> bool:
    """Whether calls run in a forked worker here."""
    return _FORKING["enabled"] and hasattr(os, "fork")


def _encode(result: dict) -> bytes:
    """``result`` (names → arrays, or JSON values) as the bytes of an ``.npz``."""
    arrays = {k: v for k, v in result.items() if isinstance(v, np.ndarray)}
    doc = {k: v for k, v in result.items() if not isinstance(v, np.ndarray)}
    arrays["__doc__"] = np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _decode(data: bytes) -> dict:
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        result = {k: archive[k] for k in archive.files if k != "__doc__"}
        result.update(json.loads(bytes(archive["__doc__"]).decode()))
    return result


def _child(fn: Callable[[], dict], fd: int) -> None:
    try:
        tic = time.perf_counter()
        result = fn()
        payload = _encode({**result, OVERHEAD: time.perf_counter() - tic})
    except BaseException as exc:  # reported to the parent, which raises it
        payload = _encode({"__error__": str(exc), "__type__": type(exc).__name__})
    try:
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(payload)
    finally:
        os._exit(0)  # no atexit handlers, no flushing of buffers inherited from the parent


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def call_with_deadline(fn: Callable[[], dict], seconds: float) -> dict | Stopped:
    """``fn()`` (a dict of arrays and JSON values) in a forked worker, with the seconds the call
    took beyond ``fn()`` under :data:`OVERHEAD`, or :class:`Stopped` when it has not begun to
    answer within ``seconds`` (the worker is then killed). An exception in
    the worker is raised here with its message (under its own type for the common ones).
    Without ``fork``, ``fn()`` runs in this process. ``os.fork`` rather than
    ``multiprocessing``: the harness's daemonic workers may not start processes of their own."""
    if not can_fork():
        return {**fn(), OVERHEAD: 0.0}
    started = time.perf_counter()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(read_end)
        _child(fn, write_end)
    os.close(write_end)
    data = None
    try:
        ready, _, _ = select.select([read_end], [], [], max(seconds, 0.0))
        if not ready:
            return Stopped(seconds)
        data = _read_all(read_end)
    finally:  # stopped at the deadline, or interrupted (Ctrl-C): the worker does not outlive it
        os.close(read_end)
        if data is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, code = os.waitpid(pid, 0)
    if not data:  # the worker died without a word (a crash inside the library)
        raise RuntimeError(f"the worker process ended with wait status {code} and no result")
    result = _decode(data)
    if "__error__" in result:
        kind = getattr(builtins, str(result["__type__"]), None)
        kind = kind if isinstance(kind, type) and issubclass(kind, _PASSED_ON) else RuntimeError
        raise kind(f"{result['__error__']} (in the worker process)")
    result[OVERHEAD] = max(0.0, time.perf_counter() - started - float(result[OVERHEAD]))
    return result
