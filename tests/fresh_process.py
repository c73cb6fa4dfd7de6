"""Run a snippet in a new Python process, as a user's first ``import svmbench`` would."""

from __future__ import annotations

import os
import subprocess
import sys


def run_python(code: str, cwd, *, timeout: float = 120, **env_overrides: str):
    """``python -c code`` in ``cwd`` with this interpreter, without the test run's PYTHONPATH.

    ``env_overrides`` are set in the child's environment. Returns the completed process (text
    output captured); the caller asserts on its return code and output.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip
