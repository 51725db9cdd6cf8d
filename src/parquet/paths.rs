//! The Parquet files that command-line paths name: files, directories searched
//! recursively, and globs.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use super::dataset::{check_regular, describe_io};
use super::ScanError;
use crate::escape::escape_path;

/// Whether a path argument is a glob rather than a name.
fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// The Parquet files that command-line paths name:
///
/// - a file as it is;
/// - a directory searched recursively for `*.parquet`, following symbolic links but
///   visiting each file once (a link loop is not followed around);
/// - a glob (`data/part-*.parquet`, `data/*/x.parquet`, `data/**/*.parquet`; `*`
///   and `?` do not match `/`, `**` matches any number of directories, `[ab]` and
///   `{a,b}` as in the shell) expanded to the regular files it matches.
///
/// Files found in a directory or by a glob are sorted by path. An argument that is
/// none of these is an error that says why: it does not exist, it is a symbolic link
/// loop, it is not a regular file (a FIFO, a device).
pub fn expand_paths(args: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, ScanError> {
    let mut out = Vec::new();
    for arg in args {
        let path = arg.as_ref();
        let text = path.to_string_lossy();
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                let found = walk(path, None)?;
                if found.is_empty() {
                    return Err(ScanError::file(
                        path,
                        "directory contains no .parquet files",
                    ));
                }
                out.extend(found);
            }
            Ok(m) => {
                check_regular(path, &m)?;
                out.push(path.to_path_buf());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && is_glob(&text) => {
                let found = expand_glob(path)?;
                if found.is_empty() {
                    return Err(ScanError::Input(format!(
                        "{}: no file matches",
                        escape_path(path)
                    )));
                }
                out.extend(found);
            }
            Err(e) => return Err(ScanError::file(path, describe_io(&e))),
        }
    }
    Ok(out)
}

