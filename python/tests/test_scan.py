"""scan_parquet over files written by pyarrow, polars and DuckDB."""

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import broadhead as bh

N = 5000


@pytest.fixture
def source():
    return pa.table(
        {
            "k": pa.array(range(N), pa.int64()),
            "q": pa.array([float(i % 50) for i in range(N)]),
            "mode": pa.array([["AIR", "RAIL", "SHIP", "MAIL"][i % 4] for i in range(N)]),
            "note": pa.array([None if i % 7 == 0 else f"note {i}" for i in range(N)]),
        }
    )


def write(kind, table, path):
    if kind == "pyarrow":
        pq.write_table(table, path, row_group_size=1000)
    elif kind == "polars":
        pl.from_arrow(table).write_parquet(path, row_group_size=1000)
    else:
        con = duckdb.connect()
        con.register("src", table)
        con.execute(f"COPY (SELECT * FROM src) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000)")
        con.close()
    return path


@pytest.mark.parametrize("writer", ["pyarrow", "polars", "duckdb"])
def test_scan_matches_pyarrow_on_files_of_each_writer(tmp_path, source, writer):
    path = write(writer, source, str(tmp_path / f"{writer}.parquet"))
    where = "q < 10 AND mode IN ('AIR', 'MAIL') AND note IS NOT NULL"
    scanner = bh.scan_parquet(path, where=where, columns=["note", "k"])
    assert scanner.schema.names == ["note", "k"]
    got = scanner.read_all()
    expected_mask = pc.and_(
        pc.and_(pc.less(source["q"], 10), pc.is_in(source["mode"], pa.array(["AIR", "MAIL"]))),
        pc.is_valid(source["note"]),
    )
    expected = source.filter(expected_mask)
    assert got["k"].to_pylist() == expected["k"].to_pylist()
    assert got["note"].to_pylist() == expected["note"].to_pylist()
    assert scanner.stats is not None
    assert scanner.stats["row_groups"] == pq.ParquetFile(path).num_row_groups


def test_scan_batches_stream_in_file_order(tmp_path, source):
    path = write("pyarrow", source, str(tmp_path / "a.parquet"))
    batches = list(bh.scan_parquet(path, where="k % 2 = 0", batch_size=300, threads=2))
    assert all(isinstance(b, pa.RecordBatch) and b.num_rows <= 300 for b in batches)
    keys = [k for b in batches for k in b["k"].to_pylist()]
    assert keys == list(range(0, N, 2))


def test_scan_directories_globs_and_lists(tmp_path, source):
    (tmp_path / "d").mkdir()
    write("pyarrow", source.slice(0, 100), str(tmp_path / "d" / "1.parquet"))
    write("pyarrow", source.slice(100, 100), str(tmp_path / "d" / "2.parquet"))
    assert bh.scan_parquet(str(tmp_path / "d")).read_all().num_rows == 200
    assert bh.scan_parquet(str(tmp_path / "d" / "*.parquet"), where="k >= 150").read_all().num_rows == 50
    paths = [tmp_path / "d" / "2.parquet", tmp_path / "d" / "1.parquet"]
    assert bh.scan_parquet(paths, columns=["k"]).read_all()["k"].to_pylist()[:1] == [100]


def test_scan_errors_are_raised_before_the_first_batch(tmp_path, source):
    path = write("pyarrow", source, str(tmp_path / "a.parquet"))
    with pytest.raises(bh.ScanError, match="no such file"):
        bh.scan_parquet(str(tmp_path / "missing.parquet"))
    with pytest.raises(bh.BindError, match="unknown column 'qq'"):
        bh.scan_parquet(path, where="qq > 1")
    with pytest.raises(bh.ParseError):
        bh.scan_parquet(path, where="q >")
    with pytest.raises(bh.BindError, match="unknown column 'nope'"):
        bh.scan_parquet(path, columns=["nope"])
    with pytest.raises(ValueError):
        bh.scan_parquet(path, batch_size=0)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not parquet PAR1")
    with pytest.raises(bh.ScanError, match="bad.parquet"):
        bh.scan_parquet(str(bad))


def test_a_row_error_names_the_file_and_row(tmp_path):
    path = write("pyarrow", pa.table({"d": pa.array([3, 2, 1, 0, 5], pa.int64())}), str(tmp_path / "z.parquet"))
    with pytest.raises(bh.EvalError, match="z.parquet.*row 3"):
        bh.scan_parquet(path, where="10 / d > 1").read_all()


def test_close_stops_early_and_the_scanner_is_a_stream(tmp_path, source):
    path = write("pyarrow", source, str(tmp_path / "a.parquet"))
    with bh.scan_parquet(path, batch_size=100) as scanner:
        first = next(iter(scanner))
        assert first.num_rows == 100
    assert list(scanner) == []
    df = pl.DataFrame(bh.scan_parquet(path, where="k < 10", columns=["k"]))
    assert df["k"].to_list() == list(range(10))
    reader = bh.scan_parquet(path, where="k < 3").to_reader()
    assert reader.read_all().num_rows == 3
