"""Writing files without destroying any: a temporary file renamed into place, output paths
checked before the work that fills them, and an output never one of the inputs.

Every file the harness and the command line write (CSV exports, reports, predictions, saved
models, plots) goes through :func:`replaced_atomically`: the content is written to a new file in
the destination's folder and renamed over the destination only once complete, so that an
interrupted or failed write leaves the previous file (or none) as it was.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path


@contextlib.contextmanager
def replaced_atomically(path: str | os.PathLike) -> Iterator[Path]:
    """A new temporary path beside ``path`` (same folder, same suffix), renamed to ``path`` when
    the block ends without an exception and removed otherwise.

    The temporary file is created empty (mode 0o666 less the umask, as ``open`` would); the
    block writes it by name. ``os.replace`` is atomic within a folder, so a reader sees the old
    file or the new one, never a part.
    """
    target = Path(path)
    for _ in range(100):
        temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp{target.suffix}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        break
    else:  # pragma: no cover - 100 collisions of 32 random bits
        raise FileExistsError(f"{target}: cannot create a temporary file beside it")
    try:
        yield temp
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name one file (through links, ``..`` or symbolic links)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare where they lead
        return Path(a).resolve() == Path(b).resolve()


def check_output(
    path: str | os.PathLike, flag: str, *, inputs: Iterable[tuple[str, str | None]] = ()
) -> Path:
    """``path`` as an output of the option ``flag``, checked before any work: refused (a
    ``ValueError`` naming ``flag``) when it is one of ``inputs`` (``(what, path)`` pairs: what
    the input is, e.g. "the model file", and its path), a
    directory, or in a folder that does not exist or cannot be written."""
    out = Path(path)
    for name, source in inputs:
        if source is not None and same_file(out, source):
            raise ValueError(f"{flag} {out} is {name}: refusing to overwrite an input")
    if out.is_dir():
        raise ValueError(f"{flag} {out}: a directory; give a file name")
    check_folder(out.parent, flag, out)
    return out


def check_folder(folder: str | os.PathLike, flag: str, path: str | os.PathLike) -> None:
    """Refuse (``ValueError`` naming ``flag``) a folder that does not exist or cannot be
    written, before any work is done for ``path``."""
    folder = Path(folder) if str(folder) else Path(".")
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() else "does not exist"
        raise ValueError(f"{flag} {path}: the folder {folder} {what}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: the folder {folder} is not writable")


def check_output_folder(path: str | os.PathLike, flag: str) -> Path:
    """``path`` as an output directory of the option ``flag`` (created later when missing):
    refused when it is a file, or when its nearest existing folder cannot be written."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{flag} {out}: not a directory")
    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    check_folder(existing, flag, out)
    return out


__all__ = ["check_folder", "check_output", "check_output_folder", "replaced_atomically",
           "same_file"]  # fmt: skip