/// The identity of a directory: a directory reached by several paths (links) has
/// one (its device and inode; elsewhere, its canonical path).
#[derive(Clone, PartialEq, Eq, Hash)]
struct DirKey(#[cfg(unix)] (u64, u64), #[cfg(not(unix))] PathBuf);

#[cfg(unix)]
fn dir_key(_: &Path, meta: &std::fs::Metadata) -> DirKey {
    use std::os::unix::fs::MetadataExt;
    DirKey((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn dir_key(path: &Path, _: &std::fs::Metadata) -> DirKey {
    DirKey(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
}

/// A directory being read: its entries still to visit, in reverse order of name,
/// each with whether the directory says it is a regular file (not a link: no need
/// to look it up).
struct Frame {
    entries: Vec<(PathBuf, bool)>,
    key: DirKey,
    depth: usize,
}

/// What a walk found, and how many directories it read.
struct Walked {
    files: Vec<PathBuf>,
    /// Read by the tests only.
    #[cfg_attr(not(test), allow(dead_code))]
    directories_read: usize,
}

/// The regular files under `root` (following links, each file once), sorted by path:
/// those whose path matches `glob` (as deep as its depth), or with `None`, those named
/// `*.parquet`.
///
/// A link back to an ancestor is not followed (its files are found through the
/// ancestor). A directory reached by several paths through links is read once,
/// through the first path in name order, so that links forming a DAG (every
/// directory of a level linking to all of the next) take time linear in the number
/// of directories, not in the number of paths: except for a glob of bounded depth
/// (no `**`), whose matches depend on the path a file is reached by, and whose depth
/// bounds the walk as the pattern asks.
fn walk(
    root: &Path,
    glob: Option<(&globset::GlobMatcher, usize)>,
) -> Result<Vec<PathBuf>, ScanError> {
    walk_counted(root, glob).map(|w| w.files)
}

fn walk_counted(
    root: &Path,
    glob: Option<(&globset::GlobMatcher, usize)>,
) -> Result<Walked, ScanError> {
    let max_depth = glob.map_or(usize::MAX, |(_, d)| d);
    let once = max_depth == usize::MAX;
    let fail = |at: &Path, e: &std::io::Error| ScanError::file(at, describe_io(e));
    let read = |dir: &Path| -> Result<Vec<(PathBuf, bool)>, ScanError> {
        let mut entries = std::fs::read_dir(dir)
            .and_then(|rd| {
                rd.map(|e| e.map(|e| (e.file_name(), e.file_type().is_ok_and(|t| t.is_file()))))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| fail(dir, &e))?;
        entries.sort_unstable_by(|a, b| b.0.cmp(&a.0));
        Ok(entries
            .into_iter()
            .map(|(n, file)| (dir.join(n), file))
            .collect())
    };
    let root_meta = std::fs::metadata(root).map_err(|e| fail(root, &e))?;
    let mut read_dirs: HashSet<DirKey> = HashSet::new();
    let root_key = dir_key(root, &root_meta);
    read_dirs.insert(root_key.clone());
    let mut stack = vec![Frame {
        entries: read(root)?,
        key: root_key,
        depth: 0,
    }];
    let mut directories_read = 1;
    let mut seen = HashSet::new();
    let mut found = Vec::new();
    while let Some(frame) = stack.last_mut() {
        let Some((path, plain_file)) = frame.entries.pop() else {
            stack.pop();
            continue;
        };
        let depth = frame.depth + 1;
        if !plain_file {
            // A link, a directory, or something else: what it is, through links.
            let meta = std::fs::metadata(&path).map_err(|e| fail(&path, &e))?;
            if meta.is_dir() {
                if depth >= max_depth {
                    continue;
                }
                let key = dir_key(&path, &meta);
                // A link back to an ancestor: its files are found through the ancestor.
                if stack.iter().any(|f| f.key == key) {
                    continue;
                }
                if !read_dirs.insert(key.clone()) && once {
                    continue;
                }
                let entries = read(&path)?;
                directories_read += 1;
                stack.push(Frame {
                    entries,
                    key,
                    depth,
                });
                continue;
            }
            if !meta.is_file() {
                continue;
            }
        }
        let wanted = match glob {
            Some((m, _)) => m.is_match(&path),
            None => path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("parquet")),
        };
        if !wanted {
            continue;
        }
        // One file reached by several paths (links) is read once.
        let identity = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if seen.insert(identity) {
            found.push(path);
        }
    }
    found.sort();
    Ok(Walked {
        files: found,
        directories_read,
    })
}

/// The regular files a glob matches.
fn expand_glob(pattern: &Path) -> Result<Vec<PathBuf>, ScanError> {
    let text = pattern.to_string_lossy();
    let bad =
        |e: globset::Error| ScanError::Input(format!("{}: {}", escape_path(pattern), e.kind()));
    let matcher = globset::GlobBuilder::new(&text)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(bad)?
        .compile_matcher();
    // Walk from the longest leading part without wildcards, as deep as the pattern
    // goes (without limit if it has `**`).
    let components: Vec<Component> = pattern.components().collect();
    let fixed = components
        .iter()
        .take_while(|c| !is_glob(&c.as_os_str().to_string_lossy()))
        .count();
    let base: PathBuf = components[..fixed].iter().collect();
    let depth = if text.contains("**") {
        usize::MAX
    } else {
        components.len() - fixed
    };
    if base.as_os_str().is_empty() {
        // A relative pattern: walk ".", and give paths as the pattern spells them.
        let matcher = globset::GlobBuilder::new(&format!("./{text}"))
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(bad)?
            .compile_matcher();
        let found = walk(Path::new("."), Some((&matcher, depth)))?;
        return Ok(found
            .into_iter()
            .map(|p| p.strip_prefix(".").map(Path::to_path_buf).unwrap_or(p))
            .collect());
    }
    match std::fs::metadata(&base) {
        Ok(m) if m.is_dir() => walk(&base, Some((&matcher, depth))),
        Ok(_) => Ok(vec![]),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(ScanError::file(&base, describe_io(&e))),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Directories `0` … `levels`, each but the last holding `fanout` links to the
    /// next and a file `f<level>.parquet`: 4^10 paths lead to the last level.
    fn dag(root: &Path, levels: usize, fanout: usize) {
        for level in 0..=levels {
            let dir = root.join(level.to_string());
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join(format!("f{level}.parquet")), b"x").unwrap();
            if level < levels {
                for link in 0..fanout {
                    std::os::unix::fs::symlink(
                        root.join((level + 1).to_string()),
                        dir.join(format!("l{link}")),
                    )
                    .unwrap();
                }
            }
        }
    }

    #[test]
    fn a_dag_of_links_reads_each_directory_once() {
        let tmp = tempfile::TempDir::new().unwrap();
        dag(tmp.path(), 10, 4);
        let start = tmp.path().join("0");
        let walked = walk_counted(&start, None).unwrap();
        // Through every path, 1 + 4 + … + 4^10 = 1,398,101 directories.
        assert_eq!(walked.directories_read, 11);
        assert_eq!(walked.files.len(), 11);
        // Each through the first path in name order.
        assert_eq!(walked.files[0], start.join("f0.parquet"));
        assert_eq!(walked.files[2], start.join("l0/l0/f2.parquet"));
        // `**` globs too.
        let pattern = format!("{}/**/*.parquet", start.display());
        assert_eq!(expand_glob(Path::new(&pattern)).unwrap().len(), 11);
    }

    #[test]
    fn links_to_ancestors_are_not_followed_around() {
        let tmp = tempfile::TempDir::new().unwrap();
        let a = tmp.path().join("a");
        std::fs::create_dir_all(a.join("b")).unwrap();
        std::fs::write(a.join("b/x.parquet"), b"x").unwrap();
        std::os::unix::fs::symlink(&a, a.join("b/up")).unwrap();
        std::os::unix::fs::symlink(a.join("b"), a.join("b/self")).unwrap();
        let walked = walk_counted(&a, None).unwrap();
        assert_eq!(walked.files, vec![a.join("b/x.parquet")]);
        assert_eq!(walked.directories_read, 2);
    }
}
