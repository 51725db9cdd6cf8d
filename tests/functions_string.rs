//! The string functions against hand-computed values (PostgreSQL's answers, or
//! DuckDB's where the function is DuckDB's): NULLs, empty strings, multi-byte
//! characters, and the rows that fail. Each expression runs over columns, so the
//! row-wise implementation runs (nothing folds away), in the JIT (which must
//! compile it) and in the interpreter, which must agree.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::display::array_value_to_string;
use broadhead::bind::bind;
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::sql::parse_expr;
use broadhead::Projector;

/// One row of the test table: `s`, `t` (VARCHAR) and `n` (BIGINT).
type Row<'a> = (Option<&'a str>, Option<&'a str>, Option<i64>);

/// A row without NULLs.
fn r<'a>(s: &'a str, t: &'a str, n: i64) -> Row<'a> {
    (Some(s), Some(t), Some(n))
}

/// Rows with only `s` set (`t` = '', `n` = 0); `None` is a NULL `s`.
fn s_rows<'a>(values: &[Option<&'a str>]) -> Vec<Row<'a>> {
    values.iter().map(|s| (*s, Some(""), Some(0))).collect()
}

fn batch(rows: &[Row]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Utf8, true),
        Field::new("t", DataType::Utf8, true),
        Field::new("n", DataType::Int64, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.0))) as ArrayRef,
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1))),
            Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.2))),
        ],
    )
    .unwrap()
}

fn shown(a: &dyn Array) -> Vec<Option<String>> {
    (0..a.len())
        .map(|i| (!a.is_null(i)).then(|| array_value_to_string(a, i).unwrap()))
        .collect()
}

/// `expr` over `rows` in the JIT and in the interpreter: the values as printed
/// (`None` for NULL), or the error; the two back ends must agree.
fn eval(expr: &str, rows: &[Row]) -> Result<Vec<Option<String>>, String> {
    let batch = batch(rows);
    let schema = batch.schema();
    let projector = Projector::new(&schema, &[expr]).unwrap_or_else(|e| panic!("{expr}: {e}"));
    assert!(projector.is_jit(0), "{expr} is not compiled");
    let jit = projector
        .evaluate(&batch)
        .map(|v| shown(v[0].as_ref()))
        .map_err(|e| e.to_string());
    let typed = optimize(bind(&parse_expr(expr).unwrap(), &schema).unwrap());
    let reference = interpret(&typed, &batch)
        .map(|a| shown(a.as_ref()))
        .map_err(|e| e.to_string());
    assert_eq!(jit, reference, "{expr}: the JIT and the interpreter differ");
    jit
}

/// Asserts the values of `expr` over `rows`.
fn check(expr: &str, rows: &[Row], expected: &[Option<&str>]) {
    let got = eval(expr, rows).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let expected: Vec<Option<String>> = expected.iter().map(|v| v.map(str::to_string)).collect();
    assert_eq!(got, expected, "{expr}");
}

/// Asserts that `expr` fails on its first row with `message`.
fn check_error(expr: &str, rows: &[Row], message: &str) {
    match eval(expr, rows) {
        Err(e) => assert_eq!(e, format!("{message} at row 0"), "{expr}"),
        Ok(v) => panic!("{expr}: {v:?}, expected the error {message}"),
    }
}

#[test]
fn case_mapping_is_unicode() {
    let words = s_rows(&[
        Some("straße"),
        Some(""),
        None,
        Some("héllo wORLD"),
        Some("日本語 abc"),
        Some("2nd place-éTÉ"),
    ]);
    let upper = [
        Some("STRASSE"),
        Some(""),
        None,
        Some("HÉLLO WORLD"),
        Some("日本語 ABC"),
        Some("2ND PLACE-ÉTÉ"),
    ];
    check("upper(s)", &words, &upper);
    check("ucase(s)", &words, &upper);
    check(
        "lower(s)",
        &words,
        &[
            Some("straße"),
            Some(""),
            None,
            Some("héllo world"),
            Some("日本語 abc"),
            Some("2nd place-été"),
        ],
    );
    check(
        "initcap(s)",
        &words,
        &[
            Some("Straße"),
            Some(""),
            None,
            Some("Héllo World"),
            Some("日本語 Abc"),
            Some("2nd Place-Été"),
        ],
    );
}

#[test]
fn sizes_and_codes() {
    let words = s_rows(&[
        Some("héllo"),
        Some(""),
        None,
        Some("日本語"),
        Some("straße"),
    ]);
    let bytes = [Some("6"), Some("0"), None, Some("9"), Some("7")];
    check("octet_length(s)", &words, &bytes);
    check("strlen(s)", &words, &bytes);
    check(
        "ascii(s)",
        &words,
        &[Some("104"), Some("0"), None, Some("26085"), Some("115")],
    );
    let codes: Vec<Row> = [Some(65), Some(233), Some(26085), None]
        .into_iter()
        .map(|n| (Some(""), Some(""), n))
        .collect();
    check("chr(n)", &codes, &[Some("A"), Some("é"), Some("日"), None]);
    let code = |n| vec![r("", "", n)];
    check_error("chr(n)", &code(0), "null character not permitted");
    check_error(
        "chr(n)",
        &code(-1),
        "requested character too large for encoding: -1",
    );
    check_error(
        "chr(n)",
        &code(0x110000),
        "requested character too large for encoding: 1114112",
    );
    check_error(
        "chr(n)",
        &code(0xd800),
        "requested character not valid for encoding: 55296",
    );
}

