//! Reading a document for one path: the value the path finds is built as a tree
//! ([`Json`]); everything else is checked as it is read (the whole text must be
//! JSON, as [`parse`](super::document::parse) requires) but not kept, so a lookup
//! allocates only for what it returns.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::document::{describe, Json};
use super::path::{find_steps, Path, Step};

/// The value at `path` in the document `text` (`None`: there is none), or where
/// the text is malformed.
pub(crate) fn find<'a>(text: &'a str, path: &Path) -> Result<Option<Json<'a>>, String> {
    let mut d = serde_json::Deserializer::from_str(text);
    let found = Seek(&path.0).deserialize(&mut d).map_err(describe)?;
    d.end().map_err(describe)?;
    Ok(found)
}

/// Whether `text` is one JSON document.
pub(crate) fn is_valid(text: &str) -> bool {
    let mut d = serde_json::Deserializer::from_str(text);
    Skip::deserialize(&mut d).is_ok() && d.end().is_ok()
}

/// Finds the value at the steps in the value read next.
struct Seek<'s, 'p>(&'s [Step<'p>]);

impl<'de> DeserializeSeed<'de> for Seek<'_, '_> {
    type Value = Option<Json<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        match self.0 {
            [] => Json::deserialize(d).map(Some),
            // Counting from the end needs the whole array: read it as a tree.
            [Step::FromEnd(_), ..] => {
                let tree = Json::deserialize(d)?;
                Ok(find_steps(self.0, &tree).cloned())
            }
            _ => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Seek<'_, '_> {
    type Value = Option<Json<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Self::Value, E> {
        Skip.visit_f64(x).map(|_| None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let (want, rest) = match self.0 {
            [step, rest @ ..] => (step.index(), rest),
            [] => (None, &[][..]),
        };
        let mut found = None;
        let mut at = 0u64;
        loop {
            if want == Some(at) {
                match seq.next_element_seed(Seek(rest))? {
                    Some(v) => found = v,
                    None => break,
                }
            } else if seq.next_element::<Skip>()?.is_none() {
                break;
            }
            at += 1;
        }
        Ok(found)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (want, rest) = match self.0 {
            [step, rest @ ..] => (step.key(), rest),
            [] => (None, &[][..]),
        };
        let mut found = None;
        let mut seen = false;
        while let Some(key) = map.next_key::<KeyMatches>()? {
            // The first of repeated keys is the one found.
            if !seen && want.is_some_and(|w| key.0 == w) {
                seen = true;
                found = map.next_value_seed(Seek(rest))?;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(found)
    }
}

/// A key, borrowed where it holds no escape (copied otherwise).
struct KeyMatches<'de>(std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for KeyMatches<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyMatches<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<KeyMatches<'de>, E> {
                Ok(KeyMatches(std::borrow::Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<KeyMatches<'de>, E> {
                Ok(KeyMatches(std::borrow::Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A value read, checked and dropped (strings are decoded, so a lone surrogate is
/// an error as in a full parse).
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Skip)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Skip, E> {
        if x.is_finite() {
            Ok(Skip)
        } else {
            Err(E::custom("number out of range"))
        }
    }

    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Skip)
    }
}

#[cfg(test)]
mod tests {
    use super::super::document::parse;
    use super::*;

    #[test]
    fn seeking_finds_what_the_tree_finds() {
        let docs = [
            r#"{"a":{"b":[1,2,{"c":"x\u00e9"}]},"a":9,"k\"q":[true,null]}"#,
            r#"[[1,2],[3,[4,5]],{"a":[6]}]"#,
            r#""just a string""#,
        ];
        let paths = [
            "$",
            "$.a",
            "$.a.b",
            "$.a.b[2].c",
            "$.a.b[#-1]",
            "$.a.b[3]",
            r#"$."k\"q"[1]"#,
            "$[1][1][0]",
            "$[#-1].a[0]",
            "$[0][#-3]",
            "$[2].a",
            "$.a.b[#]",
            "/a/b/0",
            "a",
        ];
        for doc in docs {
            let tree = parse(doc).unwrap();
            for p in paths {
                let path = Path::parse(p).unwrap();
                assert_eq!(
                    find(doc, &path).unwrap().as_ref(),
                    find_steps(&path.0, &tree),
                    "{doc} {p}"
                );
            }
        }
    }

    #[test]
    fn seeking_checks_the_whole_text() {
        let path = Path::parse("$.a").unwrap();
        for bad in [
            r#"{"a":1,"b":"\ud800"}"#,
            r#"{"a":1,"b":[1,]}"#,
            r#"{"a":1} x"#,
            r#"{"a":1,"b":1e400}"#,
            "{\"a\":1",
        ] {
            assert!(find(bad, &path).is_err(), "{bad}");
            assert!(!is_valid(bad), "{bad}");
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(is_valid(r#" {"a":[1,{"b":"\ud83d\ude00"}]} "#));
        assert!(!is_valid(&"[".repeat(200)));
    }
}
