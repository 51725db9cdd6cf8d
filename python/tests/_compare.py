"""Comparison helpers the generated tests share: running SQL in DuckDB over an Arrow
table, and reading either side's outcome (a value, or which error)."""

import math

import duckdb
import pyarrow as pa

import broadhead as bh

ROW = "__row"


def with_rows(table):
    return table.append_column(ROW, pa.array(range(table.num_rows), pa.int64()))


def duckdb_rows(table, sql):
    con = duckdb.connect()
    t = with_rows(table)  # noqa: F841 (DuckDB reads it by name)
    try:
        return [r[0] for r in con.execute(f"SELECT {ROW} FROM t WHERE {sql} ORDER BY {ROW}").fetchall()]
    finally:
        con.close()


def duckdb_values(table, sql, where=None):
    con = duckdb.connect()
    t = with_rows(table)  # noqa: F841
    where = f"WHERE {where}" if where is not None else ""
    try:
        return [r[0] for r in con.execute(f"SELECT {sql} FROM t {where} ORDER BY {ROW}").fetchall()]
    finally:
        con.close()


def outcome(f):
    try:
        return ("ok", f())
    except (bh.EvalError, duckdb.Error) as e:
        return ("error", type(e).__name__)


def same_value(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b