#[test]
fn left_and_right_count_characters() {
    let rows = [
        r("héllo", "", 2),
        r("héllo", "", -2),
        r("héllo", "", 0),
        r("héllo", "", 10),
        r("héllo", "", -10),
        r("", "", 3),
        (None, Some(""), Some(1)),
        (Some("日本語"), Some(""), None),
        r("日本語", "", i64::MIN),
        r("日本語", "", i64::MAX),
    ];
    check(
        "left(s, n)",
        &rows,
        &[
            Some("hé"),
            Some("hél"),
            Some(""),
            Some("héllo"),
            Some(""),
            Some(""),
            None,
            None,
            Some(""),
            Some("日本語"),
        ],
    );
    check(
        "right(s, n)",
        &rows,
        &[
            Some("lo"),
            Some("llo"),
            Some(""),
            Some("héllo"),
            Some(""),
            Some(""),
            None,
            None,
            Some(""),
            Some("日本語"),
        ],
    );
}

#[test]
fn trims_cut_spaces_or_a_character_set() {
    let words = s_rows(&[Some("  hi  "), Some(""), Some("   "), None, Some(" \té ")]);
    check(
        "btrim(s)",
        &words,
        &[Some("hi"), Some(""), Some(""), None, Some("\té")],
    );
    check(
        "trim(s)",
        &words,
        &[Some("hi"), Some(""), Some(""), None, Some("\té")],
    );
    check(
        "ltrim(s)",
        &words,
        &[Some("hi  "), Some(""), Some(""), None, Some("\té ")],
    );
    check(
        "rtrim(s)",
        &words,
        &[Some("  hi"), Some(""), Some(""), None, Some(" \té")],
    );
    let rows = [
        r("xxhéllox", "xé", 0),
        r("éxé", "xé", 0),
        r("hé", "xé", 0),
        r("ab", "", 0),
        (Some("ab"), None, Some(0)),
        r("日本語日", "日", 0),
    ];
    check(
        "btrim(s, t)",
        &rows,
        &[
            Some("héllo"),
            Some(""),
            Some("h"),
            Some("ab"),
            None,
            Some("本語"),
        ],
    );
    check(
        "ltrim(s, t)",
        &rows,
        &[
            Some("héllox"),
            Some(""),
            Some("hé"),
            Some("ab"),
            None,
            Some("本語日"),
        ],
    );
    check(
        "rtrim(s, t)",
        &rows,
        &[
            Some("xxhéllo"),
            Some(""),
            Some("h"),
            Some("ab"),
            None,
            Some("日本語"),
        ],
    );
}

#[test]
fn split_part_counts_fields_from_either_end() {
    let rows = [
        r("a,b,,c", ",", 1),
        r("a,b,,c", ",", 3),
        r("a,b,,c", ",", 4),
        r("a,b,,c", ",", 5),
        r("a,b,,c", ",", -1),
        r("a,b,,c", ",", -4),
        r("a,b,,c", ",", -5),
        r("", ",", 1),
        r("日本||語", "||", 2),
        r("abc", "", 1),
        r("abc", "", -1),
        r("abc", "", 2),
        r("aaa", "aa", -1),
        r("abc", ",", i64::MIN),
        (None, Some(","), Some(1)),
    ];
    check(
        "split_part(s, t, n)",
        &rows,
        &[
            Some("a"),
            Some(""),
            Some("c"),
            Some(""),
            Some("c"),
            Some("a"),
            Some(""),
            Some(""),
            Some("語"),
            Some("abc"),
            Some("abc"),
            Some(""),
            Some("a"),
            Some(""),
            None,
        ],
    );
    check_error(
        "split_part(s, t, n)",
        &[r("a,b", ",", 0)],
        "field position must not be zero",
    );
}

#[test]
fn padding_fills_or_cuts_to_a_number_of_characters() {
    let rows = [
        r("hi", "xy", 5),
        r("héllo", "x", 3),
        r("hi", "x", -1),
        r("hi", "", 5),
        r("日本", "語", 4),
        r("hi", "", i64::MAX),
        (None, Some("x"), Some(3)),
        (Some("hi"), Some("x"), None),
        (Some("hi"), None, Some(3)),
    ];
    check(
        "lpad(s, n, t)",
        &rows,
        &[
            Some("xyxhi"),
            Some("hél"),
            Some(""),
            Some("hi"),
            Some("語語日本"),
            Some("hi"),
            None,
            None,
            None,
        ],
    );
    check(
        "rpad(s, n, t)",
        &rows,
        &[
            Some("hixyx"),
            Some("hél"),
            Some(""),
            Some("hi"),
            Some("日本語語"),
            Some("hi"),
            None,
            None,
            None,
        ],
    );
    let spaces = [r("hi", "", 4), r("héllo", "", 2), r("", "", 1)];
    check(
        "lpad(s, n)",
        &spaces,
        &[Some("  hi"), Some("hé"), Some(" ")],
    );
    check(
        "rpad(s, n)",
        &spaces,
        &[Some("hi  "), Some("hé"), Some(" ")],
    );
    check_error(
        "lpad(s, n)",
        &[r("hi", "", 300_000_000)],
        "requested length too large",
    );
    check_error(
        "rpad(s, n, t)",
        &[r("hi", "x", i64::MAX)],
        "requested length too large",
    );
}

