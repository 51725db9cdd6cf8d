//! `docs/functions.md` is generated from the function registry: this test fails when
//! the file differs from `broadhead::functions::reference_markdown()`, and rewrites it
//! when run with `BROADHEAD_BLESS=1`.

use std::path::Path;

#[test]
fn docs_functions_md_is_the_generated_reference() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/functions.md");
    let generated = broadhead::functions::reference_markdown();
    if std::env::var_os("BROADHEAD_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write docs/functions.md");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != generated {
        let line = current
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || current.lines().count().min(generated.lines().count()),
                |i| i,
            );
        panic!(
            "docs/functions.md is out of date with the function registry (first \
             difference at line {}). Regenerate it with:\n\n    \
             BROADHEAD_BLESS=1 cargo test --test reference\n",
            line + 1
        );
    }
}
