"""The Python API on pyarrow data: results, errors, threads, fork, streams."""

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import broadhead as bh


@pytest.fixture
def table():
    return pa.table(
        {
            "x": pa.array([1.0, 2.5, None, 4.0, 7.0, float("nan")]),
            "n": pa.array([1, 2, 3, 4, 5, 6], pa.int64()),
            "s": pa.array(["apple", "Banana", "cherry", None, "date", "äpfel"]),
        }
    )


def test_filter_returns_the_rows_where_the_predicate_is_true(table):
    out = bh.filter(table, "x > 2.0 AND x < 6.0")
    assert isinstance(out, pa.Table)
    assert out.to_pydict() == {"x": [2.5, 4.0], "n": [2, 4], "s": ["Banana", None]}


def test_evaluate_mask_and_count_agree(table):
    f = bh.Filter(table.schema, "n % 2 = 0 OR s LIKE 'a%'")
    positions = f.evaluate(table)
    assert positions.type == pa.uint64()
    assert positions.to_pylist() == [0, 1, 3, 5]
    mask = f.mask(table)
    assert mask.null_count == 0
    assert mask.to_pylist() == [True, True, False, True, False, True]
    assert f.count(table) == 4
    # numpy, without a copy.
    np_positions = positions.to_numpy()
    assert list(np_positions) == [0, 1, 3, 5]


def test_null_is_not_selected_and_nan_is_greatest(table):
    # NaN in Arrow data is a value, greater than every other (as PostgreSQL and
    # DuckDB order it); NULL is never selected by a comparison.
    assert bh.Filter(table, "x > 5").evaluate(table).to_pylist() == [4, 5]
    assert bh.Filter(table, "x IS NULL").evaluate(table).to_pylist() == [2]
    assert bh.Filter(table, "isnan(x)").evaluate(table).to_pylist() == [5]


def test_a_filter_runs_on_data_with_other_columns_in_any_order(table):
    f = bh.Filter(table.schema, "n > 4")
    other = pa.table({"z": ["q"] * 6, "n": table["n"]})
    assert f.evaluate(other).to_pylist() == [4, 5]
    # A filter reads only the columns it names: the schema it keeps is theirs.
    assert f.schema.names == ["n"]


def test_chunked_and_sliced_tables(table):
    chunked = pa.concat_tables([table.slice(0, 2), table.slice(2, 1), table.slice(3)])
    assert chunked["n"].num_chunks == 3
    f = bh.Filter(table.schema, "n >= 2 AND n <= 5")
    assert f.evaluate(chunked).to_pylist() == [1, 2, 3, 4]
    assert f.mask(chunked).to_pylist() == [False, True, True, True, True, False]
    sliced = table.slice(2, 3)
    assert f.evaluate(sliced).to_pylist() == [0, 1, 2]
    assert bh.filter(sliced, "n > 3")["n"].to_pylist() == [4, 5]


def test_record_batch_in_record_batch_out(table):
    batch = table.to_batches()[0].slice(1, 4)
    out = bh.filter(batch, "n > 2")
    assert isinstance(out, pa.RecordBatch)
    assert out["n"].to_pylist() == [3, 4, 5]


def test_reader_in_reader_out_filtered_as_it_is_read(table):
    batches = table.to_batches(max_chunksize=2)
    reader = pa.RecordBatchReader.from_batches(table.schema, batches)
    out = bh.filter(reader, "n <> 3")
    assert isinstance(out, pa.RecordBatchReader)
    assert out.read_all()["n"].to_pylist() == [1, 2, 4, 5, 6]


def test_empty_inputs(table):
    empty = table.slice(0, 0)
    f = bh.Filter(table.schema, "n > 0")
    assert f.evaluate(empty).to_pylist() == []
    assert f.mask(empty).to_pylist() == []
    assert f.count(empty) == 0
    assert bh.filter(empty, "n > 0").num_rows == 0
    no_batches = pa.Table.from_batches([], schema=table.schema)
    assert f.evaluate(no_batches).to_pylist() == []
    assert bh.select(no_batches, "n + 1 AS m").num_rows == 0