#[test]
fn repeat_reverse_replace_translate() {
    let rows = [
        r("ab", "", 3),
        r("ab", "", 0),
        r("ab", "", -2),
        r("", "", i64::MAX),
        r("日", "", 2),
        (None, Some(""), Some(2)),
    ];
    check(
        "repeat(s, n)",
        &rows,
        &[
            Some("ababab"),
            Some(""),
            Some(""),
            Some(""),
            Some("日日"),
            None,
        ],
    );
    check_error(
        "repeat(s, n)",
        &[r("ab", "", 600_000_000)],
        "requested length too large",
    );
    check_error(
        "repeat(s, n)",
        &[r("ab", "", i64::MAX)],
        "requested length too large",
    );
    check(
        "reverse(s)",
        &s_rows(&[Some("héllo"), Some(""), None, Some("日本語")]),
        &[Some("olléh"), Some(""), None, Some("語本日")],
    );
    let rows = [
        r("héllo", "L", 0),
        r("héllo", "", 0),
        r("", "x", 0),
        (None, Some("x"), Some(0)),
        (Some("héllo"), None, Some(0)),
    ];
    check(
        "replace(s, 'l', t)",
        &rows,
        &[Some("héLLo"), Some("héo"), Some(""), None, None],
    );
    check(
        "replace(s, '', t)",
        &rows,
        &[Some("héllo"), Some("héllo"), Some(""), None, None],
    );
    check(
        "translate(s, 'éß', t)",
        &[r("héllo straße", "e", 0), r("", "e", 0), r("ßß", "", 0)],
        &[Some("hello strae"), Some(""), Some("")],
    );
    check(
        "translate(s, 'aa', 'xy')",
        &s_rows(&[Some("banana")]),
        &[Some("bxnxnx")],
    );
}

#[test]
fn concat_ws_skips_nulls_but_not_a_null_separator() {
    let rows = [
        r(",", "a", 0),
        (None, Some("a"), Some(0)),
        (Some(","), None, Some(0)),
        r("", "a", 0),
        r("·", "日", 0),
    ];
    check(
        "concat_ws(s, t, 'z')",
        &rows,
        &[Some("a,z"), None, Some("z"), Some("az"), Some("日·z")],
    );
    check(
        "concat_ws(s)",
        &rows,
        &[Some(""), None, Some(""), Some(""), Some("")],
    );
}

#[test]
fn quote_literal_doubles_quotes_and_backslashes() {
    check(
        "quote_literal(s)",
        &s_rows(&[Some("O'Reilly"), Some("a\\b"), Some(""), None, Some("日")]),
        &[
            Some("'O''Reilly'"),
            Some("E'a\\\\b'"),
            Some("''"),
            None,
            Some("'日'"),
        ],
    );
}

#[test]
fn positions_count_characters() {
    let rows = [
        r("héllo", "l", 0),
        r("héllo", "x", 0),
        r("héllo", "", 0),
        r("日本語", "語", 0),
        r("", "", 0),
        (None, Some("a"), Some(0)),
        (Some("a"), None, Some(0)),
    ];
    let expected = [
        Some("3"),
        Some("0"),
        Some("1"),
        Some("3"),
        Some("1"),
        None,
        None,
    ];
    for f in ["strpos", "position", "instr"] {
        check(&format!("{f}(s, t)"), &rows, &expected);
    }
}

#[test]
fn prefix_suffix_and_substring_tests() {
    let rows = [
        r("héllo", "hé", 0),
        r("héllo", "lo", 0),
        r("héllo", "", 0),
        r("", "a", 0),
        r("日本語", "本", 0),
        (None, Some("a"), Some(0)),
    ];
    let starts = [
        Some("true"),
        Some("false"),
        Some("true"),
        Some("false"),
        Some("false"),
        None,
    ];
    let ends = [
        Some("false"),
        Some("true"),
        Some("true"),
        Some("false"),
        Some("false"),
        None,
    ];
    check("starts_with(s, t)", &rows, &starts);
    check("prefix(s, t)", &rows, &starts);
    check("ends_with(s, t)", &rows, &ends);
    check("suffix(s, t)", &rows, &ends);
    check(
        "contains(s, t)",
        &rows,
        &[
            Some("true"),
            Some("true"),
            Some("true"),
            Some("false"),
            Some("true"),
            None,
        ],
    );
}

