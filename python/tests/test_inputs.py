"""Every kind of input, and the kind of object that comes back."""

import datetime as dt
import decimal

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import broadhead as bh


# ---------------------------------------------------------------- pandas


def test_pandas_numpy_columns_keep_the_index():
    df = pd.DataFrame({"x": [1.0, 2.5, 4.0, 7.0], "k": [1, 2, 3, 4]}, index=["a", "b", "c", "d"])
    out = bh.filter(df, "x > 2.0 AND x < 6.0")
    assert isinstance(out, pd.DataFrame)
    assert list(out.index) == ["b", "c"]
    assert out["k"].tolist() == [2, 3]
    assert out.dtypes.equals(df.dtypes)


def test_pandas_nan_is_missing_as_pandas_treats_it():
    # A NaN in a float column of numpy dtype is pandas' missing value: it becomes
    # NULL, so a comparison never selects it (as df.query and boolean masks do), and
    # IS NULL finds it (as isna() does).
    df = pd.DataFrame({"x": [1.0, np.nan, 3.0]})
    assert bh.filter(df, "x > 0")["x"].tolist() == [1.0, 3.0]
    assert df.query("x > 0")["x"].tolist() == [1.0, 3.0]
    assert list(bh.filter(df, "x IS NULL").index) == [1]
    assert list(df[df["x"].isna()].index) == [1]


def test_pandas_nullable_arrow_backed_and_category_columns():
    df = pd.DataFrame(
        {
            "i": pd.array([1, None, 3, 4], dtype="Int64"),
            "b": pd.array([True, False, None, True], dtype="boolean"),
            "s": pd.array(["x", None, "zz", "x"], dtype="string"),
            "a": pd.array([10, 20, 30, None], dtype="int64[pyarrow]"),
            "c": pd.Categorical(["red", "blue", "red", "green"]),
        },
        index=[7, 8, 9, 10],
    )
    assert list(bh.filter(df, "i >= 3").index) == [9, 10]
    assert list(bh.filter(df, "b").index) == [7, 10]
    assert list(bh.filter(df, "s = 'x'").index) == [7, 10]
    assert list(bh.filter(df, "a > 15").index) == [8, 9]
    assert list(bh.filter(df, "c IN ('red', 'green')").index) == [7, 9, 10]
    assert list(bh.filter(df, "i IS NULL OR a IS NULL").index) == [8, 10]
    # The result keeps the frame's dtypes: only the mask came from Broadhead.
    assert bh.filter(df, "i > 0").dtypes.equals(df.dtypes)


def test_pandas_tz_aware_and_naive_timestamps():
    zone = "America/New_York"
    df = pd.DataFrame(
        {
            "t": pd.to_datetime(["2024-03-10 01:30", "2024-03-10 03:30", "2024-11-03 01:30"]).tz_localize(zone, ambiguous=True),
            "naive": pd.to_datetime(["2024-01-01", "2024-06-01", "2025-01-01"]),
        }
    )
    # 2024-03-10 03:30 EDT is 07:30 UTC.
    out = bh.filter(df, "t >= TIMESTAMPTZ '2024-03-10 07:00:00+00'")
    assert list(out.index) == [1, 2]
    assert list(bh.filter(df, "year(naive) = 2024").index) == [0, 1]


def test_pandas_only_the_columns_used_are_converted():
    # A column pyarrow cannot convert (mixed objects) does not matter to a
    # predicate that does not read it.
    df = pd.DataFrame({"x": [1, 2, 3], "junk": [object(), "a", 1.5]})
    assert list(bh.filter(df, "x > 1").index) == [1, 2]
    with pytest.raises(Exception):
        pa.Table.from_pandas(df)


def test_pandas_non_string_column_names_and_case():
    df = pd.DataFrame({0: [1, 2], "Price": [5.0, 7.0]})
    assert list(bh.filter(df, "price > 6").index) == [1]


def test_pandas_select_keeps_the_selected_rows_index():
    df = pd.DataFrame({"p": [10.0, 20.0, 30.0], "d": [0.1, 0.5, 0.0]}, index=[100, 200, 300])
    out = bh.select(df, ["p * (1 - d) AS net"], where="d < 0.2")
    assert isinstance(out, pd.DataFrame)
    assert list(out.index) == [100, 300]
    assert out["net"].tolist() == [9.0, 30.0]


