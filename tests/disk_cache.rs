//! The persistent kernel cache: a second cache (as a second process would) loads the
//! kernel another compiled without compiling; damaged entries are detected, ignored
//! and replaced; a directory that cannot be written leaves the cache in memory;
//! concurrent writers leave one whole entry; the directory stays within its bound.
//! Attacks: an entry planted with everything but the user's secret recomputed is not
//! run, nor is anything in a directory others may write; a FIFO in place of an entry
//! does not hang the compile. Every test uses a directory of its own under a
//! temporary directory. (The unit tests in `src/disk_cache` check each rule alone.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::disk_cache::Refusal;
use broadhead::prepare::{Prepared, Purpose};
use broadhead::sql::parse_expr;
use broadhead::{CompilePolicy, DiskCache, Filter, KernelCache, Pipeline, Upgrade};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

/// The entry header before the MAC: magic, format version, key, object length.
const FIELDS: usize = 8 + 4 + 32 + 8;

/// HMAC-SHA256 (RFC 2104) of `message` under a key of at most 64 bytes.
fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let pad = |byte: u8| {
        let mut block = [byte; 64];
        block.iter_mut().zip(key).for_each(|(b, k)| *b ^= k);
        block
    };
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(message);
    let outer = Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner.finalize());
    outer.finalize().into()
}

/// `good`'s header (magic, version, key) around `object`, with a MAC under `secret`.
fn entry_with(good: &[u8], object: &[u8], secret: &[u8]) -> Vec<u8> {
    let mut b = good[..FIELDS - 8].to_vec();
    b.extend_from_slice(&(object.len() as u64).to_le_bytes());
    let mac = hmac(secret, &[&b[..], object].concat());
    b.extend_from_slice(&mac);
    b.extend_from_slice(object);
    b
}

fn schema() -> Schema {
    Schema::new(vec![
        Field::new("a", DataType::Float64, false),
        Field::new("b", DataType::Float64, false),
    ])
}

fn batch() -> RecordBatch {
    let a: ArrayRef = Arc::new(Float64Array::from_iter_values((0..100).map(f64::from)));
    let b: ArrayRef = Arc::new(Float64Array::from_iter_values(
        (0..100).map(|i| f64::from(i % 7) + 1.0),
    ));
    RecordBatch::try_new(Arc::new(schema()), vec![a, b]).unwrap()
}

/// A cache backed by `dir` alone (no kernel shared with other tests' caches).
fn cache(dir: &Path) -> Arc<KernelCache> {
    Arc::new(KernelCache::new(16, 1 << 30).with_disk_cache(Some(DiskCache::new(dir))))
}

/// A predicate of a shape no other test compiles (`tag` picks it), and how many of
/// the batch's rows it selects.
fn predicate(tag: usize) -> (String, usize) {
    // Literals are kernel parameters: the shape (the number of `+ b` terms) is
    // what makes the kernel differ from other tests' (which run in parallel and
    // share the process's JIT, where a kernel still in use is reused).
    let sql = format!(
        "a * b{} - {tag}.5 > b * b * {}",
        " + b".repeat(tag),
        tag + 1
    );
    let b = batch();
    let expected = Filter::with_cache(
        &schema(),
        &parse_expr(&sql).unwrap(),
        &Arc::new(KernelCache::new(4, 1 << 30)),
    )
    .unwrap()
    .evaluate(&b)
    .unwrap()
    .len();
    (sql, expected)
}

fn entries(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == ext));
    v.sort();
    v
}

fn selected(cache: &Arc<KernelCache>, sql: &str) -> (usize, Filter) {
    let f = Filter::with_cache(&schema(), &parse_expr(sql).unwrap(), cache).unwrap();
    assert!(f.is_jit());
    (f.evaluate(&batch()).unwrap().len(), f)
}