#[test]
fn like_and_ilike_with_an_escape_character() {
    let rows = [
        r("10%", "10!%", 0),
        r("100", "10!%", 0),
        r("a_b", "a!_b", 0),
        r("axb", "a!_b", 0),
        r("a!b", "a!!b", 0),
        r("héllo", "h_llo", 0),
        r("a\nb", "a%b", 0),
        r("", "%", 0),
        r("", "_", 0),
        r("a.c", "a.c", 0),
        r("abc", "a.c", 0),
        (None, Some("%"), Some(0)),
        (Some("a"), None, Some(0)),
    ];
    check(
        "like(s, t, '!')",
        &rows,
        &[
            Some("true"),
            Some("false"),
            Some("true"),
            Some("false"),
            Some("true"),
            Some("true"),
            Some("true"),
            Some("true"),
            Some("false"),
            Some("true"),
            Some("false"),
            None,
            None,
        ],
    );
    // No escape character: a backslash is an ordinary character.
    check(
        "like(s, 'a\\%', '')",
        &s_rows(&[Some("a\\xyz"), Some("a%")]),
        &[Some("true"), Some("false")],
    );
    check("like(s, 'a%', t)", &[(Some("ab"), None, Some(0))], &[None]);
    check(
        "ilike(s, 'HÉ!_%', '!')",
        &s_rows(&[Some("hé_llo"), Some("héllo"), Some("HÉ_"), None]),
        &[Some("true"), Some("false"), Some("true"), None],
    );
    check_error(
        "like(s, t, '!')",
        &[r("a", "a!", 0)],
        "LIKE pattern must not end with escape character",
    );
    check_error(
        "ilike(s, t, 'ab')",
        &[r("a", "a", 0)],
        "invalid escape string (it must be empty or one character)",
    );
}

#[test]
fn similar_to_is_an_anchored_sql_regular_expression() {
    let rows = [
        r("abc", "abc", 0),
        r("abc", "a", 0),
        r("abc", "(a|x)%", 0),
        r("a.c", "a.c", 0),
        r("abc", "a.c", 0),
        r("aaa", "a+", 0),
        r("ab", "a_", 0),
        r("héllo", "h_llo", 0),
        r("a%", "a\\%", 0),
        r("ab", "a\\%", 0),
        r("a\nb", "a_b", 0),
        r("a^$", "a^$", 0),
        r("b", "[abc]", 0),
        r("]", "[]x]", 0),
        (None, Some("a"), Some(0)),
    ];
    check(
        "similar_to(s, t)",
        &rows,
        &[
            Some("true"),
            Some("false"),
            Some("true"),
            Some("true"),
            Some("false"),
            Some("true"),
            Some("true"),
            Some("true"),
            Some("true"),
            Some("false"),
            Some("true"),
            Some("true"),
            Some("true"),
            Some("true"),
            None,
        ],
    );
    check(
        "similar_to(s, 'a#%', '#')",
        &s_rows(&[Some("a%"), Some("ab")]),
        &[Some("true"), Some("false")],
    );
    check_error(
        "similar_to(s, t)",
        &[r("a", "(", 0)],
        "invalid regular expression: unclosed group",
    );
    // A trailing escape character is dropped (PostgreSQL).
    check(
        "similar_to(s, t)",
        &[r("a", "a\\", 0), r("a\\", "a\\", 0)],
        &[Some("true"), Some("false")],
    );
}

#[test]
fn regexp_like_follows_postgresql_flags() {
    let rows = [
        r("héllo", "^h.l", 0),
        r("héllo", "L", 0),
        r("a\nb", "a.b", 0),
        r("x\nab", "^ab", 0),
        r("", "", 0),
        (None, Some("a"), Some(0)),
    ];
    let plain = [
        Some("true"),
        Some("false"),
        Some("true"),
        Some("false"),
        Some("true"),
        None,
    ];
    check("regexp_like(s, t)", &rows, &plain);
    check("regexp_matches(s, t)", &rows, &plain);
    check("regexp_like(s, t, '')", &rows, &plain);
    check(
        "regexp_like(s, t, 'n')",
        &rows,
        &[
            Some("true"),
            Some("false"),
            Some("false"),
            Some("true"),
            Some("true"),
            None,
        ],
    );
    check(
        "regexp_like(s, t, 'i')",
        &rows,
        &[
            Some("true"),
            Some("true"),
            Some("true"),
            Some("false"),
            Some("true"),
            None,
        ],
    );
    check(
        "regexp_like(s, 'L', 'ic')",
        &s_rows(&[Some("héllo")]),
        &[Some("false")],
    );
    check(
        "regexp_like(s, 'É', 'i')",
        &s_rows(&[Some("héllo")]),
        &[Some("true")],
    );
    check_error(
        "regexp_like(s, t, 'z')",
        &[r("a", "a", 0)],
        "invalid regular expression option: \"z\"",
    );
    check_error(
        "regexp_like(s, t, 'g')",
        &[r("a", "a", 0)],
        "regexp_like() does not support the \"global\" option",
    );
    check_error(
        "regexp_like(s, t)",
        &[r("a", "(", 0)],
        "invalid regular expression: unclosed group",
    );
    check(
        "regexp_full_match(s, t)",
        &[r("héllo", "h.*o", 0), r("héllo", "h", 0), r("x", "ab|x", 0)],
        &[Some("true"), Some("false"), Some("true")],
    );
}

