//! JSON functions on VARCHAR, as DuckDB's: `json_extract` (`->`),
//! `json_extract_string` (`->>`), `json_value`, `json_valid`, `json_type`,
//! `json_array_length`, `json_exists` and `json_contains`, with DuckDB's paths
//! ([`path`]). A document is parsed by `serde_json` ([`document`]); text that is not
//! JSON fails the row (`json_valid` says false), as DuckDB's does, but strictly:
//! DuckDB also accepts `NaN`, `Infinity` and trailing commas (PostgreSQL does not).
//! Values come back as compact JSON text (VARCHAR: Broadhead has no JSON type).

mod document;
mod path;
mod seek;

use arrow::datatypes::{Int64Type, UInt64Type};
use arrow_schema::DataType;

use self::document::{parse, Json};
use self::path::Path;
use super::row::{map1, map2, map2_with, Bool, Outcome, Text, Utf8, Written};
use super::Registry;

const S: DataType = DataType::Utf8;
const I: DataType = DataType::Int64;
const B: DataType = DataType::Boolean;
const U: DataType = DataType::UInt64;

/// `f` of the value at `path` in the document `text` (`None`: there is none).
fn at<R>(text: &str, path: &Path, f: impl FnOnce(Option<&Json>) -> R) -> Result<R, String> {
    Ok(f(seek::find(text, path)?.as_ref()))
}

/// `f` of the value at the path written `path` in `text`.
fn at_text<R>(text: &str, path: &str, f: impl FnOnce(Option<&Json>) -> R) -> Result<R, String> {
    let path = Path::parse(path)?;
    at(text, &path, f)
}

/// `json_extract`: the value as JSON text.
fn extract(value: Option<&Json>, out: &mut Text) -> Outcome<()> {
    Ok(value.map(|v| v.write(out)))
}

/// `json_extract_string`: a string's text, another value as JSON text, NULL for
/// JSON's `null`.
fn extract_string(value: Option<&Json>, out: &mut Text) -> Outcome<()> {
    Ok(match value {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => {
            out.push_str(s);
            Some(())
        }
        Some(v) => {
            v.write(out);
            Some(())
        }
    })
}

/// `json_value`: a scalar as JSON text; NULL for arrays, objects and `null`.
fn scalar(value: Option<&Json>, out: &mut Text) -> Outcome<()> {
    Ok(match value {
        None | Some(Json::Null | Json::Array(_) | Json::Object(_)) => None,
        Some(v) => {
            v.write(out);
            Some(())
        }
    })
}

/// `json_array_length`: an array's length, 0 for other values.
fn array_length(value: Option<&Json>) -> Option<u64> {
    value.map(|v| match v {
        Json::Array(items) => items.len() as u64,
        _ => 0,
    })
}

