"""Old source code for the studies that time it against this tree: ``git show REV:PATH``.

A study names a file by its path in THIS tree (``solvers/_jit/smo.py``); :func:`source_at` reads
it at a git revision, and when that revision predates a move, at the place the file had then
(:data:`FORMER_PATHS`: the split of ``benchmarks/`` into harness, cli, suites and studies, and the
anchors' move to ``solvers/anchors/``). Paths are relative to the checkout's root
(:data:`~svmbench.benchmarks.harness.environment.REPO_ROOT`), whatever the working directory: an
installed copy (not a checkout) has no history, and git's error says so.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from svmbench.benchmarks.harness.environment import REPO_ROOT

#: Where a file of this tree was before it moved (new path -> old path; a key ending in ``/`` is a
#: folder: its files kept their names).
FORMER_PATHS = {
    "benchmarks/cli/main.py": "benchmarks/cli.py",
    "benchmarks/cli/runs.py": "benchmarks/cli_runs.py",
    "benchmarks/cli/select.py": "benchmarks/select.py",
    "benchmarks/harness/": "benchmarks/",
    "benchmarks/studies/": "benchmarks/",
    "solvers/anchors/__init__.py": "benchmarks/anchors.py",
    "solvers/anchors/base.py": "benchmarks/anchors_base.py",
    "solvers/anchors/liblinear.py": "benchmarks/anchors_liblinear.py",
    "solvers/anchors/libsvm.py": "benchmarks/anchors_libsvm.py",
    "solvers/anchors/sklearn.py": "benchmarks/anchors_sklearn.py",
}


def candidate_paths(path: str) -> list[str]:
    """``path`` (of this tree), then where it was before it moved, if it did."""
    found = [path]
    if path in FORMER_PATHS:
        found.append(FORMER_PATHS[path])
    else:
        for new, old in FORMER_PATHS.items():
            if new.endswith("/") and path.startswith(new):
                found.append(old + path[len(new) :])
                break
    return found


class GitError(subprocess.CalledProcessError):
    """A git command that failed; its message ends with what git said."""

    def __str__(self) -> str:
        return f"{super().__str__()} {(self.stderr or '').strip()}".rstrip()


def git(*args: str) -> str:
    """``git ARGS`` run at the checkout's root; its output (:class:`GitError` on failure)."""
    try:
        return subprocess.run(
            ["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, check=True
        ).stdout
    except subprocess.CalledProcessError as exc:
        raise GitError(exc.returncode, exc.cmd, exc.output, exc.stderr) from None


def source_at(rev: str, path: str) -> str:
    """The text of ``path`` at revision ``rev``: at its path in this tree, else at its former
    path (:class:`GitError` naming every path tried when neither exists there)."""
    tried = candidate_paths(path)
    for candidate in tried:
        try:
            return git("show", f"{rev}:{candidate}")
        except GitError as exc:
            error = exc
    raise GitError(
        error.returncode,
        error.cmd,
        "",
        f"{rev} has none of {', '.join(tried)}: {error.stderr.strip()}",
    )


def last_change(path: str) -> str:
    """The last commit that changed ``path`` (or its former path, before a move)."""
    return git("log", "-1", "--format=%H", "--", *candidate_paths(path)).strip()


def import_source(text: str, name: str, directory: Path):
    """``text`` written to ``directory/name.py`` and imported as the module ``name``."""
    file = Path(directory) / f"{name}.py"
    file.write_text(text)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