#[test]
fn regexp_replace_replaces_the_first_match_unless_global() {
    let rows = [
        r("héllo", "l", 0),
        r("abc", "(b)", 0),
        r("abc", "x", 0),
        r("", "x*", 0),
        (None, Some("a"), Some(0)),
    ];
    check(
        "regexp_replace(s, t, '[\\1\\&\\\\$1]')",
        &rows,
        &[
            Some("hé[l\\$1]lo"),
            Some("a[bb\\$1]c"),
            Some("abc"),
            Some("[\\$1]"),
            None,
        ],
    );
    check(
        "regexp_replace(s, t, '-', 'g')",
        &rows,
        &[Some("hé--o"), Some("a-c"), Some("abc"), Some("-"), None],
    );
    check(
        "regexp_replace(s, 'x*', '-', 'g')",
        &s_rows(&[Some("abc")]),
        &[Some("-a-b-c-")],
    );
    // After a match, the next search starts where it ended, and may find an
    // empty match there (PostgreSQL; the regex crate's own iteration skips it).
    check(
        "regexp_replace(s, 'b*', 'X', 'g')",
        &s_rows(&[Some("abc")]),
        &[Some("XaXXcX")],
    );
    check(
        "regexp_count(s, 'b*')",
        &s_rows(&[Some("abc")]),
        &[Some("4")],
    );
    // \0 is not a group: the backslash and the digit are copied.
    check(
        "regexp_replace(s, 'b', '\\0')",
        &s_rows(&[Some("abc")]),
        &[Some("a\\0c")],
    );
    check(
        "regexp_replace(s, 'B', 'x', 'i')",
        &s_rows(&[Some("ABCb")]),
        &[Some("AxCb")],
    );
    check(
        "regexp_replace(s, '(a)|(b)', '<\\2\\9\\q>', 'g')",
        &s_rows(&[Some("ab")]),
        &[Some("<\\q><b\\q>")],
    );
    check_error(
        "regexp_replace(s, t, 'x', 'gz')",
        &[r("a", "a", 0)],
        "invalid regular expression option: \"z\"",
    );
    check_error(
        "regexp_replace(s, t, 'x')",
        &[r("a", "a{2", 0)],
        "invalid regular expression: unclosed counted repetition",
    );
}

#[test]
fn regexp_extract_substr_and_count() {
    let rows = [
        r("key=val", "(\\w+)=(\\w+)", 1),
        r("key=val", "(\\w+)=(\\w+)", 2),
        r("key=val", "(\\w+)=(\\w+)", 0),
        r("héllo", "x(y)", 1),
        r("b", "(a)|(b)", 1),
        (Some("a"), Some("a"), None),
        (None, Some("a"), Some(0)),
    ];
    check(
        "regexp_extract(s, t, n)",
        &rows,
        &[
            Some("key"),
            Some("val"),
            Some("key=val"),
            Some(""),
            Some(""),
            None,
            None,
        ],
    );
    check(
        "regexp_extract(s, t)",
        &rows,
        &[
            Some("key=val"),
            Some("key=val"),
            Some("key=val"),
            Some(""),
            Some("b"),
            Some("a"),
            None,
        ],
    );
    check_error(
        "regexp_extract(s, t, n)",
        &[r("ab", "(a)(b)", 3)],
        "regexp_extract group 3 does not exist (the pattern has 2)",
    );
    check_error(
        "regexp_extract(s, t, n)",
        &[r("ab", "(a)(b)", -1)],
        "regexp_extract group -1 does not exist (the pattern has 2)",
    );
    check(
        "regexp_substr(s, t)",
        &[
            r("héllo", "l+", 0),
            r("héllo", "x", 0),
            r("日本語", "本.", 0),
        ],
        &[Some("ll"), None, Some("本語")],
    );
    let counts = [
        r("héllo", "l", 1),
        r("héllo", "l", 4),
        r("héllo", "l", 9),
        r("ab", "^a|^b", 2),
        r("", "x", 1),
        r("abc", "x*", 1),
    ];
    check(
        "regexp_count(s, t)",
        &counts,
        &[
            Some("2"),
            Some("2"),
            Some("2"),
            Some("1"),
            Some("0"),
            Some("4"),
        ],
    );
    check(
        "regexp_count(s, t, n)",
        &counts,
        &[
            Some("2"),
            Some("1"),
            Some("0"),
            Some("0"),
            Some("0"),
            Some("4"),
        ],
    );
    check_error(
        "regexp_count(s, t, n)",
        &[r("a", "a", 0)],
        "invalid value for parameter \"start\": 0",
    );
}

#[test]
fn patterns_from_a_column_are_each_compiled_and_cached() {
    // More distinct patterns than the cache holds, each used twice.
    let patterns: Vec<String> = (0..200).map(|i| format!("^{}$", i % 100)).collect();
    let values: Vec<String> = (0..200).map(|i| (i % 100).to_string()).collect();
    let rows: Vec<Row> = values
        .iter()
        .zip(&patterns)
        .map(|(v, p)| (Some(v.as_str()), Some(p.as_str()), Some(0)))
        .collect();
    let expected = vec![Some("true"); 200];
    check("regexp_like(s, t)", &rows, &expected);
    check("regexp_like(s, t)", &rows, &expected);
}

