"""Reading untrusted files: what the model files, the LIBSVM files and the suites share.

- :func:`open_regular` opens a path only when it is a regular file of bounded size: a FIFO, a
  directory, a device or a socket is refused before it is opened for reading (a FIFO would
  block until a writer comes), and the file is checked again through its descriptor once open.
- :func:`nesting_depth` measures how deeply a JSON or TOML text nests its arrays and tables,
  outside strings and comments, in linear time and without recursion, so that a parser that
  recurses (the standard library's JSON and TOML readers) only sees texts of bounded depth;
  :func:`loads_json` parses one such text.
- :func:`machine_memory` is the physical memory, the bound of what any data set may take.

Every refusal is a ``ValueError`` that names the file and says what was expected.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import BinaryIO

import numpy as np

__all__ = ["MAX_NESTING", "loads_json", "machine_memory", "nesting_depth", "open_regular"]

#: The deepest nesting of arrays and objects (tables) a JSON or TOML text may have.
MAX_NESTING = 32

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind_of(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a file of another type")


def _must(what: str) -> str:
    return f"the {what} must be a regular file"


def open_regular(path, *, max_bytes: int, what: str) -> BinaryIO:
    """``path`` opened for binary reading, when it is a regular file of at most ``max_bytes``.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int
        The largest size accepted.
    what : str
        What the file should be ("model file", "suite file", ...), for the messages.

    Raises
    ------
    ValueError
        For a missing or unreadable path, anything but a regular file (named: a directory, a
        FIFO, a device, a socket), or a file over ``max_bytes``; the message names the path.
    """
    where = os.fspath(path)
    try:
        mode = os.stat(where).st_mode  # follows links: a link to a FIFO is a FIFO
        if not stat.S_ISREG(mode):
            raise ValueError(f"{where}: not a regular file but {_kind_of(mode)}; {_must(what)}")
        # O_NONBLOCK: were the path swapped for a FIFO since, the open returns at once
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(where, flags | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise ValueError(f"{where}: no such {what}") from None
    except OSError as exc:
        raise ValueError(f"{where}: cannot read the {what}: {exc.strerror or exc}") from None
    fh = os.fdopen(fd, "rb")
    try:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            kind = _kind_of(info.st_mode)
            raise ValueError(f"{where}: not a regular file but {kind}; {_must(what)}")
        if info.st_size > max_bytes:
            raise ValueError(
                f"{where}: {info.st_size} bytes, over the cap of {max_bytes} bytes for a {what}"
            )
    except BaseException:
        fh.close()
        raise
    return fh


# strings and comments, removed before the brackets are counted
_JSON_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_TOML_SKIPPED = re.compile(
    rb'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|\'[^\'\n]*\'|#[^\n]*'
)
_STEP = np.zeros(256, dtype=np.int64)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_CHUNK = 1 << 20


def nesting_depth(text: str | bytes, *, toml: bool = False) -> int:
    """The deepest nesting of ``[``/``{`` in ``text`` outside strings (and TOML's comments).

    TOML's table headers (``[a]``, ``[[a]]``) count as one or two levels on their own line. A
    bracket left unclosed counts; a stray closing one lowers the count (the parser then refuses
    the text anyway). Linear time, in chunks of bounded memory."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    brackets = (
        (_TOML_SKIPPED if toml else _JSON_STRINGS).sub(b"", data).translate(None, _NOT_BRACKETS)
    )
    level = deepest = 0
    for start in range(0, len(brackets), _CHUNK):
        chunk = np.frombuffer(brackets[start : start + _CHUNK], dtype=np.uint8)
        levels = level + np.cumsum(_STEP[chunk])
        deepest, level = max(deepest, int(levels.max())), int(levels[-1])
    return deepest


def loads_json(text: str, *, max_depth: int = MAX_NESTING):
    """``json.loads(text)`` for a text nested at most ``max_depth`` deep (ValueError otherwise,
    before the recursive parser runs)."""
    depth = nesting_depth(text)
    if depth > max_depth:
        raise ValueError(f"JSON nested {depth} deep, over the limit of {max_depth}")
    return json.loads(text)


def machine_memory() -> int | None:
    """The machine's physical memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        try:
            import psutil

            return int(psutil.virtual_memory().total)
        except Exception:  # psutil may fail where sysconf does: then no answer
            return None
