"""The ``.npz`` archive of a model file, read as untrusted input, without ``np.load``.

:class:`ModelArchive` opens the ZIP archive of an open regular file and reads the ``.npy``
header of every member before any array: each must declare a numeric array of at most two
dimensions whose bytes are exactly what the member holds, stored or deflated (no other
compression, no encryption), a deflated member expanding at most :data:`MAX_EXPANSION`-fold
beyond its first :data:`EXPANSION_FLOOR` bytes, and the members together expanding to at most
the memory budget. The central directory is bounded before the ZIP reader parses it, and so is
the number of members. An array is then read by :meth:`ModelArchive.read` into memory of
exactly its declared size: nothing a header or a ZIP field says can make reading allocate more
than the budget, and no byte is ever unpickled.

A file that is no ZIP archive at all (text, a bare ``.npy`` array, a pickle) raises
:class:`NotAModelFile`; a ZIP archive that breaks a rule raises :class:`DamagedModelFile`.
"""

from __future__ import annotations

import math
import struct
import zipfile
import zlib
from typing import BinaryIO, NamedTuple

import numpy as np

__all__ = [
    "EXPANSION_FLOOR",
    "MAX_DIMENSION",
    "MAX_DIRECTORY_BYTES",
    "MAX_EXPANSION",
    "MAX_MEMBERS",
    "DamagedModelFile",
    "ModelArchive",
    "NotAModelFile",
    "NpyHeader",
]

#: How far a deflated member may expand beyond :data:`EXPANSION_FLOOR` bytes (the numbers of a
#: model compress far less: a bomb of zeros expands about 1000-fold).
MAX_EXPANSION = 100
#: The bytes a deflated member may expand to whatever its compressed size.
EXPANSION_FLOOR = 1 << 20
#: The largest ZIP central directory parsed (about 150 000 members of a model file).
MAX_DIRECTORY_BYTES = 16 << 20
#: The most members an archive may have.
MAX_MEMBERS = 1 << 18
#: The largest dimension an array may declare (also when another dimension is 0).
MAX_DIMENSION = 2**31 - 1

_CHUNK = 1 << 20
_EOCD = struct.Struct("<4s4H2LH")  # end of central directory
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")
_EXCEPTIONS = (
    ValueError, EOFError, OSError, zipfile.BadZipFile, zlib.error, NotImplementedError,
    RuntimeError, TypeError, SyntaxError, OverflowError, struct.error,
)  # fmt: skip


class NotAModelFile(Exception):
    """A file that is no ZIP archive (no ``.npz``)."""


class DamagedModelFile(Exception):
    """A ZIP archive that does not hold what a model file holds, or not as one holds it."""