#[test]
fn a_second_cache_loads_the_kernel_from_disk_without_compiling() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let (sql, expected) = predicate(1);
    let first = cache(&dir);
    let (n, f) = selected(&first, &sql);
    assert_eq!(n, expected);
    assert!(!f.compile_timings().from_disk_cache);
    let stats = first.stats();
    assert_eq!(
        (stats.misses, stats.disk_hits, stats.disk_writes),
        (1, 0, 1)
    );
    assert_eq!(entries(&dir, "bhk").len(), 1);
    drop((f, first));

    let second = cache(&dir);
    let (n, f) = selected(&second, &sql);
    assert_eq!(n, expected);
    let stats = second.stats();
    assert_eq!(
        (stats.misses, stats.disk_hits, stats.disk_writes),
        (1, 1, 0)
    );
    let timings = f.compile_timings();
    assert!(timings.from_disk_cache);
    assert!(timings.optimize.is_zero() && timings.codegen.is_zero());
    // Other literals, the same kernel.
    let other = Filter::with_cache(
        &schema(),
        &parse_expr("a * b + b - 9.5 > b * b * 2").unwrap(),
        &second,
    )
    .unwrap();
    assert_eq!(second.stats().hits, 1);
    assert!(other.evaluate(&batch()).is_ok());
}

#[test]
fn corrupt_and_truncated_entries_are_detected_ignored_and_replaced() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let (sql, expected) = predicate(2);
    drop(selected(&cache(&dir), &sql));
    let entry = entries(&dir, "bhk").pop().expect("an entry");
    let good = std::fs::read(&entry).unwrap();
    // A whole entry (its MAC, under the user's own secret, holds) of bytes that are
    // not object code.
    let secret = std::fs::read(dir.join("secret")).unwrap();
    let not_object = entry_with(&good, &b"not an object file".repeat(10), &secret);
    let damaged: [(&str, Vec<u8>); 5] = [
        ("a flipped byte in the object", {
            let mut b = good.clone();
            let last = b.len() - 1;
            b[last] ^= 0x40;
            b
        }),
        ("truncated object", good[..good.len() - 100].to_vec()),
        ("truncated header", good[..20].to_vec()),
        ("empty", Vec::new()),
        ("not object code", not_object),
    ];
    for (what, bytes) in damaged {
        std::fs::write(&entry, &bytes).unwrap();
        let c = cache(&dir);
        let (n, _f) = selected(&c, &sql);
        assert_eq!(n, expected, "{what}");
        let stats = c.stats();
        assert_eq!(
            (stats.disk_hits, stats.disk_writes),
            (0, 1),
            "{what}: ignored and replaced"
        );
        assert_eq!(std::fs::read(&entry).unwrap(), good, "{what}: replaced");
    }
    let c = cache(&dir);
    drop(selected(&c, &sql));
    assert_eq!(c.stats().disk_hits, 1, "the replacement loads");
}

#[test]
fn a_directory_that_cannot_be_made_or_written_leaves_the_cache_in_memory() {
    let tmp = TempDir::new().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let (sql, expected) = predicate(3);
    // Below a regular file no directory can be made (even by root).
    let c = cache(&file.join("kernels"));
    let (n, _f) = selected(&c, &sql);
    assert_eq!(n, expected);
    let stats = c.stats();
    assert_eq!(
        (stats.misses, stats.disk_hits, stats.disk_writes),
        (1, 0, 0)
    );
    // A missing directory is made by the first write.
    let nested = tmp.path().join("x").join("y").join("kernels");
    let c = cache(&nested);
    drop(selected(&c, &sql));
    assert_eq!(c.stats().disk_writes, 1);
    assert_eq!(entries(&nested, "bhk").len(), 1);
}

#[test]
fn concurrent_writers_of_one_kernel_leave_one_whole_entry() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let (sql, expected) = predicate(4);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let (n, _f) = selected(&cache(&dir), &sql);
                assert_eq!(n, expected);
            });
        }
    });
    assert_eq!(entries(&dir, "bhk").len(), 1);
    assert!(entries(&dir, "tmp").is_empty(), "no temporary file left");
    let c = cache(&dir);
    drop(selected(&c, &sql));
    assert_eq!(c.stats().disk_hits, 1);
}

