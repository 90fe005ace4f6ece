"""The engine's raw columns as pyarrow arrays, without a copy.

The engine hands a table over as ``{column_name: raw_column}``: a numeric
column is ``(dtype, data)``, a type code of :data:`ENGINE_TYPES` and
little-endian contiguous bytes, and a string column is a list of ``str``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = [
    "ENGINE_DTYPES",
    "ENGINE_TYPES",
    "column_rows",
    "column_to_arrow",
    "table_from_raw",
    "tables_from_raw",
]

ENGINE_TYPES: dict[str, pa.DataType] = {
    "u8": pa.uint8(),
    "u32": pa.uint32(),
    "u64": pa.uint64(),
    "i64": pa.int64(),
    "f64": pa.float64(),
}
"""Numeric column type codes used by the engine (little-endian), as arrow types."""


ENGINE_DTYPES: dict[str, np.dtype[Any]] = {
    code: np.dtype(t.to_pandas_dtype()).newbyteorder("<") for code, t in ENGINE_TYPES.items()
}
"""The same type codes as little-endian numpy dtypes."""


def column_to_arrow(column: Any, name: str = "?") -> pa.Array:
    """Convert one raw engine column to a pyarrow array.

    A numeric column is ``(dtype, data)`` with ``dtype`` a key of
    :data:`ENGINE_TYPES` and ``data`` little-endian contiguous bytes, which
    the array shares without a copy; a string column is a list of ``str``.
    """
    if (
        isinstance(column, tuple)
        and len(column) == 2
        and isinstance(column[0], str)
        and isinstance(column[1], (bytes, bytearray, memoryview))
    ):
        code, data = column
        arrow_type = ENGINE_TYPES.get(code)
        if arrow_type is None:
            known = ", ".join(ENGINE_TYPES)
            raise ValueError(f"column {name!r}: unknown dtype {code!r}; expected one of {known}")
        width = arrow_type.bit_width // 8
        if len(data) % width:
            raise ValueError(
                f"column {name!r}: {len(data)} bytes is not a whole number of {code} values"
            )
        if sys.byteorder != "little":  # pragma: no cover - no such platform in use
            values = np.frombuffer(data, dtype=ENGINE_DTYPES[code])
            return pa.array(values.astype(values.dtype.newbyteorder("=")))
        return pa.Array.from_buffers(arrow_type, len(data) // width, [None, pa.py_buffer(data)])
    if isinstance(column, (list, tuple)):
        if not all(isinstance(item, str) for item in column):
            raise ValueError(f"column {name!r}: a list column must hold only strings")
        return pa.array(column, type=pa.string())
    raise ValueError(
        f"column {name!r}: expected (dtype, bytes) or a list of strings, "
        f"got {type(column).__name__}"
    )


def table_from_raw(columns: Mapping[str, Any], name: str = "?") -> pa.Table:
    """Build a pyarrow table from ``{column_name: raw_column}``, keeping column order."""
    arrays = [column_to_arrow(col, f"{name}.{col_name}") for col_name, col in columns.items()]
    lengths = {len(array) for array in arrays}
    if len(lengths) > 1:
        sizes = ", ".join(f"{c}={len(a)}" for c, a in zip(columns, arrays))
        raise ValueError(f"table {name!r}: columns differ in length ({sizes})")
    return pa.Table.from_arrays(arrays, names=list(columns))


def tables_from_raw(tables: Mapping[str, Mapping[str, Any]]) -> dict[str, pa.Table]:
    """Convert the engine's ``{"table": {"column": raw}}`` mapping to pyarrow tables."""
    return {name: table_from_raw(columns, name) for name, columns in tables.items()}


def column_rows(column: Any) -> int:
    """Rows in a raw engine column."""
    if isinstance(column, tuple):
        code, data = column
        return len(data) // (ENGINE_TYPES[code].bit_width // 8)
    return len(column)
