"""Generated tables × generated predicates and projections: Broadhead against DuckDB
over the same Arrow data, and against pyarrow.compute where it has the operations.

Tables have every column type the generator uses, NULLs, NaN and infinities, and
arrive as one chunk, as several, or as a slice of a larger table. Expressions are
drawn from the SQL that Broadhead and DuckDB both accept with the same meaning
(docs/semantics.md lists where the two differ; none of that is drawn here).
"""

import datetime as dt
import decimal

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, note
from hypothesis import strategies as st

import broadhead as bh

from _compare import duckdb_rows, duckdb_values, outcome, same_value

# ------------------------------------------------------------------ tables

WORDS = ["", "a", "ab", "abc", "B", "Ab%", "x_y", "äpfel", "Ñandú", "zz", "a b", "日本"]
COLUMNS = {
    "i": pa.int64(),
    "j": pa.int32(),
    "f": pa.float64(),
    "s": pa.string(),
    "b": pa.bool_(),
    "d": pa.date32(),
    "ts": pa.timestamp("us"),
    "m": pa.decimal128(9, 2),
    "u": pa.uint16(),
    "r": pa.float32(),
    "ls": pa.large_string(),
    "vs": pa.string_view(),
    "ds": pa.dictionary(pa.int8(), pa.string()),
    "tz": pa.timestamp("us", tz="UTC"),
}


def values(draw, typ, n):
    nulls = st.none()
    if typ == pa.int64():
        v = st.integers(-1000, 1000)
    elif typ == pa.int32():
        v = st.integers(-100, 100)
    elif typ == pa.float64():
        v = st.one_of(
            st.floats(-1e3, 1e3, allow_nan=False, width=32),
            st.sampled_from([0.0, -0.0, 0.5, float("nan"), float("inf"), float("-inf")]),
        )
    elif typ == pa.string():
        v = st.sampled_from(WORDS)
    elif typ == pa.bool_():
        v = st.booleans()
    elif typ == pa.date32():
        v = st.dates(dt.date(1990, 1, 1), dt.date(2030, 12, 31))
    elif typ == pa.timestamp("us"):
        v = st.datetimes(dt.datetime(1990, 1, 1), dt.datetime(2030, 12, 31))
    elif typ == pa.uint16():
        v = st.integers(0, 60000)
    elif typ == pa.float32():
        v = st.sampled_from([0.0, 0.5, -1.5, 100.25, float("nan"), float("inf")])
    elif typ in (pa.large_string(), pa.string_view(), pa.dictionary(pa.int8(), pa.string())):
        v = st.sampled_from(WORDS)
    elif typ == pa.timestamp("us", tz="UTC"):
        v = st.datetimes(dt.datetime(1990, 1, 1), dt.datetime(2030, 12, 31), timezones=st.just(dt.timezone.utc))
    else:
        v = st.integers(-99999, 99999).map(lambda c: decimal.Decimal(c).scaleb(-2))
    return draw(st.lists(st.one_of(nulls, v, v, v), min_size=n, max_size=n))


def column(values, typ):
    if pa.types.is_dictionary(typ):
        return pa.array(values, pa.string()).dictionary_encode().cast(typ)
    return pa.array(values, typ)