#[test]
fn levenshtein_counts_character_edits() {
    let rows = [
        r("kitten", "sitting", 0),
        r("straße", "strasse", 0),
        r("", "abc", 0),
        r("日本語", "日本", 0),
        r("", "", 0),
        (None, Some("a"), Some(0)),
    ];
    let expected = [Some("3"), Some("2"), Some("3"), Some("1"), Some("0"), None];
    check("levenshtein(s, t)", &rows, &expected);
    check("editdist3(s, t)", &rows, &expected);
}

#[test]
fn every_string_function_of_the_issue_is_registered() {
    let names = broadhead::functions::names();
    for name in [
        "upper",
        "lower",
        "initcap",
        "length",
        "char_length",
        "character_length",
        "octet_length",
        "substr",
        "substring",
        "left",
        "right",
        "trim",
        "btrim",
        "ltrim",
        "rtrim",
        "lpad",
        "rpad",
        "concat",
        "concat_ws",
        "concat_op",
        "replace",
        "translate",
        "reverse",
        "repeat",
        "strpos",
        "position",
        "instr",
        "starts_with",
        "ends_with",
        "contains",
        "split_part",
        "ascii",
        "chr",
        "regexp_like",
        "regexp_matches",
        "similar_to",
        "regexp_replace",
        "regexp_extract",
        "regexp_substr",
        "like",
        "ilike",
        "levenshtein",
    ] {
        assert!(names.contains(&name), "{name} is missing");
    }
    let string_names: usize = broadhead::functions::functions()
        .iter()
        .filter(|f| f.domain == "string")
        .map(|f| f.names().count())
        .sum();
    assert!(string_names >= 45, "{string_names} string function names");
}

/// Computed strings over several blocks and calls: values collected per block in
/// one buffer, outputs that take the arena's memory (two outputs sharing a chunk),
/// an output whose strings are interleaved with another function's (copied), and
/// rows that are NULL or fail between rows that are not.
#[test]
fn computed_strings_over_many_blocks_and_calls() {
    let words = [
        "",
        "ab",
        "héllo",
        "STRAßE",
        "ΣΊΣΥΦΟΣ",
        "x",
        "日本語",
        "mixed Case 1",
    ];
    let rows_of = |len: usize| -> Vec<(Option<String>, Option<String>, Option<i64>)> {
        (0..len)
            .map(|i| {
                let s = (i % 7 != 3).then(|| format!("{}{i}", words[i % words.len()]));
                let t = (i % 11 != 5).then(|| words[(i * 5 + 1) % words.len()].to_string());
                (s, t, Some(i as i64 - 40))
            })
            .collect()
    };
    let exprs = [
        "upper(s)",
        "lower(s)",
        "s || '-' || t",
        "concat_ws('/', s, t, 'z')",
        "replace(s, 'l', 'LL')",
        "reverse(t)",
        "CAST(n AS VARCHAR)",
        "upper(s) || lower(t)",
        "repeat(t, CAST(n AS INTEGER))",
    ];
    let expected =
        |(s, t, n): &(Option<String>, Option<String>, Option<i64>)| -> Vec<Option<String>> {
            let (s, t, n) = (s.as_deref(), t.as_deref(), n.unwrap());
            vec![
                s.map(str::to_uppercase),
                s.map(str::to_lowercase),
                s.zip(t).map(|(s, t)| format!("{s}-{t}")),
                Some(
                    [s, t, Some("z")]
                        .iter()
                        .flatten()
                        .copied()
                        .collect::<Vec<_>>()
                        .join("/"),
                ),
                s.map(|s| s.replace('l', "LL")),
                t.map(|t| t.chars().rev().collect()),
                Some(n.to_string()),
                s.zip(t).map(|(s, t)| s.to_uppercase() + &t.to_lowercase()),
                t.map(|t| t.repeat(usize::try_from(n).unwrap_or(0))),
            ]
        };
    let schema = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Utf8, true),
        Field::new("t", DataType::Utf8, true),
        Field::new("n", DataType::Int64, true),
    ]));
    let projector = Projector::new(&schema, &exprs).unwrap();
    assert!((0..exprs.len()).all(|k| projector.is_jit(k)));
    // Batch sizes that grow, shrink and grow again: the arena's room follows the
    // last call's.
    for len in [1000, 10, 0, 5000, 64, 65] {
        let rows = rows_of(len);
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from_iter(rows.iter().map(|r| r.0.as_deref()))) as ArrayRef,
                Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1.as_deref()))),
                Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.2))),
            ],
        )
        .unwrap();
        let out = projector.evaluate(&batch).unwrap();
        for (k, expr) in exprs.iter().enumerate() {
            let got = shown(out[k].as_ref());
            let want: Vec<Option<String>> = rows.iter().map(|r| expected(r)[k].clone()).collect();
            assert_eq!(got, want, "{expr} over {len} rows");
            let typed = optimize(bind(&parse_expr(expr).unwrap(), &schema).unwrap());
            let reference = interpret(&typed, &batch).unwrap();
            assert_eq!(
                shown(reference.as_ref()),
                want,
                "{expr} interpreted, {len} rows"
            );
        }
    }
}

