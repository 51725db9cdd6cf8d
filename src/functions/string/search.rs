//! Finding strings in strings: `strpos`, prefix and suffix tests, `LIKE` with an
//! escape character and `SIMILAR TO` (both compiled to regular expressions).

use arrow::datatypes::Int32Type;

use crate::functions::row::{map2, map3, Bool, Outcome, Utf8};
use broadhead_codegen::Find;

use crate::functions::{Registry, Specialization};

use super::regexp::{compile, with_regex, Flags};
use super::{B, INT, S};

/// Finding strings in strings.
pub(super) fn search(r: &mut Registry) {
    r.function("strpos")
        .alias("position")
        .alias("instr")
        .example("strpos('héllo', 'l')", "3")
        .example("strpos('héllo', 'x')", "0")
        .sig(
            &[S, S],
            INT,
            "the character position (1-based) of the first substring in s; 0 if absent",
            map2::<Utf8, Utf8, Int32Type, _>(|s: &str, x: &str| Ok(Some(strpos(s, x)))),
        );
    type Test = fn(&str, &str) -> bool;
    let tests = [
        (
            "starts_with",
            Some("prefix"),
            (|s, x| s.starts_with(x)) as Test,
            "whether s starts with prefix",
            ("starts_with('héllo', 'hé')", "true"),
            Find::Prefix,
        ),
        (
            "ends_with",
            Some("suffix"),
            (|s, x| s.ends_with(x)) as Test,
            "whether s ends with suffix",
            ("ends_with('héllo', 'lo')", "true"),
            Find::Suffix,
        ),
        (
            "contains",
            None,
            (|s, x| s.contains(x)) as Test,
            "whether s contains the substring",
            ("contains('héllo', 'él')", "true"),
            Find::Contains,
        ),
    ];
    for (name, alias, test, doc, (sql, result), find) in tests {
        let f = r.function(name);
        if let Some(alias) = alias {
            f.alias(alias);
        }
        f.example(sql, result)
            .sig(
                &[S, S],
                B,
                doc,
                map2::<Utf8, Utf8, Bool, _>(move |s: &str, x: &str| Ok(Some(test(s, x)))),
            )
            .specialize(Specialization::Matches(find));
    }
    for (name, case_insensitive, sql) in [
        ("like", false, "like('10%', '10!%', '!')"),
        ("ilike", true, "ilike('Été_1', 'ÉTÉ!_%', '!')"),
    ] {
        r.function(name).example(sql, "true").sig(
            &[S, S, S],
            B,
            "s LIKE pattern ESCAPE escape: the escape character ('' for none) makes the next one literal",
            map3::<Utf8, Utf8, Utf8, Bool, _>(move |s: &str, p: &str, e: &str| {
                like_escape(s, p, e, case_insensitive)
            })
            .fallible(),
        );
    }
    r.function("similar_to")
        .example("similar_to('abc', '(a|x)%')", "true")
        .example("similar_to('a.c', 'a#.c', '#')", "true")
        .sig(
            &[S, S],
            B,
            "s SIMILAR TO pattern: an SQL regular expression (% any run, _ one character, | * + ? {} () [] as in regular expressions) matching all of s",
            map2::<Utf8, Utf8, Bool, _>(|s: &str, p: &str| similar_to(s, p, "\\")).fallible(),
        )
        .sig(
            &[S, S, S],
            B,
            "s SIMILAR TO pattern ESCAPE escape",
            map3::<Utf8, Utf8, Utf8, Bool, _>(similar_to).fallible(),
        );
}

/// The 1-based character position of the first `needle` in `s`; 0 when absent.
fn strpos(s: &str, needle: &str) -> i32 {
    s.find(needle)
        .map_or(0, |b| s[..b].chars().count() as i32 + 1)
}

/// The escape character of LIKE / SIMILAR TO: none for '', else one character.
fn escape_char(escape: &str) -> Result<Option<char>, String> {
    let mut chars = escape.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Ok(None),
        (Some(c), None) => Ok(Some(c)),
        _ => Err("invalid escape string (it must be empty or one character)".into()),
    }
}

/// The anchored regular expression of a LIKE pattern with an escape character.
fn like_source(pattern: &str, escape: Option<char>) -> Result<String, String> {
    let mut re = String::with_capacity(pattern.len() + 8);
    re.push_str(r"\A");
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if Some(c) == escape {
            match chars.next() {
                Some(next) => re.push_str(&regex::escape(next.encode_utf8(&mut [0; 4]))),
                None => return Err("LIKE pattern must not end with escape character".into()),
            }
        } else if c == '%' {
            re.push_str(".*");
        } else if c == '_' {
            re.push('.');
        } else {
            re.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
        }
    }
    re.push_str(r"\z");
    Ok(re)
}

