"""STRUCT fields (`s.f`, `s['f']`, `struct_extract`) against DuckDB on generated
tables: NULL structs over children that hold values, nested structs, several chunks
or a slice."""

import pyarrow as pa
from _compare import duckdb_rows, duckdb_values, outcome
from hypothesis import given, note
from hypothesis import strategies as st

import broadhead as bh

INNER = pa.struct([("c", pa.int32())])
S = pa.struct([("a", pa.int64()), ("b", pa.string()), ("inner", INNER)])

PREDICATES = [
    "s.a < 0",
    "s['a'] % 3 = 0",
    "struct_extract(s, 'b') = 'x'",
    "s.b LIKE '%é%'",
    "s.inner.c > 5 OR s.a IS NULL",
    "s.inner['c'] IS NULL",
    "coalesce(s.a, -1) = -1",
    "s.a + s.inner.c > 3",
    "NOT (s.b = 'x') AND i > 0",
]
PROJECTIONS = ["s.a", "s.b", "s.inner.c", "s.a * 2 + s.inner.c", "upper(s.b)"]


@st.composite
def tables(draw):
    n = draw(st.integers(0, 40))
    maybe = lambda v: st.one_of(st.none(), v)  # noqa: E731
    inner = st.one_of(st.none(), st.fixed_dictionaries({"c": maybe(st.integers(-10, 10))}))
    s = st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {"a": maybe(st.integers(-20, 20)), "b": maybe(st.sampled_from(["", "x", "é", "Ab"])), "inner": inner}
        ),
    )
    rows = draw(st.lists(s, min_size=n, max_size=n))
    ints = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    table = pa.table({"i": pa.array(ints, pa.int64()), "s": pa.array(rows, S)})
    shape = draw(st.sampled_from(["one", "chunks", "slice"]))
    if shape == "chunks" and n > 2:
        k = n // 2
        table = pa.concat_tables([table.slice(0, k), table.slice(k)])
    elif shape == "slice" and n > 2:
        table = table.slice(1, n - 2)
    return table


def copied(table):
    """The table rewritten through Arrow IPC (offsets 0): DuckDB refuses a sliced
    STRUCT holding a STRUCT ("a struct … below an offset the conversion would
    drop"); Broadhead reads the slice itself."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return pa.ipc.open_stream(sink.getvalue()).read_all()


@given(tables(), st.sampled_from(PREDICATES))
def test_struct_predicates_agree_with_duckdb(table, pred):
    note(pred)
    ours = outcome(lambda: bh.Filter(table.schema, pred).evaluate(table).to_pylist())
    theirs = outcome(lambda: duckdb_rows(copied(table), pred))
    assert ours == theirs


@given(tables(), st.sampled_from(PROJECTIONS))
def test_struct_projections_agree_with_duckdb(table, expr):
    note(expr)
    ours = outcome(lambda: bh.select(table, [f"{expr} AS v"])["v"].to_pylist())
    theirs = outcome(lambda: duckdb_values(copied(table), expr))
    assert ours == theirs