/// A function that fails on one row among computed strings: the JIT and the
/// interpreter report that row; without it, every row has its value.
#[test]
fn a_failing_row_among_computed_strings() {
    let expr = "upper(s) || substr(t, 1, n)";
    let rows: Vec<Row> = (0..200)
        .map(|i| r(["ab", "cé"][i % 2], "xyz", if i == 150 { -1 } else { 2 }))
        .collect();
    match eval(expr, &rows) {
        Err(e) => assert_eq!(e, "negative substring length not allowed at row 150"),
        Ok(v) => panic!("{expr}: {v:?}, expected an error at row 150"),
    }
    let fine: Vec<Row> = rows.iter().map(|&(s, t, _)| (s, t, Some(2))).collect();
    let want: Vec<Option<String>> = (0..200)
        .map(|i| Some(format!("{}xy", ["AB", "CÉ"][i % 2])))
        .collect();
    assert_eq!(eval(expr, &fine).unwrap(), want);
}

/// `substr(s, 1, k)` and `left(s, k)` compared with a literal, which the JIT
/// decides on the column's bytes (a prefix test, or an equality when the literal
/// is shorter than `k` characters): the same answers as computing the substring.
#[test]
fn leading_characters_compared_with_a_literal() {
    let rows = s_rows(&[
        Some("ab"),
        Some("abc"),
        Some("a"),
        Some(""),
        None,
        Some("héllo"),
        Some("hé"),
        Some("xab"),
    ]);
    let (t, f) = (Some("true"), Some("false"));
    let cases: [(&str, [Option<&str>; 8]); 9] = [
        ("substr(s, 1, 2) = 'ab'", [t, t, f, f, None, f, f, f]),
        ("left(s, 2) = 'hé'", [f, f, f, f, None, t, t, f]),
        ("'hé' = left(s, 2)", [f, f, f, f, None, t, t, f]),
        // Fewer characters than asked for: the whole string is compared.
        ("substr(s, 1, 3) = 'ab'", [t, f, f, f, None, f, f, f]),
        ("left(s, 9) = 'hé'", [f, f, f, f, None, f, t, f]),
        ("substr(s, 1, 2) <> 'ab'", [f, f, t, t, None, t, t, t]),
        ("left(s, 3) <> 'ab'", [f, t, t, t, None, t, t, t]),
        // More characters than asked for: never equal.
        ("substr(s, 1, 1) = 'ab'", [f, f, f, f, None, f, f, f]),
        ("substr(s, 1, 0) = ''", [t, t, t, t, None, t, t, t]),
    ];
    for (expr, expected) in cases {
        check(expr, &rows, &expected);
    }
}

/// `upper(s)` and `lower(s)` compared with a literal, which the JIT decides
/// without building the mapped string for ASCII rows: the same answers as mapping.
#[test]
fn case_mapped_strings_compared_with_a_literal() {
    let rows = s_rows(&[
        Some("ab"),
        Some("aB"),
        Some("abc"),
        Some(""),
        None,
        Some("straße"),
        Some("STRASSE"),
        Some("ΣΑΣ"),
    ]);
    let (t, f) = (Some("true"), Some("false"));
    let cases: [(&str, [Option<&str>; 8]); 7] = [
        ("upper(s) = 'AB'", [t, t, f, f, None, f, f, f]),
        ("'AB' = ucase(s)", [t, t, f, f, None, f, f, f]),
        // A literal that no upper-cased string equals.
        ("upper(s) = 'ab'", [f, f, f, f, None, f, f, f]),
        ("upper(s) = 'STRASSE'", [f, f, f, f, None, t, t, f]),
        ("upper(s) <> ''", [t, t, t, f, None, t, t, t]),
        // A final Σ lower-cases to ς.
        ("lower(s) = 'σας'", [f, f, f, f, None, f, f, t]),
        ("lower(s) <> 'ab'", [f, f, t, t, None, t, t, t]),
    ];
    for (expr, expected) in cases {
        check(expr, &rows, &expected);
    }
}

/// `upper(s) = 'LIT'` on a column: the kernel decides rows of up to eight ASCII
/// bytes, and rows longer than three times the literal (FALSE); the others are
/// mapped in full, including those whose mapping is shorter than they are (the
/// Kelvin sign, three bytes, lower-cases to `k`; `ı` upper-cases to `I`; `ﬃ` to
/// `FFI`), at exactly three times the literal's length too.
#[test]
fn case_mapped_equalities_on_rows_that_shrink() {
    let rows = s_rows(&[
        Some("\u{212A}"),
        Some("\u{212A}\u{212A}\u{212A}"),
        Some("ı"),
        Some("ﬃ"),
        Some("aBcDeFgH"),
        Some("abcdefghi"),
        None,
        Some("kkk"),
    ]);
    let (t, f) = (Some("true"), Some("false"));
    let cases: [(&str, [Option<&str>; 8]); 9] = [
        ("lower(s) = 'k'", [t, f, f, f, f, f, None, f]),
        ("lower(s) = 'kkk'", [f, t, f, f, f, f, None, t]),
        ("lower(s) <> 'kkk'", [t, f, t, t, t, t, None, f]),
        ("upper(s) = 'KKK'", [f, f, f, f, f, f, None, t]),
        ("upper(s) = 'I'", [f, f, t, f, f, f, None, f]),
        ("upper(s) = 'FFI'", [f, f, f, t, f, f, None, f]),
        ("upper(s) = 'ABCDEFGH'", [f, f, f, f, t, f, None, f]),
        ("lower(s) = 'abcdefgh'", [f, f, f, f, t, f, None, f]),
        ("upper(s) = 'ABCDEFGHI'", [f, f, f, f, f, t, None, f]),
    ];
    for (expr, expected) in cases {
        check(expr, &rows, &expected);
    }
}

