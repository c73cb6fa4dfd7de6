"""Numba-jitted cores, one module per method (plain ``@njit(cache=True)`` functions over arrays).

Numba's on-disk cache checks only the source file of a cached function, not the files of the
functions it calls: an edit of ``common.py`` would leave ``smo.py``'s cached machine code stale.
So the cache lives in a directory named after a hash of every source file of this package and
of the jitted files of ``problems`` they call: any edit there starts a fresh cache
(``NUMBA_CACHE_DIR``, when set, is the parent directory).
"""

from __future__ import annotations

import gc
import hashlib
import os
from pathlib import Path


def _load_numba():
    """Import Numba and load its typing and lowering registries, with Python's cyclic garbage
    collector paused.

    The first call of any jitted function, even one loaded from the cache, loads those
    registries (``BaseContext.refresh``); importing Numba and loading them build some 80 000
    long-lived objects and next to no garbage, over which the collector would otherwise run its
    generational passes many times (the full ones across everything the process holds,
    scikit-learn and SciPy included). They are then moved into the oldest generation, where
    only a full collection traverses them (the objects the process held before move with them,
    as if they had survived two collections), and the collector resumes as it was."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        import numba
        from numba.core.compiler_lock import global_compiler_lock
        from numba.core.registry import cpu_target

        with global_compiler_lock:  # as Numba holds it around its own refresh
            cpu_target.target_context.refresh()
        if gc.get_freeze_count() == 0:  # nothing frozen by anyone: no freeze of theirs undone
            gc.freeze()  # every tracked object to the permanent generation,
            gc.unfreeze()  # and back into the oldest one (two list splices, no traversal)
    finally:
        if collecting:
            gc.enable()
    return numba


numba = _load_numba()

#: Jitted sources outside this package that the cores here call (and inline): the kernel values
#: from inner products and the exponential of the certificates.
SHARED_SOURCES = (Path(__file__).parents[2] / "problems" / "_kernel_products.py",)


def _sources_digest(
    directory: Path = Path(__file__).parent, shared: tuple[Path, ...] = SHARED_SOURCES
) -> str:
    """A hash of the Numba version, of every ``*.py`` file (name and bytes) in ``directory`` and
    of the ``shared`` files they call."""
    digest = hashlib.sha256(numba.__version__.encode())
    for path in [*sorted(directory.glob("*.py")), *shared]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cache_root() -> Path:
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return Path(user)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "svmbench" / "numba"


#: Where the jitted cores of this exact source tree keep their compiled code.
CACHE_DIR = _cache_root() / f"src-{_sources_digest()}"
numba.config.CACHE_DIR = str(CACHE_DIR)