def test_pandas_accessor():
    df = pd.DataFrame({"x": [1, 5, 9]})
    assert df.broadhead.filter("x > 2")["x"].tolist() == [5, 9]
    assert df.broadhead.count("x > 2") == 2
    assert df.broadhead.select("x * 2 AS y")["y"].tolist() == [2, 10, 18]
    assert df.broadhead.mask("x > 2").to_pylist() == [False, True, True]


def test_pandas_unknown_column_is_a_bind_error():
    df = pd.DataFrame({"alpha": [1], "beta": [2]})
    with pytest.raises(bh.BindError, match="did you mean 'alpha'"):
        bh.filter(df, "alpah > 0")


# ---------------------------------------------------------------- polars


def test_polars_frame_back_with_its_dtypes():
    df = pl.DataFrame(
        {
            "x": [1, 2, 3, 4],
            "s": ["ab", "cd", None, "abc"],
            "c": pl.Series(["u", "v", "u", "w"], dtype=pl.Categorical),
            "d": [dt.date(2024, 1, 1), dt.date(2024, 2, 1), dt.date(2023, 1, 1), None],
        }
    )
    out = bh.filter(df, "x >= 2 AND (s LIKE 'a%' OR s IS NULL)")
    assert isinstance(out, pl.DataFrame)
    assert out["x"].to_list() == [3, 4]
    assert out.schema == df.schema
    assert bh.filter(df, "c = 'u'")["x"].to_list() == [1, 3]
    assert bh.filter(df, "d >= DATE '2024-01-15'")["x"].to_list() == [2]


def test_polars_many_chunks_without_rechunk():
    parts = [pl.DataFrame({"v": list(range(i * 10, i * 10 + 10))}) for i in range(5)]
    df = pl.concat(parts, rechunk=False)
    assert df.n_chunks() == 5
    f = bh.Filter(df, "v % 10 = 9")
    assert f.evaluate(df).to_pylist() == [9, 19, 29, 39, 49]
    assert bh.filter(df, "v > 45")["v"].to_list() == [46, 47, 48, 49]


def test_polars_select_and_namespace():
    df = pl.DataFrame({"a": [1, 2, 3], "s": ["x", "yy", "zzz"]})
    out = df.broadhead.select(["a * 10 AS z", "length(s) AS n"], where="a > 1")
    assert isinstance(out, pl.DataFrame)
    assert out.to_dict(as_series=False) == {"z": [20, 30], "n": [2, 3]}
    assert df.broadhead.filter("s = 'yy'")["a"].to_list() == [2]


def test_polars_string_view_columns_read_in_place():
    df = pl.DataFrame({"s": ["short", "a much longer string than twelve bytes", None]})
    schema = pa.RecordBatchReader.from_stream(df).schema
    assert schema.field("s").type == pa.string_view()
    assert bh.filter(df, "length(s) > 10")["s"].to_list() == ["a much longer string than twelve bytes"]


# ---------------------------------------------------------------- others


def test_duckdb_result():
    duckdb = pytest.importorskip("duckdb")
    rel = duckdb.sql("SELECT range AS n, range * 1.5 AS x FROM range(10)")
    out = bh.filter(rel, "n % 3 = 0")
    assert isinstance(out, pa.Table)
    assert out["n"].to_pylist() == [0, 3, 6, 9]


def test_nanoarrow_array_stream_and_array():
    na = pytest.importorskip("nanoarrow")
    t = pa.table({"n": pa.array([1, 2, 3], pa.int32())})
    stream = na.ArrayStream(t)
    assert bh.filter(stream, "n > 1")["n"].to_pylist() == [2, 3]
    batch = na.Array(t.to_batches()[0])
    assert bh.filter(batch, "n < 3")["n"].to_pylist() == [1, 2]


def test_a_capsule_object_of_our_own():
    class Exporter:
        def __init__(self, table):
            self._table = table

        def __arrow_c_stream__(self, requested_schema=None):
            return self._table.__arrow_c_stream__(requested_schema)

    t = pa.table({"n": [1, 2, 3]})
    out = bh.filter(Exporter(t), "n = 2")
    assert isinstance(out, pa.Table) and out["n"].to_pylist() == [2]


def test_outputs_export_the_capsule_interface():
    out = bh.filter(pa.table({"n": [1, 2]}), "n > 1")
    assert hasattr(out, "__arrow_c_stream__")
    positions = bh.Filter(pa.schema([("n", pa.int64())]), "n > 1").evaluate(pa.table({"n": [1, 2]}))
    assert hasattr(positions, "__arrow_c_array__")