#[test]
fn the_directory_stays_within_its_size_limit_dropping_the_least_recently_used() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let (first_sql, _) = predicate(10);
    drop(selected(&cache(&dir), &first_sql));
    let entry_size = std::fs::metadata(entries(&dir, "bhk")[0].clone())
        .unwrap()
        .len();
    let limit = entry_size * 7 / 2;
    let bounded = |dir: &Path| {
        Arc::new(
            KernelCache::new(16, 1 << 30)
                .with_disk_cache(Some(DiskCache::new(dir).with_max_bytes(limit))),
        )
    };
    for tag in 11..20 {
        let (sql, expected) = predicate(tag);
        let (n, _f) = selected(&bounded(&dir), &sql);
        assert_eq!(n, expected);
        let total: u64 = entries(&dir, "bhk")
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        // Entries differ in size a little: allow one more than the limit holds.
        assert!(
            total <= limit + entry_size,
            "{total} bytes on disk, limit {limit}"
        );
    }
    // The newest kernel survived eviction.
    let (sql, _) = predicate(19);
    let c = bounded(&dir);
    drop(selected(&c, &sql));
    assert_eq!(c.stats().disk_hits, 1);
}

#[test]
fn a_tiered_expression_says_its_kernel_came_from_disk() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let (sql, expected) = predicate(5);
    let prepared = Prepared::parse(&sql, &schema(), Purpose::Predicate).unwrap();
    let tiered = |cache: &Arc<KernelCache>| {
        let f = Filter::with_policy(&prepared, cache, CompilePolicy::Tiered).unwrap();
        assert!(f.wait_for_kernel());
        assert_eq!(f.evaluate(&batch()).unwrap().len(), expected);
        f.tier_stats()
    };
    let compiled = tiered(&cache(&dir));
    assert!(!compiled.kernel_from_disk_cache);
    assert!(compiled.to_string().contains("kernel ready"), "{compiled}");
    let second = cache(&dir);
    let loaded = tiered(&second);
    assert!(loaded.kernel_from_disk_cache);
    assert_eq!(loaded.compiled_batches, 1);
    assert!(
        loaded
            .to_string()
            .contains("kernel loaded from the disk cache"),
        "{loaded}"
    );
    let stats = second.stats();
    assert_eq!((stats.disk_hits, stats.disk_writes), (1, 0));
}

#[test]
fn an_upgraded_kernel_is_what_the_next_process_loads() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let (sql, expected) = predicate(6);
    // Quick first, upgraded to O3 once it has run (the default upgrades after
    // 4 Mi rows; one is enough here).
    let first = Arc::new(
        KernelCache::new(16, 1 << 30)
            .with_upgrade(Some(Upgrade {
                pipeline: Pipeline::O3,
                after_rows: 1,
            }))
            .with_disk_cache(Some(DiskCache::new(&dir))),
    );
    let (n, filter) = selected(&first, &sql);
    assert_eq!(n, expected);
    filter.wait_for_kernel();
    assert_eq!(filter.tier_stats().pipeline, Some(Pipeline::O3));
    assert_eq!(
        first.stats().disk_writes,
        2,
        "the Quick kernel and the O3 one"
    );
    assert_eq!(entries(&dir, "bhk").len(), 2);

    // A new cache (as a new process would) with the default plan loads the O3
    // kernel at once: nothing compiles, nothing is upgraded.
    let second = cache(&dir);
    let (n, filter) = selected(&second, &sql);
    assert_eq!(n, expected);
    let stats = filter.tier_stats();
    assert_eq!(stats.pipeline, Some(Pipeline::O3));
    assert!(stats.kernel_from_disk_cache);
    assert_eq!(stats.optimized_after, None);
    assert_eq!(second.stats().disk_hits, 1);
    assert_eq!(second.stats().disk_writes, 0);
}