def test_select_names_and_types(table):
    out = bh.select(table, ["n * 2 AS twice", "s", "upper(s)"], where="n < 4")
    assert out.schema.names == ["twice", "s", "upper(s)"]
    assert out.schema.field("twice").type == pa.int64()
    assert out.to_pydict() == {
        "twice": [2, 4, 6],
        "s": ["apple", "Banana", "cherry"],
        "upper(s)": ["APPLE", "BANANA", "CHERRY"],
    }
    # One string may hold a whole select list.
    assert bh.select(table, "n, n + 1 AS m").schema.names == ["n", "m"]


def test_select_object_compiles_once(table):
    sel = bh.Select(table.schema, ["n + 1 AS m"], where="n > 4")
    assert sel.schema.names == ["m"]
    assert sel(table)["m"].to_pylist() == [6, 7]
    assert sel(table.slice(5))["m"].to_pylist() == [7]


def test_a_predicate_that_reads_no_column(table):
    assert bh.Filter(table, "TRUE").count(table) == 6
    assert bh.Filter(table, "1 = 2").count(table) == 0


def test_parse_error_has_the_caret(table):
    with pytest.raises(bh.ParseError) as e:
        bh.Filter(table.schema, "n >")
    assert isinstance(e.value, bh.BroadheadError)
    message = str(e.value)
    assert "n >" in message and "^" in message


def test_bind_error_names_the_column_and_suggests(table):
    with pytest.raises(bh.BindError) as e:
        bh.Filter(table.schema, "nn > 1")
    assert "unknown column 'nn'" in str(e.value)
    assert "did you mean 'n'" in str(e.value)
    assert e.value.span == (1, 1, 3)
    assert str(e.value).splitlines()[1:] == ["  nn > 1", "  ^^"]


def test_type_error_is_a_bind_error(table):
    with pytest.raises(bh.BindError, match="invalid DOUBLE literal 'abc'"):
        bh.Filter(table.schema, "x > 'abc'")


def test_row_error_names_the_row_across_chunks():
    t = pa.concat_tables(
        [pa.table({"d": pa.array([1, 2], pa.int64())}), pa.table({"d": pa.array([4, 0], pa.int64())})]
    )
    with pytest.raises(bh.EvalError) as e:
        bh.filter(t, "10 / d > 1")
    assert e.value.row == 3
    assert "division by zero at row 3" in str(e.value)


def test_non_str_arguments_are_type_errors(table):
    with pytest.raises(TypeError):
        bh.Filter(table.schema, 42)
    with pytest.raises(TypeError, match="expected tabular data"):
        bh.filter([1, 2, 3], "x > 1")


def test_schema_mismatch_compiles_for_the_new_types(table):
    f = bh.Filter(table.schema, "n > 4")
    as_int32 = table.set_column(1, "n", table["n"].cast(pa.int32()))
    assert f.evaluate(as_int32).to_pylist() == [4, 5]


def test_explain_shows_the_stages(table):
    text = bh.explain(table.schema, "n > 4 AND s LIKE 'a%'")
    assert "define" in text  # LLVM IR
    assert bh.Filter(table, "n > 4").explain() == bh.explain(table, "n > 4")


def test_functions_lists_the_registry():
    all_functions = bh.functions()
    assert all_functions.num_rows > 150
    assert set(all_functions.schema.names) >= {"name", "signature", "description", "kernel"}
    names = bh.functions("regexp*").column("name").to_pylist()
    assert names and all(n.startswith("regexp") for n in names)
    assert bh.functions("no_such_function_zz").num_rows == 0
    with pytest.raises(ValueError, match="unclosed"):
        bh.functions("[")


