"""One line on stderr before a long first compilation, and only then.

Numba compiles a jitted core the first time a signature of it runs on a machine (seconds to a
minute each on a small machine) and loads it from its on-disk cache afterwards (milliseconds). A
warm-up that finishes leaves a marker file beside that cache, named after what it compiled
(:func:`mark_compiled`); the cache directory is keyed on the jitted sources (solvers/_jit), so an
edit of them starts without markers, as it starts without compiled code. A warm-up whose marker
is missing says so first (:func:`compiling`)::

    svmbench: compiling smo for dense rows, float64 columns, a free bias (once per machine;
    up to a minute)…
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from svmbench.solvers._jit import CACHE_DIR

#: The folder of the markers, inside the sources' own cache directory.
MARKERS = "warmed"


def _marker(tag: str) -> Path:
    return CACHE_DIR / MARKERS / re.sub(r"[^A-Za-z0-9_.-]", "_", tag)


def needs_compiling(tag: str) -> bool:
    """Whether the warm-up named ``tag`` has never finished with these sources on this machine
    (its marker is missing): its compilation is then ahead, not a cache load."""
    return not _marker(tag).exists()


def mark_compiled(tag: str) -> None:
    """Leave the marker of ``tag`` (a read-only cache directory just leaves none)."""
    path = _marker(tag)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()


@contextlib.contextmanager
def compiling(tag: str | tuple[str, ...], method: str, what: str) -> Iterator[None]:
    """Around a warm-up: one line on stderr before it when a marker of ``tag`` (one tag, or a
    tuple of the variants it compiles) is missing (``svmbench: compiling <method> for <what>
    (once per machine; up to a minute)…``), the markers left after it finishes."""
    tags = (tag,) if isinstance(tag, str) else tuple(tag)
    if any(needs_compiling(t) for t in tags):
        print(
            f"svmbench: compiling {method} for {what} (once per machine; up to a minute)…",
            file=sys.stderr,
            flush=True,
        )
        yield
        for t in tags:
            mark_compiled(t)
    else:
        yield


def announced(method: str, what: str) -> Callable[[Callable], Callable]:
    """Decorate a solver's ``warm_up``: :func:`compiling` around it, under the tag
    ``<method>-all`` (``what`` names the variants it compiles)."""

    def wrap(warm_up: Callable) -> Callable:
        @functools.wraps(warm_up)
        def run(self, *args, **kwargs):
            with compiling(f"{method}-all", method, what):
                return warm_up(self, *args, **kwargs)

        return run

    return wrap
