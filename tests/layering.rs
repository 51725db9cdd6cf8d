//! The house's layering, checked: inside each crate of the workspace the modules import
//! each other in one direction only (no circle), as `docs/architecture.md` draws them.
//!
//! A module is a source file. An edge `a -> b` is a path in `a`'s production code
//! (comments and `#[cfg(test)]` modules left out) that names something in `b` through
//! `crate::` or `super::`. A folder's `mod.rs` may use its own children (it assembles
//! them: a registry listing its domains' entries, a facade re-exporting), and the crate
//! root may use anything; every other edge counts. A circle fails the test with the
//! files and the edges that close it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`functions::datetime`) of every `.rs` file under `root`.
fn modules(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).unwrap().with_extension("");
                let mut parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    parts.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    parts.pop();
                }
                out.insert(parts.join("::"), path);
            }
        }
    }
    out
}

/// `source` without comments, string literals' contents, and `#[cfg(test)]` items.
fn production_code(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        if source[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if source[i..].starts_with("/*") {
            i = source[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |e| i + 2 + e + 2);
        } else if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if source[i..].starts_with("#[cfg(test)]") {
            // Skip the attribute and the item it guards: up to the end of its first
            // brace block, or its `;`.
            i += "#[cfg(test)]".len();
            let mut depth = 0usize;
            while i < bytes.len() {
                match bytes[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    b';' if depth == 0 => {
                        i += 1;
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            let c = source[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Every path written after `crate::` or `super::` in `code`, `use` trees expanded:
/// `crate::{a::b, c}` gives `a::b` and `c`, each with its anchor (`crate` or `super`).
fn paths(code: &str) -> Vec<(&'static str, String)> {
    fn ident_len(s: &str) -> usize {
        s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    }
    /// The paths of the tree at the start of `s` (after an anchor's `::`), prefixed.
    fn tree(s: &str, prefix: &str, out: &mut Vec<String>) {
        let s = s.trim_start();
        if let Some(inner) = s.strip_prefix('{') {
            let mut depth = 0;
            let mut start = 0;
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        tree(&inner[start..k], prefix, out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        tree(&inner[start..k], prefix, out);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let n = ident_len(s);
        if n == 0 {
            return;
        }
        let path = if prefix.is_empty() {
            s[..n].to_string()
        } else {
            format!("{prefix}::{}", &s[..n])
        };
        match s[n..].trim_start().strip_prefix("::") {
            Some(rest) => tree(rest, &path, out),
            None => out.push(path),
        }
    }
    let mut out = Vec::new();
    for anchor in ["crate", "super"] {
        let needle = format!("{anchor}::");
        for (at, _) in code.match_indices(&needle) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut found = Vec::new();
            tree(&code[at + needle.len()..], "", &mut found);
            out.extend(found.into_iter().map(|p| (anchor, p)));
        }
    }
    out
}

/// The edges between the crate's modules (see the module documentation).
fn edges(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(root);
    let resolve = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|m| mods.contains_key(m))
    };
    let mut out = BTreeMap::new();
    for (module, file) in &mods {
        let code = production_code(&std::fs::read_to_string(file).expect("a source file"));
        let is_folder = file.file_name().is_some_and(|n| n == "mod.rs");
        let mut deps = BTreeSet::new();
        for (anchor, path) in paths(&code) {
            let full = if anchor == "crate" {
                path
            } else {
                // `super` of `a::b` (a file) is `a`; of a folder's mod.rs `a::b`, also `a`.
                let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
                if parent.is_empty() {
                    path
                } else {
                    format!("{parent}::{path}")
                }
            };
            let Some(target) = resolve(&full) else {
                continue;
            };
            let own_child = is_folder && target.starts_with(&format!("{module}::"));
            if target != *module && !module.is_empty() && !own_child {
                deps.insert(target);
            }
        }
        out.insert(module.clone(), deps);
    }
    out
}

/// The circles (strongly connected components of more than one module).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iteratively small enough to be recursive here.
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(lw));
            } else if s.stack.contains(&w) {
                let iw = s.index[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let at = s.stack.iter().rposition(|x| *x == v).unwrap();
            let component: Vec<String> = s.stack.drain(at..).map(String::from).collect();
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found
}

fn assert_layered(crate_src: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(crate_src);
    let edges = edges(&root);
    let report: Vec<String> = circles(&edges)
        .into_iter()
        .map(|c| {
            let inside: BTreeSet<&String> = c.iter().collect();
            let lines: Vec<String> = c
                .iter()
                .map(|m| {
                    let to: Vec<&str> = edges[m]
                        .iter()
                        .filter(|t| inside.contains(t))
                        .map(String::as_str)
                        .collect();
                    format!("    {m} -> {}", to.join(", "))
                })
                .collect();
            format!("a circle of {} modules:\n{}", c.len(), lines.join("\n"))
        })
        .collect();
    assert!(report.is_empty(), "{crate_src}:\n{}", report.join("\n"));
}

#[test]
fn the_library_has_no_import_circle() {
    assert_layered("src");
}

#[test]
fn the_code_generator_has_no_import_circle() {
    assert_layered("codegen/src");
}

#[test]
fn the_command_line_has_no_import_circle() {
    assert_layered("cli/src");
}

#[test]
fn the_checker_sees_a_circle_and_a_use_tree() {
    let code = production_code(
        "use crate::{a::{b, c::D}, e};\n// crate::f\nlet s = \"crate::g\";\n\
         #[cfg(test)]\nmod tests { use crate::h; }\nsuper::i::j();",
    );
    let found: Vec<String> = paths(&code)
        .into_iter()
        .map(|(a, p)| format!("{a}:{p}"))
        .collect();
    assert_eq!(
        found,
        ["crate:a::b", "crate:a::c::D", "crate:e", "super:i::j"]
    );
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("x", &["y"][..]),
        ("y", &["z"][..]),
        ("z", &["x"][..]),
        ("w", &["x"][..]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
    .collect();
    let mut found = circles(&edges);
    found[0].sort();
    assert_eq!(found, [["x", "y", "z"]]);
}
