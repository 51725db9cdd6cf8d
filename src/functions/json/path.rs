//! JSON paths, in DuckDB's three forms: `$.a.b[0]` (JSONPath: `.key`, `."quoted
//! key"`, `[n]`, `[#-n]` or `[-n]` from the end, `[#]` past the end), `/a/b/0` (a
//! JSON Pointer, RFC 6901), and any other text, one key (`'a'` is `$."a"`; `''` is
//! the whole document). Wildcards (`*`, `[*]`, `..`) select lists of values, which
//! Broadhead has no type for: they are an error.

use std::borrow::Cow;

use super::document::Json;

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Step<'p> {
    Key(Cow<'p, str>),
    Index(u64),
    /// `[#-n]`: the n-th element from the end (`[#-0]` is the first, as DuckDB's).
    FromEnd(u64),
    /// `[#]`: the position after the last element, never a value.
    Past,
    /// A JSON Pointer token: a key in an object, a position (when it is one) in an
    /// array.
    Token(Cow<'p, str>),
}

impl Step<'_> {
    /// The key this step looks up in an object.
    pub(super) fn key(&self) -> Option<&str> {
        match self {
            Step::Key(k) | Step::Token(k) => Some(k),
            _ => None,
        }
    }

    /// The position this step looks up in an array, counted from the start.
    pub(super) fn index(&self) -> Option<u64> {
        match self {
            Step::Index(i) => Some(*i),
            // RFC 6901: digits without a leading zero.
            Step::Token(t) if t == "0" || (!t.starts_with('0') && !t.is_empty()) => t
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| t.parse().ok())
                .flatten(),
            _ => None,
        }
    }
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Path<'p>(pub(super) Vec<Step<'p>>);

impl<'p> Path<'p> {
    /// Reads `text` as a path, or says what is wrong with it.
    pub(crate) fn parse(text: &'p str) -> Result<Path<'p>, String> {
        if let Some(rest) = text.strip_prefix('$') {
            dollar(rest).map_err(|at| {
                if [".*", "[*", ".."].iter().any(|w| at.starts_with(w)) {
                    return format!(
                        "JSON path '{text}' has a wildcard, which selects a list of values: Broadhead has no LIST type yet"
                    );
                }
                let near: String = at.chars().take(16).collect();
                format!("JSON path error near '{near}' in '{text}'")
            })
        } else if let Some(rest) = text.strip_prefix('/') {
            Ok(Path(rest.split('/').map(pointer_step).collect()))
        } else if text.is_empty() {
            Ok(Path(Vec::new()))
        } else {
            Ok(Path(vec![Step::Key(Cow::Borrowed(text))]))
        }
    }

    /// An array position as a path: `n` from the start, or `-n` from the end.
    pub(crate) fn index(n: i64) -> Path<'static> {
        Path(vec![if n < 0 {
            Step::FromEnd(n.unsigned_abs())
        } else {
            Step::Index(n as u64)
        }])
    }
}

/// The value that `steps` lead to from `doc` (a parsed document).
pub(super) fn find_steps<'d, 'a>(steps: &[Step], doc: &'d Json<'a>) -> Option<&'d Json<'a>> {
    let mut at = doc;
    for step in steps {
        at = match (step, at) {
            (Step::FromEnd(0), Json::Array(items)) => items.first()?,
            (Step::FromEnd(n), Json::Array(items)) => {
                let back = usize::try_from(*n).ok()?;
                items.get(items.len().checked_sub(back)?)?
            }
            (step, Json::Object(_)) => at.member(step.key()?)?,
            (step, Json::Array(items)) => items.get(usize::try_from(step.index()?).ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// A JSON Pointer token: `~1` is `/` and `~0` is `~`.
fn pointer_step(token: &str) -> Step<'_> {
    Step::Token(if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    })
}

/// The steps after `$`, or the rest of the text where they stop making sense.
fn dollar(mut rest: &str) -> Result<Path<'_>, &str> {
    let mut steps = Vec::new();
    while !rest.is_empty() {
        let at = rest;
        let (step, after) = match rest.as_bytes()[0] {
            b'.' => key(&rest[1..]).ok_or(at)?,
            b'[' => index(&rest[1..]).ok_or(at)?,
            _ => return Err(at),
        };
        steps.push(step);
        rest = after;
    }
    Ok(Path(steps))
}

/// A key after `.`: `"quoted"` (with `\"` and `\\`) or up to the next `.` or `[`.
fn key(text: &str) -> Option<(Step<'_>, &str)> {
    if text.is_empty() || text.starts_with('*') || text.starts_with('.') {
        return None;
    }
    if let Some(quoted) = text.strip_prefix('"') {
        let mut key = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Some((Step::Key(Cow::Owned(key)), &quoted[i + 1..])),
                '\\' => match chars.next()? {
                    (_, e @ ('"' | '\\')) => key.push(e),
                    (_, e) => {
                        key.push('\\');
                        key.push(e);
                    }
                },
                c => key.push(c),
            }
        }
        return None;
    }
    let end = text.find(['.', '[']).unwrap_or(text.len());
    Some((Step::Key(Cow::Borrowed(&text[..end])), &text[end..]))
}

