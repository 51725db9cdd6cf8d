//! The persistent kernel cache: a second cache (as a second process would) loads the
//! kernel another compiled without compiling; damaged entries are detected, ignored
//! and replaced; a directory that cannot be written leaves the cache in memory;
//! concurrent writers leave one whole entry; the directory stays within its bound.
//! Every test uses a directory of its own under a temporary directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::prepare::{Prepared, Purpose};
use broadhead::sql::parse_expr;
use broadhead::{CompilePolicy, DiskCache, Filter, KernelCache, Pipeline, Upgrade};
use tempfile::TempDir;

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
    // A whole entry (its checksum holds) of bytes that are not object code.
    let not_object = {
        let junk = b"not an object file".repeat(10);
        let mut b = good[..44].to_vec(); // magic, format version, key
        b.extend_from_slice(&(junk.len() as u64).to_le_bytes());
        b.extend_from_slice(&crc32fast::hash(&junk).to_le_bytes());
        b.extend_from_slice(&junk);
        b
    };
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
