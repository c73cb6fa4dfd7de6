"""What a measurement ran on: versions, machine, git commit, threads and peak memory.

The harness stores :func:`environment` in every record; the comparison studies print
:func:`summary`, a one-line rendering of the same capture (plus the load average and the threads
of the process), so that every figure says once, in one format, where it comes from.
:func:`pinned_threads` limits Numba and BLAS/OpenMP threads inside a block, and
:class:`PeakMemory` measures a block's peak resident memory.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any

_PACKAGES = (
    "numpy",
    "scipy",
    "numba",
    "scikit-learn",
    "osqp",
    "clarabel",
    "cvxpy",
    "libsvm-official",
    "liblinear-official",
    "scikit-learn-intelex",
    "threadpoolctl",
    "dask",
    "distributed",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


#: The root of the checkout this package runs from (an editable install): the folder that holds
#: ``benchmarks/harness/`` (this file). In an installed copy it is a folder of site-packages, with
#: no ``.git``.
REPO_ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _release() -> str:
    """``release X.Y.Z`` of the installed distribution: what a run records without a checkout."""
    from importlib import metadata

    try:
        return f"release {metadata.version('svmbench')}"
    except metadata.PackageNotFoundError:
        return "unknown"


def git_commit() -> str:
    """``HEAD`` of the repository this package runs from, with ``-dirty`` for local changes;
    ``release X.Y.Z`` (the installed version) for a copy installed from an archive."""
    root = REPO_ROOT
    if not (root / ".git").exists():  # an installed copy, not a checkout
        return _release()
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return _release()
    return (head + ("-dirty" if dirty else "")) if head else _release()


@functools.cache
def _static_environment() -> dict[str, Any]:
    from importlib import metadata

    import psutil

    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "versions": versions,
        "machine": {
            "host": socket.gethostname(),
            "platform": platform.platform(),
            "cpu": _cpu_model(),
            "physical_cores": psutil.cpu_count(logical=False),
            "logical_cores": psutil.cpu_count(logical=True),
            "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        },
    }


def environment(commit: str | None = None) -> dict[str, Any]:
    """Versions of Python and the numerical and solver packages, the machine, the git commit."""
    env = dict(_static_environment())
    env["git_commit"] = commit or git_commit()
    return env


def thread_info() -> dict[str, Any]:
    """The Numba and BLAS/OpenMP threads this process uses now."""
    from threadpoolctl import threadpool_info

    out: dict[str, Any] = {}
    try:
        import numba

        out["numba"] = numba.get_num_threads()
    except ImportError:
        pass
    for pool in threadpool_info():
        out[f"{pool.get('user_api')}:{pool.get('internal_api')}"] = pool.get("num_threads")
    return out


@contextlib.contextmanager
def pinned_threads(threads: int):
    """Limit Numba and BLAS/OpenMP threads to ``threads`` inside the block."""
    from threadpoolctl import threadpool_limits

    previous = None
    try:
        import numba

        previous = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    except ImportError:
        pass
    with threadpool_limits(limits=threads):
        try:
            yield
        finally:
            if previous is not None:
                import numba

                numba.set_num_threads(previous)


def thread_variables(threads: int) -> dict[str, str]:
    """The environment variables that pin Numba, OpenMP and BLAS threads in a new process."""
    t = str(threads)
    return {
        "NUMBA_NUM_THREADS": t,
        "OMP_NUM_THREADS": t,
        "OPENBLAS_NUM_THREADS": t,
        "MKL_NUM_THREADS": t,
        "VECLIB_MAXIMUM_THREADS": t,
    }


# --------------------------------------------------------------------------------------------------
# Peak memory of the current process
# --------------------------------------------------------------------------------------------------


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


class PeakMemory:
    """Peak resident memory of this process inside a ``with`` block, in MB.

    On Linux the kernel's high-water mark is reset on entry (``/proc/self/clear_refs``) and read
    on exit (``VmHWM``); elsewhere a thread samples the resident size every 5 ms.
    """

    def __enter__(self):
        self.baseline = _rss_mb()
        self._hwm = False
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self._hwm = True
        except OSError:
            import threading

            self._peak = self.baseline
            self._stop = threading.Event()

            def sample():
                while not self._stop.wait(0.005):
                    self._peak = max(self._peak, _rss_mb())

            self._thread = threading.Thread(target=sample, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._hwm:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    self.peak = int(line.split()[1]) / 1024
                    break
            else:
                self.peak = _rss_mb()
        else:
            self._stop.set()
            self._thread.join()
            self.peak = max(self._peak, _rss_mb())
        return False


# --------------------------------------------------------------------------------------------------
# One line for a study's printout
# --------------------------------------------------------------------------------------------------


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def summary(*packages: str, note: str = "") -> str:
    """One line: machine, load average, versions, threads and git commit (from :func:`environment`).

    Parameters
    ----------
    *packages : str
        Distributions whose versions are named beside Python, NumPy, SciPy and Numba (e.g.
        ``"liblinear-official"``); a missing one is said to be "not installed".
    note : str, default=""
        What the study adds about its own set-up (threads of a library, options), appended.
    """
    bad = [p for p in packages if not isinstance(p, str)]
    if bad:
        raise TypeError(f"packages must be distribution names (str), got {bad[0]!r}")
    env = environment()
    machine = env["machine"]
    versions = env["versions"]
    names = ["numpy", "scipy", "numba", *packages]
    listed = [f"python {versions['python']}"]
    listed += [f"{name} {versions.get(name) or _version(name)}" for name in dict.fromkeys(names)]
    variables = [
        f"{k}={os.environ[k]}"
        for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
        if k in os.environ
    ]
    threads = ", ".join(f"{k} {v}" for k, v in thread_info().items())
    load = "/".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    parts = [
        f"{machine['cpu']}, {machine['logical_cores']} logical cores, {machine['platform']}",
        f"load average {load}",
        ", ".join(listed),
        f"threads: {threads}" + (f" ({' '.join(variables)})" if variables else ""),
        f"commit {env['git_commit'][:12]}",
    ]
    return "; ".join(parts + ([note] if note else []))


__all__ = [
    "PeakMemory",
    "environment",
    "git_commit",
    "pinned_threads",
    "summary",
    "thread_info",
    "thread_variables",
]
