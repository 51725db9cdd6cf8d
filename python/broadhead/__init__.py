"""Broadhead: SQL filters and projections compiled to native code with LLVM, over
Arrow data.

A SQL expression (``l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24``) is
parsed, type-checked against the data's schema, compiled once into a vectorized
kernel, and run over the data's columns in place: pyarrow tables, batches and
readers, pandas and polars frames, DuckDB results, and anything else that speaks the
Arrow PyCapsule interface. Results come back as the caller's kind of object.

>>> import pyarrow as pa, broadhead as bh
>>> t = pa.table({"x": [1.0, 2.5, 4.0, 7.0]})
>>> bh.filter(t, "x > 2.0 AND x < 6.0")["x"].to_pylist()
[2.5, 4.0]
>>> bh.Filter(t.schema, "x > 2.0").evaluate(t).to_pylist()
[1, 2, 3]

The SQL is Broadhead's (docs/sql.md and docs/functions.md in the repository);
``broadhead.functions()`` lists every function. Errors are ``ParseError``,
``BindError`` and ``EvalError`` (and ``ScanError`` for files), all under
``BroadheadError``, with the command line's messages.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Iterator, List, NamedTuple, Optional, Sequence, Union

import pyarrow as pa

from . import _inputs, _native
from ._native import (
    BindError,
    BroadheadError,
    EvalError,
    ParseError,
    ScanError,
    __version__,
)
from ._inputs import PANDAS, POLARS, PYARROW_READER

__all__ = [
    "BindError",
    "BroadheadError",
    "EvalError",
    "Filter",
    "ParseError",
    "ScanError",
    "Scanner",
    "Select",
    "explain",
    "filter",
    "functions",
    "scan_parquet",
    "select",
    "__version__",
]


def _used_names(sql: str, names: Sequence[Any], select_list: bool) -> Optional[List[Any]]:
    """The names among `names` that `sql` (an expression, or a select list) refers
    to (`None`: one it names is unknown or ambiguous, so every column goes to the
    binder, which says so). Names that are not strings (pandas allows them) cannot
    be named in SQL."""
    text_names = [n if isinstance(n, str) else "" for n in names]
    used = _native.columns_used(sql, text_names, select_list)
    if used is None:
        return None
    return [names[i] for i in used]


class _Compiled:
    """Native objects compiled for one SQL text, one per schema of the data they met
    (pandas, polars and pyarrow may give one column different Arrow types)."""

    def __init__(self, make) -> None:
        self._make = make
        self._by_schema: dict = {}
        self._lock = threading.Lock()

    def get(self, schema: pa.Schema):
        native = self._by_schema.get(schema)
        if native is None:
            native = self._make(schema)
            with self._lock:
                if len(self._by_schema) >= 16:
                    self._by_schema.clear()
                self._by_schema[schema] = native
        return native


class _Columns:
    """Which columns of an input an expression reads, remembered per column list."""

    def __init__(self, exprs: Sequence[str] = (), where: Optional[str] = None) -> None:
        self._texts = [(e, True) for e in exprs] + ([(where, False)] if where is not None else [])
        self._by_names: dict = {}

    def of(self, names: Sequence[Any]) -> Optional[List[Any]]:
        key = tuple(names)
        if key in self._by_names:
            return self._by_names[key]
        used: Optional[List[Any]] = []
        for text, select_list in self._texts:
            u = _used_names(text, names, select_list)
            if u is None:
                used = None
                break
            used.extend(n for n in u if n not in used)
        # No column read (`TRUE`, `1 = 1`): one is kept so the rows are counted.
        if used == [] and len(names) > 0:
            used = [names[0]]
        if len(self._by_names) >= 64:
            self._by_names.clear()
        self._by_names[key] = used
        return used


class _Input(NamedTuple):
    """Data as the native module reads it: the caller's object (`data`, pyarrow in
    place of other PyCapsule objects), the columns an expression reads (`sub`), its
    kind and the Arrow schema of `sub`."""

    data: Any
    sub: Any
    kind: str
    schema: pa.Schema
    # The positions in `data` of the columns in `sub` (`None`: every column).
    positions: Optional[List[int]]


def _arrow_input(data: Any, columns: _Columns) -> _Input:
    """`data` (any kind; an `_Input` is passed through) reduced to the columns an
    expression reads."""
    if isinstance(data, _Input):
        return data
    data, kind = _inputs.normalize(data)
    if kind == PYARROW_READER:
        return _Input(data, data, kind, data.schema, None)
    names = _inputs.column_names(data, kind)
    used = columns.of(names)
    sub = _inputs.select_columns(data, kind, used)
    schema = _inputs.arrow_schema(sub, kind) if kind == POLARS else sub.schema
    positions = None if used is None else [names.index(n) for n in used]
    return _Input(data, sub, kind, schema, positions)


def _is_schema(obj: Any) -> bool:
    """Whether `obj` is a schema rather than data."""
    return isinstance(obj, pa.Schema) or (
        hasattr(obj, "__arrow_c_schema__")
        and not hasattr(obj, "__arrow_c_stream__")
        and not hasattr(obj, "__arrow_c_array__")
    )


def _schema_read(schema: Any, columns: _Columns) -> pa.Schema:
    """The schema of the columns an expression reads, from a schema or from data."""
    if _is_schema(schema):
        full = pa.schema(schema)
        used = columns.of(full.names)
        return full if used is None else pa.schema([full.field(n) for n in used])
    return _arrow_input(schema, columns).schema


class Filter:
    """A SQL predicate compiled once, evaluated on any data with the columns it reads.

    ``schema`` is a ``pyarrow.Schema`` (or anything with ``__arrow_c_schema__``), or
    data whose schema is taken (a table, a pandas or polars frame…). The predicate is
    parsed, bound and compiled here: a mistake raises ``ParseError`` or
    ``BindError`` now, not at the first batch. Only the columns the predicate reads
    are looked at; data with other columns besides is fine, and data whose columns
    have other Arrow types than ``schema`` (a pandas frame's, say) gets a kernel
    compiled for them on first use. Kernels are shared through Broadhead's kernel
    cache, so compiling the same predicate again costs no LLVM time.

    A ``Filter`` can be used from many threads at once; evaluation releases the GIL.
    """

    def __init__(self, schema: Any, where: str) -> None:
        if not isinstance(where, str):
            raise TypeError(f"the predicate must be a str, not {type(where).__name__}")
        self._sql = where
        self._columns = _Columns(where=where)
        sub = _schema_read(schema, self._columns)
        self._compiled = _Compiled(lambda s: _native.Filter(s, where))
        self._first = self._compiled.get(sub)

    @property
    def sql(self) -> str:
        """The predicate's text."""
        return self._sql

    @property
    def schema(self) -> pa.Schema:
        """The schema of the columns the predicate reads, as first compiled."""
        return pa.schema(self._first.schema)

    @property
    def is_jit(self) -> bool:
        """Whether the predicate runs as native code (else Broadhead's interpreter
        runs it: a few functions have no kernel form)."""
        return self._first.is_jit

    def _native_for(self, data: Any):
        given = _arrow_input(data, self._columns)
        return self._compiled.get(given.schema), given.sub, given.kind

    def evaluate(self, data: Any) -> pa.UInt64Array:
        """The positions of the rows of ``data`` where the predicate is TRUE, counted
        across its batches or chunks (``.to_numpy()`` gives them to numpy without a
        copy)."""
        native, sub, _ = self._native_for(data)
        return pa.array(native.positions(sub))

    def mask(self, data: Any) -> pa.BooleanArray:
        """A BooleanArray over the rows of ``data``: TRUE where the predicate is
        TRUE, FALSE where it is FALSE or NULL (never NULL)."""
        native, sub, _ = self._native_for(data)
        return pa.array(native.mask(sub))

    def count(self, data: Any) -> int:
        """How many rows of ``data`` the predicate selects."""
        native, sub, _ = self._native_for(data)
        return native.count(sub)

    def filter(self, data: Any) -> Any:
        """The rows of ``data`` where the predicate is TRUE, every column kept, as the
        same kind of object: a pandas frame (with its index), a polars frame, a
        pyarrow Table, RecordBatch or RecordBatchReader (filtered as it is read)."""
        given = _arrow_input(data, self._columns)
        data, kind = given.data, given.kind
        native = self._compiled.get(given.schema)
        if kind == PYARROW_READER:
            return pa.RecordBatchReader.from_stream(native.filter_stream(data))
        if kind == PANDAS:
            # pandas takes the rows itself, so every dtype and the index stay; it
            # takes positions faster than it turns a mask into them.
            return data.take(pa.array(native.positions(given.sub)).to_numpy())
        if kind == POLARS:
            import polars as pl

            return data.filter(pl.Series(pa.array(native.mask(given.sub))))
        # pyarrow: the predicate and the taking in one native call (arrow-rs takes
        # every layout, `string_view` too, which pyarrow's `filter` cannot).
        kept = native.filter(data, given.positions)
        return pa.record_batch(kept) if isinstance(data, pa.RecordBatch) else pa.table(kept)

    def explain(self) -> str:
        """Every stage's view of the predicate: parsed, typed, optimized, and for
        the JIT the LLVM IR and the native assembly."""
        return self._first.explain()

    def __repr__(self) -> str:
        return f"broadhead.Filter({self._sql!r})"


class Select:
    """SQL expressions compiled once: each item a SQL expression or a comma-separated
    select list, with optional ``AS name``; with ``where``, computed only on the rows
    where that predicate is TRUE.

    ``schema`` is as for ``Filter``. Output columns are named by their ``AS`` name,
    a plain column by its own name, and any other expression by its SQL text.
    """

    def __init__(self, schema: Any, exprs: Union[str, Sequence[str]], where: Optional[str] = None) -> None:
        self._exprs = [exprs] if isinstance(exprs, str) else list(exprs)
        if not all(isinstance(e, str) for e in self._exprs):
            raise TypeError("the expressions must be str")
        self._where = where
        self._columns = _Columns(self._exprs, where)
        sub = _schema_read(schema, self._columns)
        self._compiled = _Compiled(lambda s: _native.Select(s, self._exprs, where))
        self._first = self._compiled.get(sub)
        self._filter = Filter(sub, where) if where is not None else None

    @property
    def schema(self) -> pa.Schema:
        """The schema of the results."""
        return pa.schema(self._first.schema)

    def __call__(self, data: Any) -> Any:
        """The expressions over ``data``, as its kind: a pandas frame (indexed by the
        rows' index), a polars frame, a pyarrow RecordBatch for a batch, else a
        pyarrow Table."""
        given = _arrow_input(data, self._columns)
        out = self._compiled.get(given.schema).project(given.sub)
        index = None
        if given.kind == PANDAS:
            index = given.data.index
            if self._filter is not None:
                index = index.take(self._filter.evaluate(given.sub).to_numpy())
        return _inputs.back(out, given.data, given.kind, index)

    def __repr__(self) -> str:
        where = f", where={self._where!r}" if self._where is not None else ""
        return f"broadhead.Select({self._exprs!r}{where})"


def filter(data: Any, where: str) -> Any:
    """The rows of ``data`` where the SQL predicate ``where`` is TRUE, as the same
    kind of object (see ``Filter.filter``).

    >>> import pyarrow as pa, broadhead as bh
    >>> bh.filter(pa.table({"n": [1, 5, 9]}), "n % 2 = 1 AND n > 1")["n"].to_pylist()
    [5, 9]
    """
    f = _recent.get(("filter", where))
    if f is None:
        given = _arrow_input(data, _Columns(where=where))
        f = _recent.put(("filter", where), Filter(given.schema, where))
        return f.filter(given)
    return f.filter(data)


def select(data: Any, exprs: Union[str, Sequence[str]], where: Optional[str] = None) -> Any:
    """The SQL expressions ``exprs`` over the rows of ``data`` (where ``where`` is
    TRUE), as the same kind of object (see ``Select``).

    >>> import pyarrow as pa, broadhead as bh
    >>> t = pa.table({"price": [10.0, 20.0], "discount": [0.1, 0.5]})
    >>> bh.select(t, ["price * (1 - discount) AS net"], where="discount < 0.2").to_pydict()
    {'net': [9.0]}
    """
    data, kind = _inputs.normalize(data)
    if kind == PYARROW_READER:
        data = data.read_all()
    items = [exprs] if isinstance(exprs, str) else list(exprs)
    key = ("select", tuple(items), where)
    sel = _recent.get(key)
    if sel is None:
        given = _arrow_input(data, _Columns(items, where))
        sel = _recent.put(key, Select(given.schema, items, where))
        return sel(given)
    return sel(data)


class _Recent:
    """The filters and selects that `filter` and `select` built last, by their SQL:
    calling them in a loop parses and binds once (each object keeps a kernel per
    schema it meets, and the kernel cache keeps the machine code)."""

    CAPACITY = 64

    def __init__(self) -> None:
        self._items: dict = {}
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        try:
            return self._items.get(key)
        except TypeError:  # an unhashable argument: the constructor will say what
            return None

    def put(self, key: Any, item: Any) -> Any:
        with self._lock:
            if len(self._items) >= self.CAPACITY:
                self._items.pop(next(iter(self._items)))
            try:
                self._items[key] = item
            except TypeError:
                pass
        return item


_recent = _Recent()


def explain(schema: Any, sql: str) -> str:
    """Every stage's view of the predicate ``sql`` over ``schema`` (a
    ``pyarrow.Schema`` or data): parsed, typed, optimized, LLVM IR and assembly."""
    return Filter(schema, sql).explain()


def functions(pattern: Optional[str] = None) -> pa.Table:
    """The functions and operators Broadhead knows, one row per signature, as a
    table (name, signature, operator, aliases, domain, null_behavior, can_error,
    kernel, description); with ``pattern``, those whose name or an alias contains it
    or matches it as a glob (``regexp*``), case-insensitive."""
    return pa.table(_native.functions(pattern))


class Scanner:
    """Batches of a Parquet scan (``scan_parquet``), in file order: iterate it, or
    read it whole with ``read_all()``. It also exports ``__arrow_c_stream__``, so
    ``polars.DataFrame(scanner)`` or DuckDB can read it. ``close()`` (or leaving a
    ``with`` block) stops the scan early."""

    def __init__(self, native) -> None:
        self._native = native

    @property
    def schema(self) -> pa.Schema:
        """The schema of the batches."""
        return pa.schema(self._native.schema)

    @property
    def stats(self) -> Optional[dict]:
        """What the scan did (row groups, pruned, keyed, gathered, narrowed) once it
        has ended; ``None`` before."""
        return self._native.stats

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for batch in self._native:
            yield pa.record_batch(batch)

    def read_all(self) -> pa.Table:
        """Every remaining batch, as a Table."""
        return pa.Table.from_batches(list(self), schema=self.schema)

    def to_reader(self) -> pa.RecordBatchReader:
        """The remaining batches as a pyarrow RecordBatchReader."""
        return pa.RecordBatchReader.from_batches(self.schema, iter(self))

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.to_reader().__arrow_c_stream__(requested_schema)

    def close(self) -> None:
        """Stops the scan; its threads end at their next batch."""
        self._native.close()

    def __enter__(self) -> "Scanner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def scan_parquet(
    paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
    where: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
    batch_size: Optional[int] = None,
    threads: Optional[int] = None,
) -> Scanner:
    """The rows of Parquet files where ``where`` is TRUE, streamed batch by batch.

    ``paths``: files, directories (their ``.parquet`` files, recursively) and globs.
    ``columns``: the columns to return, in that order (default: all). Row groups
    whose statistics rule the predicate out are skipped; the predicate runs inside
    the reader, so other columns are decoded only for the rows it keeps; row groups
    are read on ``threads`` threads (default: every core). Errors in the predicate
    or the files are raised here, before the first batch.
    """
    native = _native.scan_parquet(paths, where, None if columns is None else list(columns), batch_size, threads)
    return Scanner(native)


def _register_frame_extensions() -> None:
    from . import _extensions

    _extensions.install()


_register_frame_extensions()
