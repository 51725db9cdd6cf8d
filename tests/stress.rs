//! Stress: eight threads share one `Filter` and one `Projector` (clones of one
//! compiled kernel) and evaluate many batches; every result must equal the
//! single-threaded one, errors included.

mod common;

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use broadhead::{Filter, Projector, SelectionMode};

const THREADS: usize = 8;
const ROUNDS: usize = 16;

/// Batches of many lengths (including 0, 1, block edges and > 65,536 rows), slice
/// offsets and NULL densities.
fn batches() -> Vec<RecordBatch> {
    let lengths = [0usize, 1, 15, 16, 17, 63, 64, 65, 1000, 4097, 70_000];
    let mut out = Vec::new();
    for (n, &len) in lengths.iter().cycle().take(44).enumerate() {
        let offset = [0usize, 3, 64, 67][n % 4];
        let null_p = [0.0, 0.1, 0.5][n % 3];
        out.push(common::sliced_batch(n as u64 + 1, len, offset, null_p));
    }
    out
}

type FilterResult = (Result<Vec<u32>, String>, Result<Vec<bool>, String>);

fn run_filter(f: &Filter, b: &RecordBatch) -> FilterResult {
    let rows = f
        .evaluate_with_mode(b, SelectionMode::UInt32)
        .map(|s| s.iter().map(|i| i as u32).collect())
        .map_err(|e| e.to_string());
    let mask = f
        .evaluate_mask(b)
        .map(|m| m.iter().map(|v| v == Some(true)).collect())
        .map_err(|e| e.to_string());
    (rows, mask)
}

fn run_projector(p: &Projector, b: &RecordBatch) -> Result<Vec<ArrayRef>, String> {
    p.evaluate(b).map_err(|e| e.to_string())
}

fn same_projection(x: &Result<Vec<ArrayRef>, String>, y: &Result<Vec<ArrayRef>, String>) -> bool {
    match (x, y) {
        (Ok(a), Ok(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| common::same_array(p, q))
        }
        (Err(a), Err(b)) => a == b,
        _ => false,
    }
}

#[test]
fn eight_threads_sharing_one_filter_and_one_projector_get_identical_results() {
    let schema = common::schema();
    // The divisions fail on some batches (k is sometimes 0): errors must be the same too.
    let filter = Filter::new(
        &schema,
        "(a > 0 AND (i % 3 = 1 OR s LIKE 'a%')) OR (d >= DATE '1995-06-01' AND 100 / k > 3)",
    )
    .expect("compiles");
    let projector = Projector::new(
        &schema,
        &[
            "a * b + 1",
            "CASE WHEN i > 0 THEN j * 2 ELSE k END",
            "COALESCE(u32, 0) + u8",
            "j / k",
            "flag AND s <> 'ab'",
        ],
    )
    .expect("compiles");
    assert!(filter.is_jit());
    let batches = batches();
    let expected_filter: Vec<FilterResult> =
        batches.iter().map(|b| run_filter(&filter, b)).collect();
    let expected_projection: Vec<_> = batches
        .iter()
        .map(|b| run_projector(&projector, b))
        .collect();
    // The test is only worth something if both outcomes occur.
    assert!(expected_filter.iter().any(|r| r.0.is_err()));
    assert!(expected_filter
        .iter()
        .any(|r| r.0.as_ref().is_ok_and(|v| !v.is_empty())));
    assert!(expected_projection.iter().any(|r| r.is_err()));
    assert!(expected_projection.iter().any(|r| r.is_ok()));

    let batches = Arc::new(batches);
    let mismatches = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (filter, projector, batches) =
                    (filter.clone(), projector.clone(), batches.clone());
                let (ef, ep) = (&expected_filter, &expected_projection);
                scope.spawn(move || {
                    let mut bad = Vec::new();
                    for round in 0..ROUNDS {
                        // Each thread walks the batches from another start.
                        for k in 0..batches.len() {
                            let i = (k + t * 5 + round) % batches.len();
                            if run_filter(&filter, &batches[i]) != ef[i] {
                                bad.push(format!("thread {t}: filter on batch {i}"));
                            }
                            if !same_projection(&run_projector(&projector, &batches[i]), &ep[i]) {
                                bad.push(format!("thread {t}: projection on batch {i}"));
                            }
                        }
                    }
                    bad
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("no thread panics"))
            .collect::<Vec<_>>()
    });
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Filters and projectors can be shared between threads.
#[test]
fn filters_and_projectors_are_send_and_sync() {
    fn shareable<T: Send + Sync + Clone>() {}
    shareable::<Filter>();
    shareable::<Projector>();
}