pub(super) fn register(r: &mut Registry) {
    type Extract = fn(Option<&Json>, &mut Text) -> Outcome<()>;
    let extracting: [(&'static str, Extract, &'static str, &'static str); 3] = [
        (
            "json_extract",
            extract,
            "the value at the path in the JSON text, as compact JSON text ('\"x\"' for a string); NULL if there is none (j -> path)",
            "the array element at position n (0-based; negative from the end), as JSON text",
        ),
        (
            "json_extract_string",
            extract_string,
            "the value at the path: a string's text, other values as JSON text; NULL if there is none or it is null (j ->> path)",
            "the array element at position n (0-based; negative from the end), as json_extract_string gives it",
        ),
        (
            "json_value",
            scalar,
            "the scalar at the path as JSON text; NULL for an array, an object or null",
            "the scalar array element at position n (0-based; negative from the end), as JSON text",
        ),
    ];
    for (name, f, doc, doc_index) in extracting {
        r.function(name)
            .sig(
                &[S, S],
                S,
                doc,
                map2_with::<Utf8, Utf8, Written, _>(move |j: &str, p: &str, out: &mut Text| {
                    at_text(j, p, |v| f(v, out))?
                })
                .fallible(),
            )
            .sig(
                &[S, I],
                S,
                doc_index,
                map2_with::<Utf8, Int64Type, Written, _>(move |j: &str, n: i64, out: &mut Text| {
                    at(j, &Path::index(n), |v| f(v, out))?
                })
                .fallible(),
            );
    }
    r.function("json_extract")
        .example(
            r#"json_extract('{"a": {"b": [1, "x"]}}', '$.a.b[1]')"#,
            r#""x""#,
        )
        .example(
            r#"json_extract('{"a": {"b": [1, 2]}}', '$.a')"#,
            r#"{"b":[1,2]}"#,
        )
        .example("json_extract('[1, 2, 3]', -1)", "3")
        .example(r#"'{"a": [1, "x"]}' -> '$.a'"#, r#"[1,"x"]"#)
        .example(r#"json_extract('{"a": 1}', '$.b') IS NULL"#, "true");
    r.function("json_extract_string")
        .example(
            r#"json_extract_string('{"a": {"b": [1, "x"]}}', '$.a.b[1]')"#,
            "x",
        )
        .example(r#"json_extract_string('{"a": null}', 'a') IS NULL"#, "true")
        .example(r#"json_extract_string('{"a": [1, 2]}', '/a')"#, "[1,2]")
        .example(r#"'{"a": [1, "x"]}' ->> '$.a[1]'"#, "x");
    r.function("json_value")
        .example(r#"json_value('{"a": "x"}', '$.a')"#, r#""x""#)
        .example(r#"json_value('{"a": [1]}', '$.a') IS NULL"#, "true");
    r.function("json_valid")
        .example(r#"json_valid('{"a": 1}')"#, "true")
        .example("json_valid('[1, 2,]')", "false")
        .sig(
            &[S],
            B,
            "whether the text is one JSON document (RFC 8259)",
            map1::<Utf8, Bool, _>(|j: &str| Ok(Some(seek::is_valid(j)))),
        );
    r.function("json_type")
        .example("json_type('[1, 2]')", "ARRAY")
        .example(r#"json_type('{"a": -1}', '$.a')"#, "BIGINT")
        .sig(
            &[S],
            S,
            "the type of the JSON value: OBJECT, ARRAY, VARCHAR, UBIGINT, BIGINT, DOUBLE, BOOLEAN or NULL",
            map1::<Utf8, Utf8, _>(|j: &str| Ok(Some(parse(j)?.type_name().to_string()))).fallible(),
        )
        .sig(
            &[S, S],
            S,
            "the type of the value at the path; NULL if there is none",
            map2::<Utf8, Utf8, Utf8, _>(|j: &str, p: &str| {
                at_text(j, p, |v| v.map(|v| v.type_name().to_string()))
            })
            .fallible(),
        );
    r.function("json_array_length")
        .example("json_array_length('[1, [2, 3]]')", "2")
        .example(r#"json_array_length('{"a": [1]}', '$.a')"#, "1")
        .example(r#"json_array_length('{"a": 1}')"#, "0")
        .sig(
            &[S],
            U,
            "the number of elements of a JSON array (0 for other values)",
            map1::<Utf8, UInt64Type, _>(|j: &str| Ok(array_length(Some(&parse(j)?)))).fallible(),
        )
        .sig(
            &[S, S],
            U,
            "the length of the array at the path (0 for other values); NULL if there is none",
            map2::<Utf8, Utf8, UInt64Type, _>(|j: &str, p: &str| at_text(j, p, array_length))
                .fallible(),
        );
    r.function("json_exists")
        .example(r#"json_exists('{"a": null}', '$.a')"#, "true")
        .example(r#"json_exists('{"a": 1}', '$.b')"#, "false")
        .sig(
            &[S, S],
            B,
            "whether the path finds a value (null included) in the JSON text",
            map2::<Utf8, Utf8, Bool, _>(|j: &str, p: &str| at_text(j, p, |v| Some(v.is_some())))
                .fallible(),
        );
    r.function("json_contains")
        .example(r#"json_contains('{"a": [1, {"b": 2}]}', '{"b": 2}')"#, "true")
        .example("json_contains('[1, [2, 3]]', '[3]')", "true")
        .example("json_contains('[1, 2]', '3')", "false")
        .sig(
            &[S, S],
            B,
            "whether the second JSON value occurs at any depth in the first (an array or object needle matches one that holds all of its elements or members)",
            map2::<Utf8, Utf8, Bool, _>(|haystack: &str, needle: &str| {
                let needle = parse(needle)?;
                Ok(Some(parse(haystack)?.contains(&needle)))
            })
            .fallible(),
        );
}
