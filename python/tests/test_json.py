"""The JSON functions against DuckDB's on generated documents and paths.

Documents are drawn from what both read alike: strict JSON (no NaN, no trailing
commas), integers within 64 bits, objects without repeated keys (docs/semantics.md
lists where the two differ). Each document is written compactly, with whitespace,
or with non-ASCII escaped; a few texts are not JSON at all, and then both must
fail the query.
"""

import json

import pyarrow as pa
from hypothesis import given, note
from hypothesis import strategies as st

import broadhead as bh

from _compare import duckdb_values, outcome

KEYS = ["a", "b", "a b", "é", "x.y", 'q"t', "0"]
STRINGS = ["", "x", "héllo", "日本", 'q"uote', "back\\slash", "line\nbreak", "tab\t", "\x01", "😀"]
FLOATS = [0.5, -1.25, 100.0, 1e100, 1.5e-7, 3.141592653589793, -0.0, 1e21, 123456.789]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.sampled_from(FLOATS),
    st.sampled_from(STRINGS),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    ),
    max_leaves=12,
)


@st.composite
def texts(draw):
    if draw(st.integers(0, 30)) == 0:
        return draw(st.sampled_from(["{", "nope", "", "[1] [2]", "{\"a\":1}x"]))
    doc = draw(documents)
    style = draw(st.sampled_from(["compact", "spaced", "ascii"]))
    if style == "compact":
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    if style == "spaced":
        return json.dumps(doc, indent=2, ensure_ascii=False)
    return json.dumps(doc)


def quoted_key(k):
    return '."' + k.replace("\\", "\\\\").replace('"', '\\"') + '"'


@st.composite
def paths(draw):
    steps = draw(
        st.lists(
            st.one_of(
                st.sampled_from(KEYS).map(quoted_key),
                st.sampled_from(["a", "b", "é", "0"]).map(lambda k: "." + k),
                st.integers(0, 4).map(lambda i: f"[{i}]"),
                st.integers(0, 4).map(lambda i: f"[#-{i}]"),
            ),
            max_size=3,
        )
    )
    form = draw(st.sampled_from(["dollar", "dollar", "key", "pointer"]))
    if form == "key":
        return draw(st.sampled_from(KEYS))
    if form == "pointer":
        return "/" + "/".join(draw(st.lists(st.sampled_from(["a", "b", "0", "1"]), max_size=3)))
    return "$" + "".join(steps)


def sql_string(s):
    return "'" + s.replace("'", "''") + "'"


CALLS = [
    "json_extract(j, {p})",
    "j -> {p}",
    "json_extract_string(j, {p})",
    "j ->> {p}",
    "json_value(j, {p})",
    "json_type(j, {p})",
    "json_array_length(j, {p})",
    "json_exists(j, {p})",
    "json_valid(j)",
    "json_type(j)",
    "json_contains(j, {n})",
]


@given(
    st.lists(st.one_of(st.none(), texts()), min_size=1, max_size=8),
    paths(),
    st.sampled_from(CALLS),
    texts().filter(lambda t: t.strip() not in ("", "{", "nope", "[1] [2]", "{\"a\":1}x")),
)
def test_json_functions_agree_with_duckdb(docs, path, call, needle):
    sql = call.format(p=sql_string(path), n=sql_string(needle))
    note(f"{sql} over {docs!r}")
    table = pa.table({"j": pa.array(docs, pa.string())})
    ours = outcome(lambda: bh.select(table, [f"{sql} AS v"])["v"].to_pylist())
    theirs = outcome(lambda: duckdb_values(table, sql))
    if ours[0] == "error" or theirs[0] == "error":
        assert ours[0] == theirs[0], (ours, theirs)
        return
    assert ours[1] == theirs[1]


def test_known_answers():
    # DuckDB's answers, by hand.
    t = pa.table({"j": ['{"a": {"b": [1, 2, {"c": "x"}]}, "n": null}', "[10, 20, 30]", None]})
    got = bh.select(
        t,
        [
            "j -> '$.a.b[2]' AS obj",
            "j ->> '$.a.b[2].c' AS s",
            "j ->> 'n' AS n",
            "j -> 'n' AS jn",
            "j ->> -1 AS last",
            "json_array_length(j, '$.a.b') AS len",
            "json_type(j) AS t",
        ],
    ).to_pylist()
    assert got == [
        {"obj": '{"c":"x"}', "s": "x", "n": None, "jn": "null", "last": None, "len": 3, "t": "OBJECT"},
        {"obj": None, "s": None, "n": None, "jn": None, "last": "30", "len": None, "t": "ARRAY"},
        {"obj": None, "s": None, "n": None, "jn": None, "last": None, "len": None, "t": None},
    ]
    assert bh.Filter(t.schema, "j->>'$.a.b[2].c' = 'x'").evaluate(t).to_pylist() == [0]