@st.composite
def tables(draw):
    n = draw(st.integers(0, 40))
    data = {name: column(values(draw, typ, n), typ) for name, typ in COLUMNS.items()}
    table = pa.table(data)
    layout = draw(st.sampled_from(["one", "chunks", "slice"]))
    if layout == "chunks" and n > 1:
        cuts = sorted(draw(st.lists(st.integers(0, n), min_size=1, max_size=4)))
        bounds = [0] + cuts + [n]
        table = pa.concat_tables([table.slice(a, b - a) for a, b in zip(bounds, bounds[1:])])
    elif layout == "slice" and n > 2:
        start = draw(st.integers(0, n // 2))
        table = table.slice(start, n - start - draw(st.integers(0, n // 4)))
    return table


# ------------------------------------------------------------------ expressions

INT_COLS = ["i", "j"]


@st.composite
def int_expr(draw, depth=2):
    leaf = st.one_of(st.sampled_from(INT_COLS), st.integers(-50, 50).map(lambda v: f"({v})"))
    if depth == 0:
        return draw(leaf)
    kind = draw(st.integers(0, 6))
    if kind <= 2:
        return draw(leaf)
    a = draw(int_expr(depth=depth - 1))
    if kind == 3:
        op = draw(st.sampled_from(["+", "-", "*"]))
        return f"({a} {op} {draw(int_expr(depth=depth - 1))})"
    if kind == 4:
        return f"abs({a})"
    if kind == 5:
        m = draw(st.sampled_from([1, 2, 3, 7, 10, -3]))
        return f"({a} % {m})"
    return f"COALESCE({a}, {draw(st.integers(-5, 5))})"


def float_expr():
    return st.one_of(
        st.just("f"),
        st.builds(lambda a: f"(f * {a})", st.sampled_from(["2.5", "0.5", "-1.0"])),
        st.builds(lambda a: f"(f + {a})", st.sampled_from(INT_COLS)),
        st.just("abs(f)"),
    )


def literal_for(col):
    return {
        "f": st.sampled_from(["0", "0.5", "-1.5", "100", "'NaN'::DOUBLE", "'Infinity'::DOUBLE"]),
        "s": st.sampled_from([f"'{w}'" for w in WORDS]),
        "d": st.dates(dt.date(1990, 1, 1), dt.date(2030, 12, 31)).map(lambda d: f"DATE '{d}'"),
        "ts": st.datetimes(dt.datetime(1990, 1, 1), dt.datetime(2030, 12, 31)).map(
            lambda t: f"TIMESTAMP '{t.isoformat(sep=' ')}'"
        ),
        "m": st.sampled_from(["0", "1.25", "-3.50", "999.99"]),
        "u": st.sampled_from(["0", "100", "30000", "60000"]),
        "r": st.sampled_from(["0", "0.5", "-1.5", "100.25"]),
        "tz": st.datetimes(dt.datetime(1990, 1, 1), dt.datetime(2030, 12, 31)).map(
            lambda t: f"TIMESTAMPTZ '{t.isoformat(sep=' ')}+00'"
        ),
    }.get(col, st.sampled_from([f"'{w}'" for w in WORDS]))


CMP = ["=", "<>", "<", "<=", ">", ">="]
PC_CMP = {"=": pc.equal, "<>": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}
PATTERNS = ["a%", "%b%", "_b%", "%", "", "A%", "%ä%", "x\\_y", "a_", "%c"]


@st.composite
def atom(draw):
    """A predicate without AND/OR/NOT; with its pyarrow.compute form when pyarrow has
    one (a column compared with a literal)."""
    kind = draw(st.integers(0, 11))
    op = draw(st.sampled_from(CMP))
    if kind == 0:
        col = draw(st.sampled_from(INT_COLS))
        v = draw(st.integers(-60, 60))
        return f"{col} {op} {v}", (lambda t, col=col, op=op, v=v: PC_CMP[op](t[col], v))
    if kind == 1:
        return f"{draw(int_expr())} {op} {draw(int_expr())}", None
    if kind == 2:
        col = draw(st.sampled_from(["s", "d", "ts", "m", "ls", "vs", "ds", "tz", "u", "r"]))
        return f"{col} {op} {draw(literal_for(col))}", None
    if kind == 3:
        return f"{draw(float_expr())} {op} {draw(literal_for('f'))}", None
    if kind == 4:
        col = draw(st.sampled_from(list(COLUMNS)))
        neg = draw(st.booleans())
        sql = f"{col} IS {'NOT ' if neg else ''}NULL"
        return sql, (lambda t, col=col, neg=neg: pc.is_valid(t[col]) if neg else pc.is_null(t[col]))
    if kind == 5:
        pat = draw(st.sampled_from(PATTERNS))
        neg = draw(st.booleans())
        # DuckDB's LIKE has no escape character unless ESCAPE names one; Broadhead's
        # is `\` (as PostgreSQL's): written out, they agree.
        escape = " ESCAPE '\\'" if "\\" in pat else ""
        return f"s {'NOT ' if neg else ''}LIKE '{pat}'{escape}", None
    if kind == 6:
        lo, hi = sorted(draw(st.lists(st.integers(-60, 60), min_size=2, max_size=2)))
        neg = draw(st.booleans())
        return f"{draw(int_expr(depth=1))} {'NOT ' if neg else ''}BETWEEN {lo} AND {hi}", None
    if kind == 7:
        items = draw(st.lists(st.integers(-20, 20), min_size=1, max_size=5))
        neg = draw(st.booleans())
        return f"i {'NOT ' if neg else ''}IN ({', '.join(map(str, items))})", None
    if kind == 8:
        fn = draw(st.sampled_from(["length(s)", "year(d)", "month(d)", "day(ts)", "hour(ts)"]))
        return f"{fn} {op} {draw(st.integers(0, 2030))}", None
    if kind == 9:
        fn = draw(st.sampled_from(["upper(s)", "lower(s)", "s || 'x'", "substr(s, 2)", "trim(s)"]))
        return f"{fn} {op} {draw(literal_for('s'))}", None
    if kind == 10:
        return draw(st.sampled_from(["b", "NOT b", "b IS TRUE", "b IS NOT FALSE"])), None
    p = draw(atom())[0]
    return f"CASE WHEN {p} THEN {draw(int_expr(depth=1))} ELSE {draw(int_expr(depth=1))} END {op} 0", None


@st.composite
def predicate(draw, depth=2):
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(atom())
    kind = draw(st.sampled_from(["AND", "OR", "NOT"]))
    a_sql, a_pc = draw(predicate(depth=depth - 1))
    if kind == "NOT":
        return f"NOT ({a_sql})", (lambda t: pc.invert(a_pc(t))) if a_pc else None
    b_sql, b_pc = draw(predicate(depth=depth - 1))
    both = a_pc is not None and b_pc is not None
    if kind == "AND":
        return f"({a_sql}) AND ({b_sql})", (lambda t: pc.and_kleene(a_pc(t), b_pc(t))) if both else None
    return f"({a_sql}) OR ({b_sql})", (lambda t: pc.or_kleene(a_pc(t), b_pc(t))) if both else None


@st.composite
def projection(draw):
    return draw(
        st.one_of(
            int_expr(),
            float_expr(),
            st.sampled_from(
                [
                    "upper(s)",
                    "s || '-' || s",
                    "length(s)",
                    "substr(s, 2, 2)",
                    "m * 2",
                    "m + 1.25",
                    "d + 1",
                    "year(d)",
                    "date_trunc('month', ts)",
                    "CASE WHEN b THEN s ELSE 'no' END",
                    "COALESCE(s, 'null')",
                    "i > j",
                ]
            ),
        )
    )


# ------------------------------------------------------------------ comparisons


@given(tables(), predicate())
def test_filters_agree_with_duckdb_and_pyarrow(table, pred):
    sql, pc_form = pred
    note(f"predicate: {sql}")
    ours = outcome(lambda: bh.Filter(table.schema, sql).evaluate(table).to_pylist())
    theirs = outcome(lambda: duckdb_rows(table, sql))
    if ours[0] == "error" or theirs[0] == "error":
        # Where one fails on a row, the other must fail too.
        assert ours[0] == theirs[0], (ours, theirs)
        return
    assert ours[1] == theirs[1]
    if pc_form is not None:
        mask = pc_form(table).combine_chunks() if table.num_rows else pa.array([], pa.bool_())
        expected = [i for i, v in enumerate(mask.to_pylist()) if v]
        assert ours[1] == expected
    # The other ways to ask agree with the positions.
    f = bh.Filter(table.schema, sql)
    mask = f.mask(table).to_pylist()
    assert [i for i, v in enumerate(mask) if v] == ours[1]
    assert f.count(table) == len(ours[1])
    assert bh.filter(table, sql).num_rows == len(ours[1])


@given(tables(), projection(), st.one_of(st.none(), predicate(depth=1)))
def test_projections_agree_with_duckdb(table, expr, where):
    where_sql = where[0] if where else None
    note(f"select {expr} where {where_sql}")
    ours = outcome(lambda: bh.select(table, [f"{expr} AS v"], where=where_sql)["v"].to_pylist())
    theirs = outcome(lambda: duckdb_values(table, expr, where_sql))
    if ours[0] == "error" or theirs[0] == "error":
        assert ours[0] == theirs[0], (ours, theirs)
        return
    assert len(ours[1]) == len(theirs[1])
    for k, (a, b) in enumerate(zip(ours[1], theirs[1])):
        assert same_value(a, b), (k, a, b)
