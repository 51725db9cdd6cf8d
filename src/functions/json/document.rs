//! A JSON document as the JSON functions read it: parsed by `serde_json` (strict
//! RFC 8259: no `NaN`, no trailing commas, no lone surrogates, at most 128 levels
//! deep) into a tree that keeps an object's members in order, duplicates included
//! (a lookup finds the first, as DuckDB's), and written back compactly.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

/// One JSON value; strings and keys borrow from the text where they hold no escape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    /// Members in the order written, duplicate keys kept.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

/// Parses `text` as one JSON document (surrounding whitespace allowed), or says
/// where it is malformed.
pub(crate) fn parse(text: &str) -> Result<Json<'_>, String> {
    serde_json::from_str(text).map_err(describe)
}

/// serde_json's error as the message of a row that is not JSON.
pub(crate) fn describe(e: serde_json::Error) -> String {
    let what = e.to_string();
    // serde_json ends its messages with " at line L column C".
    let what = what.split(" at line ").next().unwrap_or(&what);
    format!(
        "malformed JSON at line {} column {}: {what}",
        e.line(),
        e.column()
    )
}

impl<'a> Json<'a> {
    /// The member `key` of an object (the first, if the key is repeated).
    pub(crate) fn member(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// DuckDB's name of the value's type (`json_type`).
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "NULL",
            Json::Bool(_) => "BOOLEAN",
            Json::Number(n) if n.is_u64() => "UBIGINT",
            Json::Number(n) if n.is_i64() => "BIGINT",
            Json::Number(_) => "DOUBLE",
            Json::String(_) => "VARCHAR",
            Json::Array(_) => "ARRAY",
            Json::Object(_) => "OBJECT",
        }
    }

    /// Whether `needle` occurs in this value at any depth (`json_contains`, as
    /// DuckDB's): a value equal to it, an array holding (a value like) each of its
    /// elements, or an object with each of its members (values compared alike).
    pub(crate) fn contains(&self, needle: &Json) -> bool {
        self.resembles(needle)
            || match self {
                Json::Array(items) => items.iter().any(|x| x.contains(needle)),
                Json::Object(members) => members.iter().any(|(_, x)| x.contains(needle)),
                _ => false,
            }
    }

    /// Equal to `needle`, or an array or object that holds all of it.
    fn resembles(&self, needle: &Json) -> bool {
        match (self, needle) {
            (Json::Array(hay), Json::Array(want)) => {
                want.iter().all(|w| hay.iter().any(|h| h.resembles(w)))
            }
            (Json::Object(_), Json::Object(want)) => want
                .iter()
                .all(|(k, w)| self.member(k).is_some_and(|h| h.resembles(w))),
            (a, b) => a == b,
        }
    }

    /// Appends the value as compact JSON (no whitespace).
    pub(crate) fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => match n.as_f64() {
                // Integers exactly; doubles as the shortest text that reads back,
                // as DuckDB writes them (`1e100`, `2.5`, `100.0`).
                Some(x) if !n.is_u64() && !n.is_i64() => {
                    out.push_str(ryu::Buffer::new().format_finite(x))
                }
                _ => {
                    use fmt::Write;
                    let _ = write!(out, "{n}");
                }
            },
            Json::String(s) => write_string(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    x.write(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (k, x)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(k, out);
                    out.push(':');
                    x.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// Appends `s` as a JSON string: `"` and `\` escaped, control characters as
/// `\b \f \n \r \t` or `\u00XX`.
fn write_string(s: &str, out: &mut String) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escaped: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escaped.is_empty() {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.push_str("\\u00");
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        } else {
            out.push_str(escaped);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

/// A JSON key, borrowed where it holds no escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(JsonVisitor).and_then(|v| match v {
            Json::String(s) => Ok(Key(s)),
            _ => Err(de::Error::custom("a key is not a string")),
        })
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Json<'de>, E> {
        // serde_json reads a number too large for a double as infinity: an error.
        Number::from_f64(x)
            .map(Json::Number)
            .ok_or_else(|| E::custom("number out of range"))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s.to_string())))
    }

    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(x) = seq.next_element()? {
            items.push(x);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut members = Vec::new();
        while let Some((Key(k), v)) = map.next_entry::<Key, Json>()? {
            members.push((k, v));
        }
        Ok(Json::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compact(text: &str) -> String {
        let mut out = String::new();
        parse(text).unwrap().write(&mut out);
        out
    }

    #[test]
    fn documents_are_written_back_compactly_in_their_order() {
        assert_eq!(
            compact(r#" { "b" : [ 1 , 2.50, -0.0, 1e100 ], "a" : {"x": null, "x": true} } "#),
            r#"{"b":[1,2.5,-0.0,1e100],"a":{"x":null,"x":true}}"#
        );
        assert_eq!(
            compact(r#""q\"\\\n\u0001é\ud83d\ude00""#),
            "\"q\\\"\\\\\\n\\u0001é😀\""
        );
        assert_eq!(compact("18446744073709551615"), "18446744073709551615");
    }

    #[test]
    fn malformed_documents_say_where() {
        assert_eq!(
            parse(r#"{"a":1"#).unwrap_err(),
            "malformed JSON at line 1 column 6: EOF while parsing an object"
        );
        for bad in [
            "",
            " ",
            "[1,]",
            "NaN",
            "{\"a\":1}x",
            "\"\\ud800\"",
            "1e400",
            "{1:2}",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = "[".repeat(100_000);
        assert!(parse(&deep).unwrap_err().contains("recursion limit"));
    }

    #[test]
    fn lookups_types_and_containment() {
        let doc = parse(r#"{"a":1,"a":2,"b":[1,[2,3],{"c":"x"}]}"#).unwrap();
        assert_eq!(doc.member("a"), Some(&Json::Number(1.into())));
        assert_eq!(doc.type_name(), "OBJECT");
        let types: Vec<&str> = ["-1", "1", "1.5", "true", "null", "\"s\"", "[]"]
            .iter()
            .map(|t| parse(t).unwrap().type_name())
            .collect();
        assert_eq!(
            types,
            ["BIGINT", "UBIGINT", "DOUBLE", "BOOLEAN", "NULL", "VARCHAR", "ARRAY"]
        );
        for (needle, found) in [
            ("3", true),
            ("[3]", true),
            (r#"{"c":"x"}"#, true),
            ("{}", true),
            (r#"{"a":2}"#, false),
            ("1.0", false),
            ("4", false),
        ] {
            assert_eq!(doc.contains(&parse(needle).unwrap()), found, "{needle}");
        }
    }
}
