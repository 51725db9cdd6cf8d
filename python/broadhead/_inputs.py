"""What a caller hands Broadhead, as Arrow, and the results back as the caller's kind.

Every input becomes a pyarrow object holding only the columns an expression uses
(`Data.columns`), without copying where Arrow allows it: pyarrow tables and batches
are selected from, polars frames and other objects with the Arrow PyCapsule interface
are imported through it, and pandas frames convert only those columns through
pyarrow. The original object is kept so that results go back in its kind: a pandas
frame (with its index), a polars frame, or pyarrow.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Sequence

import pyarrow as pa

# The kinds of input, by what comes back.
PYARROW_TABLE = "table"
PYARROW_BATCH = "batch"
PYARROW_READER = "reader"
PANDAS = "pandas"
POLARS = "polars"


def _is_pandas_frame(obj: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def _is_polars_frame(obj: Any) -> bool:
    pl = sys.modules.get("polars")
    return pl is not None and isinstance(obj, pl.DataFrame)


def kind_of(obj: Any) -> str:
    """The kind of `obj`, or TypeError when Broadhead cannot read it."""
    if isinstance(obj, pa.Table):
        return PYARROW_TABLE
    if isinstance(obj, pa.RecordBatch):
        return PYARROW_BATCH
    if isinstance(obj, pa.RecordBatchReader):
        return PYARROW_READER
    if _is_pandas_frame(obj):
        return PANDAS
    if _is_polars_frame(obj):
        return POLARS
    if hasattr(obj, "__arrow_c_stream__"):
        return PYARROW_TABLE
    if hasattr(obj, "__arrow_c_array__"):
        return PYARROW_BATCH
    raise TypeError(
        "expected tabular data: a pyarrow Table, RecordBatch or RecordBatchReader, a "
        "pandas or polars DataFrame, or an object with the Arrow PyCapsule interface "
        f"(__arrow_c_stream__ or __arrow_c_array__); got {type(obj).__module__}.{type(obj).__qualname__}"
    )


def normalize(obj: Any) -> tuple:
    """`obj` and its kind, with an object of the PyCapsule interface that is not
    pyarrow's imported as pyarrow once (zero-copy): a stream can often be read only
    once (nanoarrow's), or costs a query each time (DuckDB's)."""
    kind = kind_of(obj)
    if kind in (PYARROW_TABLE, PYARROW_BATCH) and not isinstance(obj, (pa.Table, pa.RecordBatch)):
        obj = as_arrow(obj, kind)
    return obj, kind


def column_names(obj: Any, kind: str) -> list:
    """The column names of `obj` (pandas may have names that are not strings)."""
    if kind == PANDAS:
        return list(obj.columns)
    if kind == POLARS:
        return list(obj.columns)
    return list(as_arrow(obj, kind).schema.names)


def as_arrow(obj: Any, kind: str) -> Any:
    """`obj` as pyarrow (for pyarrow kinds; others are imported through the PyCapsule
    interface, zero-copy)."""
    if isinstance(obj, (pa.Table, pa.RecordBatch, pa.RecordBatchReader)):
        return obj
    if kind == PYARROW_TABLE:
        return pa.table(obj)
    if kind == PYARROW_BATCH:
        return pa.record_batch(obj)
    raise AssertionError(kind)


def pandas_to_arrow(df: Any, names: Optional[Sequence[Any]] = None) -> pa.Table:
    """The columns `names` (every column with `None`) of a pandas frame as a pyarrow
    Table: NaN in a float column of numpy dtype and NaT become NULL, as pandas
    treats them as missing. The names given are unique (`columns_used` resolves
    only those); every column is taken by position, so duplicates are kept."""
    positions = range(df.shape[1]) if names is None else [df.columns.get_loc(n) for n in names]
    arrays = [_pandas_column(df.iloc[:, i]) for i in positions]
    return pa.Table.from_arrays(arrays, names=[str(df.columns[i]) for i in positions])


_NAT = -(2**63)


def _pandas_column(series: Any) -> pa.Array:
    """One pandas column as Arrow. Numpy columns without a missing value are taken as
    they are (no copy; pyarrow's `from_pandas` spends ~25 ms per 10 M floats
    building a validity bitmap that would be all ones); others go through pyarrow."""
    import numpy as np

    dtype = series.dtype
    if isinstance(dtype, np.dtype) and len(series) > 0:
        values = series.to_numpy(copy=False)
        kind = values.dtype.kind
        if kind in "iu" or kind == "b":
            return pa.array(values)
        if kind == "f":
            # The minimum is NaN exactly when some value is (and costs no array).
            if not np.isnan(values.min()):
                return pa.array(values)
        elif kind == "M":
            unit = np.datetime_data(values.dtype)[0]
            ticks = values.view(np.int64)
            if unit in ("s", "ms", "us", "ns") and ticks.min() != _NAT:
                return pa.array(ticks).view(pa.timestamp(unit))
    return pa.array(series, from_pandas=True)


def select_columns(obj: Any, kind: str, names: Optional[Sequence[Any]]) -> Any:
    """The columns `names` (all with `None`) of `obj` as something the native module
    reads: a pyarrow Table or RecordBatch, a reader, or a polars frame (read through
    its `__arrow_c_stream__`)."""
    if kind == PANDAS:
        return pandas_to_arrow(obj, names)
    if kind == POLARS:
        return obj if names is None else obj.select(list(names))
    data = as_arrow(obj, kind)
    if names is None or kind == PYARROW_READER:
        return _unsliced_nested_structs(data)
    return _unsliced_nested_structs(data.select(list(names)))


def _has_nested_struct(t: pa.DataType, inside: bool = False) -> bool:
    """Whether `t` holds a STRUCT inside a STRUCT or a list."""
    if pa.types.is_struct(t):
        return inside or any(_has_nested_struct(t.field(i).type, True) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_nested_struct(t.value_type, True)
    return False


def _unsliced_nested_structs(data: Any) -> Any:
    """`data` with each sliced chunk of a column holding a STRUCT inside a STRUCT (or
    a list) copied to offset 0. arrow-rs 59 (which the native module is built with)
    applies such a slice twice when it imports the array and fails
    (apache/arrow-rs#7595, fixed by #10835 in a later release); a copy is read as it
    is. Other columns, and chunks that are not sliced, are passed as they are."""
    if not isinstance(data, (pa.Table, pa.RecordBatch)):
        return data
    nested = [i for i, f in enumerate(data.schema) if _has_nested_struct(f.type)]
    if not nested:
        return data
    for i in nested:
        column = data.column(i)
        if isinstance(column, pa.ChunkedArray):
            if any(c.offset for c in column.chunks):
                chunks = [pa.concat_arrays([c]) if c.offset else c for c in column.chunks]
                data = data.set_column(i, data.schema.field(i), pa.chunked_array(chunks, column.type))
        elif column.offset:
            arrays = list(data.columns)
            arrays[i] = pa.concat_arrays([column])
            data = pa.RecordBatch.from_arrays(arrays, schema=data.schema)
    return data


def arrow_schema(obj: Any, kind: str) -> pa.Schema:
    """The Arrow schema `obj` has when the native module reads it."""
    if kind == POLARS:
        return pa.RecordBatchReader.from_stream(obj.head(0)).schema
    if kind == PANDAS:
        return pandas_to_arrow(obj.head(0)).schema
    return as_arrow(obj, kind).schema


def as_schema(obj: Any) -> pa.Schema:
    """A schema from a pyarrow Schema, an object with `__arrow_c_schema__`, or data of
    any kind `kind_of` accepts (its schema)."""
    if isinstance(obj, pa.Schema):
        return obj
    if hasattr(obj, "__arrow_c_schema__") and not hasattr(obj, "__arrow_c_stream__") and not hasattr(obj, "__arrow_c_array__"):
        return pa.schema(obj)
    return arrow_schema(obj, kind_of(obj))


def back(table: Any, original: Any, kind: str, index: Any = None) -> Any:
    """A pyarrow result (Table or RecordBatch, from the native module or pyarrow) as
    the kind of `original`: pandas (with `index`, the original's index at the result's
    rows), polars, or pyarrow."""
    if kind == PANDAS:
        df = pa.table(table).to_pandas()
        if index is not None:
            df.index = index
        return df
    if kind == POLARS:
        import polars as pl

        return pl.DataFrame(pa.table(table))
    if kind == PYARROW_BATCH:
        return pa.record_batch(table)
    return pa.table(table)