def test_a_filter_is_used_from_many_threads_at_once():
    n = 200_000
    t = pa.table({"v": pa.array(range(n), pa.int64())})
    f = bh.Filter(t.schema, "v % 7 = 3 AND v > 1000")
    expected = sum(1 for v in range(1001, n) if v % 7 == 3)
    chunks = [t.slice(i, n // 8) for i in range(0, n, n // 8)]
    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(f.count, chunks * 4))
    assert sum(counts) == expected * 4


def test_the_gil_is_released_while_evaluating():
    # With the switch interval at 100 s the main thread never hands the GIL over
    # on its own: another thread runs during the evaluation only if the evaluation
    # releases the GIL.
    n = 2_000_000
    t = pa.table({"s": pa.array(["x" * (i % 50) for i in range(n)])})
    f = bh.Filter(t.schema, "regexp_matches(s, 'x{20}y') OR length(s) > 10")
    ticks = []
    started = threading.Event()
    done = threading.Event()

    def tick():
        started.set()
        # Each wait releases the GIL, so the main thread gets it back at once.
        while not done.wait(0.0005):
            ticks.append(1)

    interval = sys.getswitchinterval()
    worker = threading.Thread(target=tick)
    worker.start()
    started.wait()
    sys.setswitchinterval(100)
    try:
        before = len(ticks)
        for _ in range(5):
            f.count(t)
        after = len(ticks)
    finally:
        sys.setswitchinterval(interval)
        done.set()
        worker.join()
    assert after > before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_after_compile(table):
    f = bh.Filter(table.schema, "n * 3 > 7 AND s IS NOT NULL")
    expected = f.evaluate(table).to_pylist()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            got = f.evaluate(table).to_pylist()
            g = bh.Filter(table.schema, "n < 3")  # a new compile in the child
            ok = got == expected and g.count(table) == 2
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert os.read(read, 2) == b"ok"


def test_a_failing_producer_raises():
    schema = pa.schema([("n", pa.int64())])

    def batches():
        yield pa.record_batch([pa.array([1, 2])], schema=schema)
        raise RuntimeError("the producer broke")

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    with pytest.raises(ValueError, match="^reading the input failed: RuntimeError: the producer broke$"):
        bh.Filter(schema, "n > 1").count(reader)


def test_ctrl_c_while_reading_a_stream_is_a_keyboard_interrupt():
    # Ctrl-C (here: interrupt_main, with Python's own SIGINT handler installed: a
    # process started in the background may inherit SIGINT ignored) while the
    # producer of a stream runs raises KeyboardInterrupt in the producer; it reaches
    # the caller as KeyboardInterrupt, not as an error of the data.
    import _thread
    import signal

    schema = pa.schema([("n", pa.int64())])

    def batches():
        yield pa.record_batch([pa.array([1, 2])], schema=schema)
        _thread.interrupt_main()
        for _ in range(10**8):  # the interrupt is delivered at a check of the loop
            pass
        yield pa.record_batch([pa.array([3])], schema=schema)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        reader = pa.RecordBatchReader.from_batches(schema, batches())
        with pytest.raises(KeyboardInterrupt):
            bh.Filter(schema, "n > 1").count(reader)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_version():
    assert isinstance(bh.__version__, str) and bh.__version__.count(".") == 2


def test_one_shot_calls_in_a_loop_reuse_what_they_built(table):
    # The same predicate over data of another schema (other types, other columns)
    # still compiles for that data, and errors are still raised for bad data.
    assert bh.filter(table, "n > 4")["n"].to_pylist() == [5, 6]
    other = pa.table({"n": pa.array([5, 9], pa.int32())})
    assert bh.filter(other, "n > 4")["n"].to_pylist() == [5, 9]
    with pytest.raises(bh.BindError, match="unknown column 'n'"):
        bh.filter(pa.table({"m": [1]}), "n > 4")
    assert bh.select(table, "n * 2 AS m", where="n > 5")["m"].to_pylist() == [12]
    assert bh.select(other, "n * 2 AS m", where="n > 5")["m"].to_pylist() == [18]
    for i in range(100):
        assert bh.filter(table, f"n > {i % 7}").num_rows == max(0, 6 - i % 7)