class NpyHeader(NamedTuple):
    """What a member's ``.npy`` header declares, and where its data starts."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool
    offset: int

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def _directory_bytes(fh: BinaryIO, size: int) -> int:
    """The size of the central directory that the end record declares, located as the ZIP
    reader locates it (a record without comment at the end, else the last one in the final
    64 KiB); :class:`NotAModelFile` when there is none."""
    fh.seek(max(0, size - _EOCD.size - 0xFFFF))
    tail = fh.read()
    at = len(tail) - _EOCD.size
    if at < 0:
        raise NotAModelFile("too short to be an .npz archive")
    if not (tail[at : at + 4] == b"PK\x05\x06" and tail[-2:] == b"\x00\x00"):
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or at + _EOCD.size > len(tail):
            raise NotAModelFile("not an .npz (ZIP) archive")
    record = _EOCD.unpack_from(tail, at)
    cd_bytes = record[5]
    start = size - len(tail) + at - _ZIP64_LOCATOR.size
    if start >= 0:
        fh.seek(start)
        locator = _ZIP64_LOCATOR.unpack(fh.read(_ZIP64_LOCATOR.size))
        if locator[0] == b"PK\x06\x07" and locator[2] <= size - _ZIP64_EOCD.size:
            fh.seek(locator[2])
            zip64 = _ZIP64_EOCD.unpack(fh.read(_ZIP64_EOCD.size))
            if zip64[0] == b"PK\x06\x06":
                cd_bytes = zip64[8]
    return cd_bytes


class ModelArchive:
    """The members of a model file's archive, their headers checked (see the module docstring).

    Parameters
    ----------
    fh : binary file object
        An open regular file of ``size`` bytes (:func:`~svmbench.problems.untrusted.open_regular`).
    size : int
    max_bytes : int
        The memory budget: the members expand to at most this many bytes (what they take as
        float64 is the document's check, :func:`~svmbench.problems.model_documents.check_shapes`).

    Attributes
    ----------
    headers : dict
        ``name → NpyHeader`` of every member, by its array name (the member name without
        ``.npy``).
    """

    def __init__(self, fh: BinaryIO, size: int, *, max_bytes: int):
        fh.seek(0)
        magic = fh.read(6)
        if not magic:
            raise NotAModelFile("an empty file")
        if magic == b"\x93NUMPY":
            raise NotAModelFile("a single .npy array, not an .npz archive")
        if size < _EOCD.size or magic[:2] != b"PK":
            raise NotAModelFile(f"not an .npz (ZIP) archive: it starts with {magic!r}")
        try:
            cd_bytes = _directory_bytes(fh, size)
            if cd_bytes > min(size, MAX_DIRECTORY_BYTES):
                raise DamagedModelFile(
                    f"its ZIP directory declares {cd_bytes} bytes (the limit: "
                    f"{min(size, MAX_DIRECTORY_BYTES)})"
                )
            fh.seek(0)
            self._zip = zipfile.ZipFile(fh)
        except NotAModelFile:
            raise
        except DamagedModelFile:
            raise
        except _EXCEPTIONS as exc:
            raise DamagedModelFile(f"not a readable ZIP archive ({exc})") from None
        try:
            self.headers = self._check_members(size, max_bytes)
        except BaseException:
            self._zip.close()
            raise

    def __enter__(self) -> ModelArchive:
        return self

    def __exit__(self, *exc) -> None:
        self._zip.close()

    def _check_members(self, size: int, max_bytes: int) -> dict[str, NpyHeader]:
        infos = self._zip.infolist()
        if len(infos) > MAX_MEMBERS:
            raise DamagedModelFile(f"it has {len(infos)} members (the limit: {MAX_MEMBERS})")
        if sum(info.compress_size for info in infos) > size:
            raise DamagedModelFile("its members declare more bytes than the file holds")
        if sum(info.file_size for info in infos) > max_bytes:
            raise DamagedModelFile(
                f"its members expand to {sum(info.file_size for info in infos)} bytes, over the "
                f"memory budget of {max_bytes} bytes"
            )
        headers: dict[str, NpyHeader] = {}
        self._infos: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            if not name.endswith(".npy") or name.startswith("/") or len(name) > 200:
                raise DamagedModelFile(f"the member {name[:80]!r} is not an .npy array")
            if name[:-4] in headers:
                raise DamagedModelFile(f"the member {name} appears twice")
            _check_sizes(info)
            header = self._header(info)
            headers[name[:-4]], self._infos[name[:-4]] = header, info
        return headers

    def _header(self, info: zipfile.ZipInfo) -> NpyHeader:
        name = info.filename
        try:
            with self._zip.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
                elif version == (2, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
                else:
                    raise ValueError(f".npy format version {version}")
                offset = fh.tell()
        except _EXCEPTIONS as exc:
            raise DamagedModelFile(f"the member {name} is no .npy array ({exc})") from None
        if dtype.hasobject:
            raise DamagedModelFile(
                f"the member {name} holds Python objects, which a model file never does (it is "
                "never unpickled)"
            )
        if dtype.kind not in "biuf" or not 0 < dtype.itemsize <= 8 or dtype.fields:
            raise DamagedModelFile(f"the member {name} holds a {dtype} array, not numbers")
        if len(shape) > 2 or any(not 0 <= s <= MAX_DIMENSION for s in shape):
            raise DamagedModelFile(f"the member {name} declares an array of shape {shape}")
        declared = math.prod(shape) * dtype.itemsize
        if declared != info.file_size - offset:
            raise DamagedModelFile(
                f"the member {name} declares an array of shape {shape} ({declared} bytes) but "
                f"holds {info.file_size - offset} bytes"
            )
        return NpyHeader(tuple(shape), dtype, bool(fortran), offset)

    def read(self, name: str) -> np.ndarray:
        """The array of member ``name`` (a new, writable array of its header's shape and dtype);
        :class:`DamagedModelFile` when the member holds other bytes than it declares."""
        header, info = self.headers[name], self._infos[name]
        out = np.empty(header.size, dtype=header.dtype)
        view = memoryview(out.view(np.uint8))
        try:
            with self._zip.open(info) as fh:
                fh.read(header.offset)
                filled = 0
                while filled < view.nbytes:  # in chunks: no second copy of a large member
                    chunk = fh.read(min(_CHUNK, view.nbytes - filled))
                    if not chunk:
                        break
                    view[filled : filled + len(chunk)] = chunk
                    filled += len(chunk)
                if filled != view.nbytes or fh.read(1):
                    raise DamagedModelFile(f"the member {info.filename} is truncated")
        except DamagedModelFile:
            raise
        except _EXCEPTIONS as exc:
            raise DamagedModelFile(f"the member {info.filename} is damaged ({exc})") from None
        return out.reshape(header.shape, order="F" if header.fortran else "C")


def _check_sizes(info: zipfile.ZipInfo) -> None:
    """A member stored as it is or deflated, not encrypted, expanding within the limits."""
    name = info.filename
    if info.flag_bits & 0x1:
        raise DamagedModelFile(f"the member {name} is encrypted")
    if info.compress_type == zipfile.ZIP_STORED:
        if info.file_size != info.compress_size:
            raise DamagedModelFile(f"the stored member {name} declares two sizes")
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        if info.file_size > MAX_EXPANSION * info.compress_size + EXPANSION_FLOOR:
            raise DamagedModelFile(
                f"the member {name} expands from {info.compress_size} to {info.file_size} "
                f"bytes, over the limit of {MAX_EXPANSION}-fold (the numbers of a model do not "
                "compress that far)"
            )
    else:
        raise DamagedModelFile(
            f"the member {name} is compressed by method {info.compress_type} (a model file's "
            "members are stored or deflated)"
        )
