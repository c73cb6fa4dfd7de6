"""The stored records as files: CSV (every stored column) and Parquet (with pyarrow).

Both take the records as :meth:`~benchmarks.harness.store.Store.records` reads them with
``decode=False``: one row per record, every column of the ``records`` table, the JSON columns
(problem, options, trace, environment, extras, ...) as their JSON text. The columns of
:data:`~benchmarks.harness.store.SUMMARY_COLUMNS` come first, the others after them in the
table's order; a database written before a column existed reads it as empty.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from svmbench.benchmarks.harness.files import replaced_atomically

#: The optional extra that installs pyarrow.
PARQUET_EXTRA = "parquet"


def export_columns(rows: Sequence[dict[str, Any]], first: Iterable[str]) -> list[str]:
    """``first``, then every other column of ``rows`` in the order it first appears."""
    columns = list(dict.fromkeys(first))
    seen = set(columns)
    for row in rows:
        for name in row:
            if name not in seen:
                seen.add(name)
                columns.append(name)
    return columns


def csv_text(rows: Sequence[dict[str, Any]], first: Iterable[str]) -> str:
    """The rows as CSV text, with the columns of :func:`export_columns`."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=export_columns(rows, first), restval="")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def parquet_missing() -> str | None:
    """Why Parquet cannot be written here (pyarrow missing), or None."""
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return (
            f"Parquet export needs pyarrow, the optional extra {PARQUET_EXTRA!r}: "
            f"pip install 'svmbench[{PARQUET_EXTRA}]'"
        )
    return None


def write_parquet(rows: Sequence[dict[str, Any]], path: str | Path, first: Iterable[str]) -> int:
    """Write the rows to ``path`` as Parquet (through a file renamed into place); the number
    of rows. ``ImportError`` naming the extra when pyarrow is not installed."""
    why = parquet_missing()
    if why:
        raise ImportError(why)
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = export_columns(rows, first)
    table = pa.table({name: [row.get(name) for row in rows] for name in columns})
    with replaced_atomically(path) as temp:
        pq.write_table(table, temp)
    return len(rows)