/// `s LIKE pattern ESCAPE escape` (`ILIKE` with `case_insensitive`).
pub(super) fn like_escape(
    s: &str,
    pattern: &str,
    escape: &str,
    case_insensitive: bool,
) -> Outcome<bool> {
    let kind = if case_insensitive { 'I' } else { 'L' };
    let re = with_regex(kind, escape, pattern, || {
        let source = like_source(pattern, escape_char(escape)?)?;
        let flags = Flags {
            case_insensitive,
            ..Flags::default()
        };
        compile(&source, flags)
    })?;
    Ok(Some(re.is_match(s)))
}

/// PostgreSQL's translation of an SQL regular expression (SIMILAR TO) into a
/// POSIX one, anchored at both ends: `%` is `.*`, `_` is `.`, `.` `^` `$` are
/// literal, the rest (`|` `*` `+` `?` `{…}` `(…)` `[…]`) as in regular
/// expressions; the escape character makes the next character literal, and two
/// escaped double quotes mark the part `substring` would return.
fn similar_source(pattern: &str, escape: Option<char>) -> Result<String, String> {
    let mut re = String::with_capacity(pattern.len() + 10);
    re.push_str(r"\A(?:");
    // Within a bracket expression: the characters seen after `[` (and `^`).
    let mut class: Option<usize> = None;
    let mut quotes = 0;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if Some(c) == escape {
            // A trailing escape character is dropped, as PostgreSQL does.
            let Some(next) = chars.next() else { break };
            if next == '"' && class.is_none() {
                re.push_str(match quotes {
                    0 => "){1,1}?(",
                    1 => "){1,1}(?:",
                    _ => {
                        return Err("SQL regular expression may not contain more than two \
                                    escape-double-quote separators"
                            .into())
                    }
                });
                quotes += 1;
            } else if next.is_ascii_alphanumeric() {
                // A class shorthand or escape of the regular expression (`\d`).
                re.push('\\');
                re.push(next);
            } else {
                re.push_str(&regex::escape(next.encode_utf8(&mut [0; 4])));
            }
            class = class.map(|n| n + 1);
        } else if let Some(seen) = class {
            match c {
                '^' if seen == 0 && re.ends_with('[') => re.push('^'),
                ']' if seen > 0 => {
                    re.push(']');
                    class = None;
                    continue;
                }
                '[' if chars.peek() == Some(&':') => {
                    // A POSIX class, `[:alpha:]`, copied as it is.
                    re.push('[');
                    while let Some(k) = chars.next() {
                        re.push(k);
                        if k == ':' && chars.peek() == Some(&']') {
                            re.push(']');
                            chars.next();
                            break;
                        }
                    }
                }
                // Literal here, special to the regex crate's classes.
                '\\' | '[' | ']' | '&' | '~' => {
                    re.push('\\');
                    re.push(c);
                }
                c => re.push(c),
            }
            if !(c == '^' && seen == 0 && re.ends_with("[^")) {
                class = Some(seen + 1);
            }
        } else {
            match c {
                '[' => {
                    re.push('[');
                    class = Some(0);
                }
                '%' => re.push_str(".*"),
                '_' => re.push('.'),
                '(' => re.push_str("(?:"),
                '\\' | '.' | '^' | '$' => {
                    re.push('\\');
                    re.push(c);
                }
                c => re.push(c),
            }
        }
    }
    re.push_str(r")\z");
    Ok(re)
}

/// `s SIMILAR TO pattern ESCAPE escape`.
fn similar_to(s: &str, pattern: &str, escape: &str) -> Outcome<bool> {
    let re = with_regex('s', escape, pattern, || {
        compile(
            &similar_source(pattern, escape_char(escape)?)?,
            Flags::default(),
        )
    })?;
    Ok(Some(re.is_match(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_regular_expressions_translate_as_postgresql() {
        let t = |p: &str| similar_source(p, Some('\\')).unwrap();
        assert_eq!(t("a%b_c"), r"\A(?:a.*b.c)\z");
        assert_eq!(t("(a|b).^$"), r"\A(?:(?:a|b)\.\^\$)\z");
        assert_eq!(t(r"a\%"), r"\A(?:a%)\z");
        assert_eq!(t("[]a[]"), r"\A(?:[\]a\[])\z");
        assert_eq!(t("[^]x]"), r"\A(?:[^\]x])\z");
        assert_eq!(t("[[:alpha:]]+"), r"\A(?:[[:alpha:]]+)\z");
        assert_eq!(similar_source("a#%", Some('#')).unwrap(), r"\A(?:a%)\z");
        assert_eq!(similar_source(r"a\", None).unwrap(), r"\A(?:a\\)\z");
        assert_eq!(similar_source(r"a\", Some('\\')).unwrap(), r"\A(?:a)\z");
    }
}
