//! Expression and statement arguments (`--where`, `--select`, `sql`'s statement,
//! `explain`'s expression)
//! given as `@FILE` (the text of a file) or `-` (standard input), for text longer
//! than the system's limit on arguments (128 KiB a value on Linux) or kept in a file.
//!
//! No escape for a literal leading `@` is needed: no expression or statement begins
//! with `@` (the grammar has no `@` operator), and `-` alone is not an expression.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};

use broadhead::escape::escape_path;

/// Whether an argument has read standard input already.
static STDIN_READ: AtomicBool = AtomicBool::new(false);

/// The text an argument stands for: `@FILE`'s contents, standard input's for `-`,
/// else the argument itself (a clap value parser).
pub fn text_arg(value: &str) -> Result<String, String> {
    if value == "-" {
        if STDIN_READ.swap(true, Ordering::Relaxed) {
            return Err("standard input (-) can be read by one argument only".into());
        }
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("reading standard input: {e}"))?;
        return Ok(text);
    }
    let Some(name) = value.strip_prefix('@') else {
        return Ok(value.to_string());
    };
    if name.is_empty() {
        return Err("give a file name after @ (@FILE reads the text of FILE)".into());
    }
    let path = std::path::Path::new(name);
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", escape_path(path)))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            escape_path(path),
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_plain_text() {
        let dir = tempfile::TempDir::new().unwrap();
        let f = dir.path().join("p.sql");
        std::fs::write(&f, "a < 2\n").unwrap();
        assert_eq!(text_arg(&format!("@{}", f.display())).unwrap(), "a < 2\n");
        assert_eq!(text_arg("a < 2").unwrap(), "a < 2");
        assert_eq!(text_arg("-a < 2").unwrap(), "-a < 2");
        assert!(text_arg("@").unwrap_err().contains("file name after @"));
        let missing = text_arg("@/nonexistent/\x1b.sql").unwrap_err();
        assert!(missing.starts_with("/nonexistent/\\x1b.sql: "), "{missing}");
        std::fs::write(&f, b"a\xff").unwrap();
        let bad = text_arg(&format!("@{}", f.display())).unwrap_err();
        assert!(
            bad.contains("not UTF-8 text (invalid byte at offset 1)"),
            "{bad}"
        );
    }
}
