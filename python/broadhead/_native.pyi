"""Type stubs of the extension module `broadhead._native` (Rust, python/src).

Its objects take and give Arrow data through the Arrow PyCapsule interface: inputs
are anything with `__arrow_c_array__` or `__arrow_c_stream__`, results are objects
that export them (the package wraps them as pyarrow)."""

from typing import Any, Iterator, Optional, Sequence, Tuple, Union
import os

__version__: str

class BroadheadError(Exception):
    """Every error Broadhead raises."""

class ParseError(BroadheadError):
    """The expression is not valid SQL; the message points at the place with a caret."""
    span: Optional[Tuple[int, int, int]]
    row: None

class BindError(BroadheadError):
    """The expression does not fit the schema: an unknown column, a type mismatch."""
    span: Optional[Tuple[int, int, int]]
    row: None

class EvalError(BroadheadError):
    """Evaluating failed on a row; `row` counts from the start of the input."""
    span: None
    row: Optional[int]

class ScanError(BroadheadError):
    """A Parquet file could not be found, read or decoded."""

class Filter:
    """A SQL predicate compiled for a schema."""
    def __init__(self, schema: Any, sql: str) -> None: ...
    @property
    def sql(self) -> str: ...
    @property
    def schema(self) -> Any: ...
    @property
    def is_jit(self) -> bool: ...
    def positions(self, data: Any) -> Any: ...
    def mask(self, data: Any) -> Any: ...
    def count(self, data: Any) -> int: ...
    def filter(self, data: Any, columns: Optional[Sequence[int]] = None) -> Any: ...
    def filter_stream(self, data: Any) -> Any: ...
    def explain(self) -> str: ...

class Select:
    """SQL expressions compiled for a schema, optionally over the rows a predicate selects."""
    def __init__(self, schema: Any, exprs: Sequence[str], where: Optional[str] = None) -> None: ...
    @property
    def schema(self) -> Any: ...
    def project(self, data: Any) -> Any: ...

class Scanner:
    """Batches of a Parquet scan, in file order."""
    @property
    def schema(self) -> Any: ...
    @property
    def stats(self) -> Optional[dict]: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __next__(self) -> Any: ...
    def close(self) -> None: ...

def scan_parquet(
    paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
    where: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
    batch_size: Optional[int] = None,
    threads: Optional[int] = None,
) -> Scanner: ...
def functions(pattern: Optional[str] = None) -> Any: ...
def columns_used(sql: str, names: Sequence[str], select_list: bool = False) -> Optional[list]: ...