/// `lower(s) LIKE p` and `upper(s) LIKE p` are one row function in the JIT (an
/// ASCII row of up to 64 bytes mapped on the stack, others in full): every kind of
/// pattern, rows on both sides of 64 bytes, and strings whose mapping is not ASCII's
/// (`ß` to `SS`, the Kelvin sign to `k`, a final `Σ` to `ς`).
#[test]
fn case_mapped_strings_matched_with_like() {
    let at_64 = format!("{}b", "A".repeat(63));
    let at_65 = format!("{}B", "a".repeat(64));
    let rows = s_rows(&[
        Some("ab"),
        Some("xAbY"),
        Some("AB"),
        Some(""),
        None,
        Some("straße"),
        Some("\u{212A}"),
        Some("ΣΑΣ"),
        Some(&at_64),
        Some(&at_65),
        Some("Zz"),
    ]);
    let (t, f) = (Some("true"), Some("false"));
    let cases: [(&str, [Option<&str>; 11]); 9] = [
        ("lower(s) LIKE '%ab%'", [t, t, t, f, None, f, f, f, t, t, f]),
        ("lower(s) LIKE 'ab%'", [t, f, t, f, None, f, f, f, f, f, f]),
        ("lower(s) LIKE '%b'", [t, f, t, f, None, f, f, f, t, t, f]),
        ("lower(s) LIKE 'k'", [f, f, f, f, None, f, t, f, f, f, f]),
        ("lower(s) LIKE '%ß%'", [f, f, f, f, None, t, f, f, f, f, f]),
        ("lower(s) LIKE '%ς'", [f, f, f, f, None, f, f, t, f, f, f]),
        ("upper(s) LIKE '%SS%'", [f, f, f, f, None, t, f, f, f, f, f]),
        ("upper(s) LIKE 'X_B%'", [f, t, f, f, None, f, f, f, f, f, f]),
        ("upper(s) LIKE 'ZZ'", [f, f, f, f, None, f, f, f, f, f, t]),
    ];
    for (expr, expected) in cases {
        check(expr, &rows, &expected);
    }
}

/// `starts_with`, `ends_with` and `contains` of a literal run as `LIKE 'x%'`,
/// `'%x'` and `'%x%'` (the column helpers and their quick first-bytes tests): the
/// same answers as the row functions, for short and long rows, Unicode, the empty
/// literal and NULL; a literal with LIKE's wildcards or escape stays the row
/// function's (`%` is not a wildcard there).
#[test]
fn prefix_suffix_and_substring_tests_of_literals() {
    let rows = s_rows(&[
        Some("caterpillar"),
        Some("ca"),
        Some("c"),
        Some(""),
        None,
        Some("écarté café"),
        Some("50% off_sale\\now"),
        Some("a very long row that ends in ca"),
    ]);
    let t = Some("true");
    let f = Some("false");
    check("starts_with(s, 'ca')", &rows, &[t, t, f, f, None, f, f, f]);
    check("ends_with(s, 'ca')", &rows, &[f, t, f, f, None, f, f, t]);
    check("contains(s, 'ca')", &rows, &[t, t, f, f, None, t, f, t]);
    check("contains(s, 'café')", &rows, &[f, f, f, f, None, t, f, f]);
    check("starts_with(s, '')", &rows, &[t, t, t, t, None, t, t, t]);
    check("ends_with(s, '')", &rows, &[t, t, t, t, None, t, t, t]);
    check("contains(s, '% off')", &rows, &[f, f, f, f, None, f, t, f]);
    check("contains(s, '_')", &rows, &[f, f, f, f, None, f, t, f]);
    check("ends_with(s, '\\now')", &rows, &[f, f, f, f, None, f, t, f]);
    check("starts_with(s, t)", &rows, &[t, t, t, t, None, t, t, t]);
}

/// `ILIKE '%x%'` of an ASCII literal: ASCII rows are searched for the literal in
/// either case (the first byte found many at a time), other rows by the Unicode
/// regex (`ſ` folds to `s`): both back ends alike.
#[test]
fn ilike_contains_of_an_ascii_literal() {
    let rows = s_rows(&[
        Some("special requests"),
        Some("Unusual SPECIAL"),
        Some("spe"),
        Some(""),
        None,
        Some("ſpecial, with a long s"),
        Some("spécial"),
    ]);
    let (t, f) = (Some("true"), Some("false"));
    check("s ILIKE '%special%'", &rows, &[t, t, f, f, None, t, f]);
    check("s NOT ILIKE '%Spe%'", &rows, &[f, f, f, t, None, f, t]);
    check("s ILIKE '%%'", &rows, &[t, t, t, t, None, t, t]);
}
