//! `docs/functions.md` is generated from the function registry: this test fails when
//! the file differs from `broadhead::functions::reference_markdown()`, or when the
//! README's feature list gives another number of function names; run with
//! `BROADHEAD_BLESS=1` it rewrites both.

use std::path::Path;

const REGENERATE: &str = "Regenerate with:\n\n    BROADHEAD_BLESS=1 cargo test --test reference\n";

fn bless() -> bool {
    std::env::var_os("BROADHEAD_BLESS").is_some()
}

#[test]
fn docs_functions_md_is_the_generated_reference() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/functions.md");
    let generated = broadhead::functions::reference_markdown();
    if bless() {
        std::fs::write(&path, &generated).expect("write docs/functions.md");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != generated {
        let line = current
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| current.lines().count().min(generated.lines().count()));
        panic!(
            "docs/functions.md is out of date with the function registry (first \
             difference at line {}). {REGENERATE}",
            line + 1
        );
    }
}

/// The README's `**N function names**`: the number and the byte range of its digits.
fn readme_count(readme: &str) -> Option<(usize, std::ops::Range<usize>)> {
    let end = readme.find(" function names**")?;
    let start = readme[..end].rfind("**")? + 2;
    Some((readme[start..end].parse().ok()?, start..end))
}

#[test]
fn the_readme_gives_the_number_of_function_names() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let (count, digits) = readme_count(&readme).expect("README: **N function names**");
    let names = broadhead::functions::names().len();
    if bless() {
        let mut updated = readme.clone();
        updated.replace_range(digits, &names.to_string());
        std::fs::write(&path, updated).expect("write README.md");
        return;
    }
    assert_eq!(
        count, names,
        "README.md says {count} function names, the registry has {names}. {REGENERATE}"
    );
}