def test_decimals_dates_and_timestamps_from_pyarrow():
    t = pa.table(
        {
            "price": pa.array([decimal.Decimal("1.05"), decimal.Decimal("2.50"), None], pa.decimal128(10, 2)),
            "day": pa.array([dt.date(1995, 1, 1), dt.date(1994, 6, 1), dt.date(1996, 1, 1)]),
            "at": pa.array([dt.datetime(2020, 1, 1, 12), None, dt.datetime(2021, 5, 5)], pa.timestamp("us")),
        }
    )
    assert bh.Filter(t, "price BETWEEN 1.00 AND 2.00").evaluate(t).to_pylist() == [0]
    assert bh.Filter(t, "day < DATE '1995-06-01'").evaluate(t).to_pylist() == [0, 1]
    assert bh.Filter(t, "extract(year FROM at) = 2021").evaluate(t).to_pylist() == [2]
    out = bh.select(t, "price * 2 AS p2")
    assert out["p2"].to_pylist() == [decimal.Decimal("2.10"), decimal.Decimal("5.00"), None]


def test_large_and_view_strings_and_dictionaries():
    values = ["alpha", "beta", None, "gamma"]
    for typ in (pa.string(), pa.large_string(), pa.string_view()):
        t = pa.table({"s": pa.array(values, typ)})
        assert bh.Filter(t, "s LIKE '%a'").evaluate(t).to_pylist() == [0, 1, 3], typ
    d = pa.table({"s": pa.array(values).dictionary_encode()})
    assert bh.Filter(d, "s = 'beta'").evaluate(d).to_pylist() == [1]
    # The rows themselves, in every layout (pyarrow's own `filter` has no kernel
    # for `string_view`; Broadhead takes them with arrow-rs).
    for typ in (pa.string(), pa.large_string(), pa.string_view()):
        t = pa.table({"s": pa.array(values, typ), "n": [1, 2, 3, 4]})
        out = bh.filter(t, "n > 1 AND s IS NOT NULL")
        assert out.schema == t.schema and out["s"].to_pylist() == ["beta", "gamma"], typ
        batch = t.to_batches()[0]
        assert bh.filter(batch, "n <> 2")["n"].to_pylist() == [1, 3, 4], typ


def test_pandas_nat_is_missing_and_datetime_units():
    for unit in ("s", "ms", "us", "ns"):
        df = pd.DataFrame({"t": pd.to_datetime(["2024-01-01", None, "2025-06-01"]).astype(f"datetime64[{unit}]")})
        assert list(bh.filter(df, "t >= TIMESTAMP '2024-06-01 00:00:00'").index) == [2], unit
        assert list(bh.filter(df, "t IS NULL").index) == [1], unit
    # Without NaT the column is taken as it is: the same answers.
    df = pd.DataFrame({"t": pd.to_datetime(["2024-01-01", "2025-06-01"])})
    assert list(bh.filter(df, "year(t) = 2025").index) == [1]


def test_pandas_duplicate_column_names():
    df = pd.DataFrame([[1, 2, 3], [4, 5, 6]], columns=["a", "a", "b"])
    assert list(bh.filter(df, "b > 3").index) == [1]
    with pytest.raises(bh.BindError, match="ambiguous"):
        bh.filter(df, "a > 3")


def test_pandas_integer_and_boolean_numpy_columns():
    df = pd.DataFrame({"i": np.array([1, 2, 3], dtype=np.int32), "u": np.array([9, 8, 7], dtype=np.uint8), "b": [True, False, True]})
    assert list(bh.filter(df, "i + u = 10 AND b").index) == [0, 2]
    assert bh.filter(df.iloc[0:0], "b").empty


def test_sql_not_query_syntax():
    # docs/python.md: `==` and `!=` are accepted beside `=` and `<>`; names with
    # spaces are double-quoted; `@variables` and Python's `and` are not SQL here
    # (`and` is, case-insensitively: SQL keywords are).
    df = pd.DataFrame({"unit price": [1.0, 5.0, 3.0], "n": [1, 2, 3]})
    assert list(bh.filter(df, "n == 2").index) == [1]
    assert list(bh.filter(df, "n != 2").index) == [0, 2]
    assert list(bh.filter(df, '"unit price" > 2 and n < 3').index) == [1]
    with pytest.raises(bh.BindError, match="unknown column '@limit'"):
        bh.filter(df, "n > @limit")
    assert df.query("n == 2").index.tolist() == [1]
