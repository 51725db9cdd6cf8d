//! Text encodings, as DuckDB's: base64 (`to_base64`, `from_base64`), hexadecimal
//! (`hex`, `unhex`), URLs (`url_encode`, `url_decode`) and `regexp_escape`.

use std::fmt::Write as _;

use arrow::datatypes::{Int64Type, UInt64Type};
use arrow_schema::DataType;
use base64::Engine as _;

use crate::functions::row::{map1, Blob, Outcome, Utf8};
use crate::functions::Registry;

use super::{I, S};

const BLOB: DataType = DataType::Binary;

/// Base64 of RFC 4648, with padding.
const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Upper-case hexadecimal digits of `bytes`.
fn hex_digits(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02X}");
    }
    out
}

/// The bytes of hexadecimal text: two digits a byte, a lone first digit a byte of
/// its own (`'6'` is `0x06`), either case.
fn unhex(text: &str) -> Outcome<Vec<u8>> {
    let digit = |c: u8| {
        (c as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| format!("invalid input for hex digit: {}", c as char))
    };
    let bytes = text.as_bytes();
    let (head, rest) = bytes.split_at(bytes.len() % 2);
    let mut out = Vec::with_capacity(bytes.len() / 2 + 1);
    if let [h] = head {
        out.push(digit(*h)?);
    }
    for pair in rest.chunks_exact(2) {
        out.push(digit(pair[0])? << 4 | digit(pair[1])?);
    }
    Ok(Some(out))
}

/// `url_encode`: every byte but `A-Z a-z 0-9 - _ . ~` as `%XX`.
fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `url_decode`: each `%XX` as its byte (other text, `+` included, as written); the
/// result must be UTF-8.
fn url_decode(s: &str) -> Outcome<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match escaped {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out)
        .map(Some)
        .map_err(|_| format!("failed to decode \"{s}\" as a URL: the decoded bytes are not UTF-8"))
}

/// `regexp_escape`, as RE2's `QuoteMeta`: every ASCII byte but letters, digits and
/// `_` escaped with a backslash (NUL as `\x00`); other characters as they are.
fn regexp_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii() {
            out.push(c);
        } else if c == '\0' {
            out.push_str("\\x00");
        } else {
            out.push('\\');
            out.push(c);
        }
    }
    out
}

pub(super) fn encode(r: &mut Registry) {
    r.function("to_base64")
        .alias("base64")
        .example("to_base64(CAST('hello' AS BLOB))", "aGVsbG8=")
        .sig(
            &[BLOB],
            S,
            "the BLOB in base64 (RFC 4648, with padding)",
            map1::<Blob, Utf8, _>(|b: &[u8]| Ok(Some(BASE64.encode(b)))),
        );
    r.function("from_base64")
        .example("from_base64('aGk=')", "6869")
        .sig(
            &[S],
            BLOB,
            "the bytes that base64 text (RFC 4648, padded) encodes; other text is an error",
            map1::<Utf8, Blob, _>(|s: &str| {
                BASE64
                    .decode(s)
                    .map(Some)
                    .map_err(|e| format!("could not decode \"{s}\" as base64: {e}"))
            })
            .fallible(),
        );
    r.function("hex")
        .alias("to_hex")
        .example("hex('abc')", "616263")
        .example("hex(255)", "FF")
        .example("hex(-1)", "FFFFFFFFFFFFFFFF")
        .sig(
            &[S],
            S,
            "the UTF-8 bytes of s in upper-case hexadecimal",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(hex_digits(s.as_bytes())))),
        )
        .sig(
            &[BLOB],
            S,
            "the bytes of a BLOB in upper-case hexadecimal",
            map1::<Blob, Utf8, _>(|b: &[u8]| Ok(Some(hex_digits(b)))),
        )
        .sig(
            &[I],
            S,
            "n in upper-case hexadecimal, without leading zeros (a negative n as its 64-bit two's complement)",
            map1::<Int64Type, Utf8, _>(|n: i64| Ok(Some(format!("{n:X}")))),
        )
        .sig(
            &[DataType::UInt64],
            S,
            "n in upper-case hexadecimal, without leading zeros",
            map1::<UInt64Type, Utf8, _>(|n: u64| Ok(Some(format!("{n:X}")))),
        );
    r.function("unhex")
        .alias("from_hex")
        .example("unhex('616263')", "616263")
        .example("CAST(unhex('616263') AS VARCHAR)", "abc")
        .sig(
            &[S],
            BLOB,
            "the bytes that hexadecimal text encodes (two digits a byte, either case; an odd first digit alone); other text is an error",
            map1::<Utf8, Blob, _>(unhex).fallible(),
        );
    r.function("url_encode")
        .example("url_encode('a b&c/é')", "a%20b%26c%2F%C3%A9")
        .sig(
            &[S],
            S,
            "s with every byte but A-Z a-z 0-9 - _ . ~ written %XX",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(url_encode(s)))),
        );
    r.function("url_decode")
        .example("url_decode('a%20b%26c+d')", "a b&c+d")
        .sig(
            &[S],
            S,
            "s with each %XX replaced by its byte (+ stays +); a result that is not UTF-8 is an error",
            map1::<Utf8, Utf8, _>(url_decode).fallible(),
        );
    r.function("regexp_escape")
        .example("regexp_escape('a.b*c')", "a\\.b\\*c")
        .sig(
            &[S],
            S,
            "s with the characters a regular expression treats specially escaped (every ASCII character but letters, digits and _), as RE2's QuoteMeta",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(regexp_escape(s)))),
        );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_as_duckdb_gives_them() {
        assert_eq!(hex_digits(b"abc"), "616263");
        assert_eq!(unhex("616263"), Ok(Some(b"abc".to_vec())));
        assert_eq!(unhex("6"), Ok(Some(vec![6])));
        assert_eq!(unhex("aBc"), Ok(Some(vec![0x0a, 0xbc])));
        assert_eq!(unhex("6G"), Err("invalid input for hex digit: G".into()));
        assert_eq!(url_encode("a b&c/é~"), "a%20b%26c%2F%C3%A9~");
        assert_eq!(
            url_decode("a%20b%26c+d%zz%4"),
            Ok(Some("a b&c+d%zz%4".into()))
        );
        assert_eq!(url_decode("%C3%A9"), Ok(Some("é".into())));
        assert!(url_decode("%FF").is_err());
        assert_eq!(regexp_escape("a-b c#_é\\x\0"), "a\\-b\\ c\\#_é\\\\x\\x00");
    }
}