/// Whether this process runs as root, which the parts of a test that need a second
/// uid (files chowned to 65534) require; says so when it is not.
fn root(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata(dir).unwrap().uid() == 0;
    if !root {
        eprintln!("skipped: the part of this test that needs a second uid (not root)");
    }
    root
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_planted_entry_is_not_run_and_the_kernel_is_compiled_again() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let (sql, expected) = predicate(7);
    drop(selected(&cache(&dir), &sql));
    let entry = entries(&dir, "bhk").pop().expect("an entry");
    let good = std::fs::read(&entry).unwrap();
    // The attacker's code: another kernel's real object code (it selects other
    // rows), under this kernel's key and length, with the MAC recomputed under a
    // secret of the attacker's own and, second, as a bare SHA-256: everything but
    // the user's secret.
    let (other_sql, other_expected) = predicate(8);
    assert_ne!(other_expected, expected);
    let other_dir = tmp.path().join("attacker");
    drop(selected(&cache(&other_dir), &other_sql));
    let theirs = std::fs::read(entries(&other_dir, "bhk").pop().unwrap()).unwrap();
    let their_object = &theirs[FIELDS + 32..];
    let with_sha = {
        let mut b = entry_with(&good, their_object, &[0; 32]);
        let digest: [u8; 32] = Sha256::new()
            .chain_update(&b[..FIELDS])
            .chain_update(their_object)
            .finalize()
            .into();
        b[FIELDS..FIELDS + 32].copy_from_slice(&digest);
        b
    };
    for planted in [
        entry_with(&good, their_object, b"attacker's own secret"),
        with_sha,
    ] {
        std::fs::write(&entry, &planted).unwrap();
        let c = cache(&dir);
        let (n, f) = selected(&c, &sql);
        assert_eq!(n, expected, "the right answer, not the planted kernel's");
        assert!(!f.compile_timings().from_disk_cache);
        let stats = c.stats();
        assert_eq!((stats.disk_hits, stats.disk_writes), (0, 1));
        assert_eq!(std::fs::read(&entry).unwrap(), good, "deleted and replaced");
    }
}

#[test]
fn nothing_is_loaded_from_or_written_to_a_directory_others_may_write() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let (sql, expected) = predicate(9);
    drop(selected(&cache(&dir), &sql));
    let entry = entries(&dir, "bhk").pop().expect("an entry");
    let listing = || {
        let mut v: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let before = listing();
    let refused = |what: &str| {
        let c = cache(&dir);
        let (n, f) = selected(&c, &sql);
        assert_eq!(n, expected, "{what}");
        assert!(!f.compile_timings().from_disk_cache, "{what}");
        let stats = c.stats();
        assert_eq!((stats.disk_hits, stats.disk_writes), (0, 0), "{what}");
        let disk = c.disk_cache().unwrap();
        assert!(
            matches!(disk.refusal(), Some(Refusal::Unsafe(_))),
            "{what}: {:?}",
            disk.refusal()
        );
        assert_eq!(listing(), before, "{what}: nothing written or deleted");
    };
    // The attack: a world-writable directory (as /tmp is).
    chmod(&dir, 0o1777);
    refused("mode 1777");
    chmod(&dir, 0o777);
    refused("mode 777");
    chmod(&dir, 0o700);
    if root(tmp.path()) {
        // An entry that would load (its MAC holds), written by another uid.
        std::os::unix::fs::chown(&entry, Some(65534), None).unwrap();
        let c = cache(&dir);
        let (n, _f) = selected(&c, &sql);
        assert_eq!(n, expected);
        assert_eq!(c.stats().disk_hits, 0, "another uid's entry is not loaded");
        std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
        refused("a directory of another uid");
    }
}

#[test]
fn a_fifo_in_place_of_an_entry_does_not_block() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let (sql, expected) = predicate(20);
    drop(selected(&cache(&dir), &sql));
    let entry = entries(&dir, "bhk").pop().expect("an entry");
    std::fs::remove_file(&entry).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&entry).status();
    assert!(made.unwrap().success(), "mkfifo");
    let (tx, rx) = std::sync::mpsc::channel();
    let c = cache(&dir);
    let compiling = c.clone();
    std::thread::spawn(move || {
        let _ = tx.send(selected(&compiling, &sql).0);
    });
    // 30 s guards against a hang; the assertion is on the answer.
    let n = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the compile did not hang on the FIFO");
    assert_eq!(n, expected);
    assert_eq!(c.stats().disk_hits, 0);
    assert!(
        std::fs::symlink_metadata(&entry).unwrap().is_file(),
        "replaced"
    );
}