/// An index after `[`: `n]`, `#-n]`, `-n]` or `#]`.
fn index(text: &str) -> Option<(Step<'_>, &str)> {
    let close = text.find(']')?;
    let (inside, after) = (&text[..close], &text[close + 1..]);
    let digits = |d: &str| -> Option<u64> {
        (!d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .then(|| d.parse().ok())
            .flatten()
    };
    let step = if inside == "#" {
        Step::Past
    } else if let Some(back) = inside
        .strip_prefix("#-")
        .or_else(|| inside.strip_prefix('-'))
    {
        Step::FromEnd(digits(back)?)
    } else {
        Step::Index(digits(inside)?)
    };
    Some((step, after))
}

#[cfg(test)]
mod tests {
    use super::super::document::parse;
    use super::*;

    fn at(doc: &str, path: &str) -> Option<String> {
        let doc = parse(doc).unwrap();
        find_steps(&Path::parse(path).unwrap().0, &doc).map(|v| {
            let mut out = String::new();
            v.write(&mut out);
            out
        })
    }

    #[test]
    fn the_three_forms_find_values() {
        let doc = r#"{"a":{"b":[1,2,{"c":"x"}]},"a b":3,"x.y":4,"p/q":5,"t~":6}"#;
        assert_eq!(at(doc, "$.a.b[2].c").as_deref(), Some(r#""x""#));
        assert_eq!(at(doc, "$.a.b[#-1].c").as_deref(), Some(r#""x""#));
        assert_eq!(at(doc, "$.a.b[-3]").as_deref(), Some("1"));
        assert_eq!(at(doc, "$.a.b[#-0]").as_deref(), Some("1"));
        assert_eq!(at(doc, "$.a.b[#-4]"), None);
        assert_eq!(at(doc, "$.a.b[3]"), None);
        assert_eq!(at(doc, "$.a.b[#]"), None);
        assert_eq!(at(doc, r#"$."a b""#).as_deref(), Some("3"));
        assert_eq!(at(doc, "x.y").as_deref(), Some("4"));
        assert_eq!(at(doc, "/a/b/1").as_deref(), Some("2"));
        assert_eq!(at(doc, "/p~1q").as_deref(), Some("5"));
        assert_eq!(at(doc, "/t~0").as_deref(), Some("6"));
        assert_eq!(at(doc, "/a/b/01"), None);
        assert_eq!(at(r#"{"0":1,"01":2}"#, "/0").as_deref(), Some("1"));
        assert_eq!(at(r#"{"0":1,"01":2}"#, "/01").as_deref(), Some("2"));
        assert_eq!(at("[5,6]", "/1").as_deref(), Some("6"));
        assert_eq!(at("[5,6]", "/-1"), None);
        assert_eq!(at(doc, "$").as_deref().map(str::len), Some(doc.len()));
        assert_eq!(at(doc, "").as_deref().map(str::len), Some(doc.len()));
        assert_eq!(at(doc, "$.a.b.c"), None);
        let doc = parse("[10,20]").unwrap();
        assert_eq!(
            find_steps(&Path::index(-1).0, &doc),
            Some(&Json::Number(20.into()))
        );
        assert_eq!(
            find_steps(&Path::index(0).0, &doc),
            Some(&Json::Number(10.into()))
        );
        assert_eq!(find_steps(&Path::index(2).0, &doc), None);
        assert_eq!(find_steps(&Path::index(i64::MIN).0, &doc), None);
    }

    #[test]
    fn bad_paths_and_wildcards_are_errors() {
        for bad in [
            "$.", "$a", "$[", "$[x]", "$[1", "$.*", "$[*]", "$..a", "$.\"open", "$[#-]",
        ] {
            assert!(Path::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Path::parse("$.a[x]").unwrap_err(),
            "JSON path error near '[x]' in '$.a[x]'"
        );
        assert_eq!(
            Path::parse("$.").unwrap_err(),
            "JSON path error near '.' in '$.'"
        );
    }
}
