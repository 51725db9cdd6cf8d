//! The fuzz driver, shared by `tests/fuzz.rs` (CI's short fixed-seed run and the
//! replay of saved cases) and `examples/fuzz.rs` (the long runner).
//!
//! Three targets, each execution a pure function of (target, seed, index), so that
//! any execution can be replayed:
//!
//! - `sql`: SQL text (valid, mutated, random tokens, deep and wide shapes) → parse →
//!   `Display` round trip → bind → optimize → interpret, optimized and not, on a small
//!   random batch;
//! - `jit`: a valid expression compiled as a `Filter` or `Projector` (the `Fast`
//!   pipeline) and compared with the interpreter on batches of 0, 1, 15, 16, 17, 64,
//!   65 and 1000 rows with NULLs and slice offsets;
//! - `parquet`: a small valid Parquet file mutated (bit flips, truncations, forged
//!   footer lengths, varints and list counts) → `Dataset::open` → `Scan::run`.
//!
//! A failure is a panic, a mismatch (JIT against interpreter, optimized against not,
//! `Display` round trip), an error message that says "internal", or an execution
//! slower than [`SLOW`]. Failures are minimized ([`minimize`]) and saved as cases
//! ([`save_case`]) that `tests/fuzz.rs` replays.

#![allow(dead_code)]

#[path = "../common/mod.rs"]
pub mod common;
pub mod minimize;
pub mod pq;
pub mod sqlgen;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::SchemaRef;
use broadhead::bind::{bind, bind_predicate};
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::scan::{Dataset, Scan, ScanItem, ScanOptions};
use broadhead::sql::parse_expr;
use broadhead::{Error, Filter, KernelCache, Pipeline, Projector, SelectionMode, SelectionVector};
use common::Rng;
use serde_json::{json, Value};

/// An execution slower than this is a failure (recorded by the long run; CI does
/// not assert it, as timing depends on the machine).
pub const SLOW: Duration = Duration::from_secs(2);

/// What the driver exercises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// SQL text through parse, bind, optimize and the interpreter.
    Sql,
    /// Valid expressions compiled, JIT against interpreter.
    Jit,
    /// Mutated Parquet files through the scan.
    Parquet,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 3] = [Target::Sql, Target::Jit, Target::Parquet];

    /// Its name on the command line and in saved cases.
    pub fn name(self) -> &'static str {
        match self {
            Target::Sql => "sql",
            Target::Jit => "jit",
            Target::Parquet => "parquet",
        }
    }

    /// The target named `s`.
    pub fn parse(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// One execution's input.
#[derive(Debug, Clone, PartialEq)]
pub enum Case {
    /// Target `sql` (`jit == false`) or `jit`: SQL text and the seed of its batches;
    /// bound as a predicate or as a value.
    Sql {
        /// `true` for the `jit` target.
        jit: bool,
        /// The expression.
        text: String,
        /// Seeds the batches.
        batch_seed: u64,
        /// Bound with `bind_predicate` (a `Filter`) or `bind` (a `Projector`).
        predicate: bool,
    },
    /// Target `parquet`: a base file and its mutations, or saved bytes.
    Parquet {
        /// The file: a base and mutations, or bytes as saved.
        file: ParquetFile,
        /// The scan's predicate.
        predicate: Option<String>,
        /// Evaluate the predicate with the interpreter.
        interpret: bool,
        /// Push the predicate into the reader.
        pushdown: bool,
    },
}

/// The file a Parquet case scans.
#[derive(Debug, Clone, PartialEq)]
pub enum ParquetFile {
    /// `pq::bases()[base]` with `mutations` applied.
    Mutated {
        /// Which base file.
        base: usize,
        /// In order.
        mutations: Vec<pq::Mutation>,
    },
    /// Bytes as saved in a case file.
    Bytes(Vec<u8>),
}

impl Case {
    /// Its target.
    pub fn target(&self) -> Target {
        match self {
            Case::Sql { jit: false, .. } => Target::Sql,
            Case::Sql { jit: true, .. } => Target::Jit,
            Case::Parquet { .. } => Target::Parquet,
        }
    }

    /// As JSON (the long runner passes cases between processes this way).
    pub fn to_json(&self) -> Value {
        match self {
            Case::Sql {
                jit,
                text,
                batch_seed,
                predicate,
            } => json!({
                "target": if *jit { "jit" } else { "sql" },
                "text": text,
                "batch_seed": batch_seed,
                "predicate": predicate,
            }),
            Case::Parquet {
                file,
                predicate,
                interpret,
                pushdown,
            } => {
                let mut v = json!({
                    "target": "parquet",
                    "predicate": predicate,
                    "interpret": interpret,
                    "pushdown": pushdown,
                });
                if let ParquetFile::Mutated { base, mutations } = file {
                    v["base"] = json!(base);
                    v["mutations"] =
                        json!(mutations.iter().map(|m| m.to_string()).collect::<Vec<_>>());
                }
                v
            }
        }
    }

    /// From JSON; a Parquet case without `base` takes the file `bytes`.
    pub fn from_json(v: &Value, bytes: Option<Vec<u8>>) -> Result<Case, String> {
        let target = v["target"].as_str().ok_or("no target")?;
        let flag = |k: &str| v[k].as_bool().unwrap_or(false);
        match target {
            "sql" | "jit" => Ok(Case::Sql {
                jit: target == "jit",
                text: v["text"].as_str().ok_or("no text")?.to_string(),
                batch_seed: v["batch_seed"].as_u64().ok_or("no batch_seed")?,
                predicate: flag("predicate"),
            }),
            "parquet" => {
                let file = match (v["base"].as_u64(), bytes) {
                    (_, Some(bytes)) => ParquetFile::Bytes(bytes),
                    (Some(base), None) => ParquetFile::Mutated {
                        base: base as usize,
                        mutations: v["mutations"]
                            .as_array()
                            .ok_or("no mutations")?
                            .iter()
                            .map(|m| m.as_str().ok_or("a mutation is not text")?.parse())
                            .collect::<Result<_, _>>()?,
                    },
                    (None, None) => return Err("neither base nor bytes".into()),
                };
                Ok(Case::Parquet {
                    file,
                    predicate: v["predicate"].as_str().map(str::to_string),
                    interpret: flag("interpret"),
                    pushdown: flag("pushdown"),
                })
            }
            other => Err(format!("unknown target {other}")),
        }
    }
}

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A panic, caught.
    Panic,
    /// Two evaluations that must agree did not.
    Mismatch,
    /// An error message saying "internal".
    Internal,
    /// Slower than [`SLOW`].
    Slow,
    /// The process died (abort, signal, allocation failure): long runner only.
    Crash,
}

impl Kind {
    /// Its name in saved cases.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Panic => "panic",
            Kind::Mismatch => "mismatch",
            Kind::Internal => "internal",
            Kind::Slow => "slow",
            Kind::Crash => "crash",
        }
    }
}

/// A failure: its kind and what was seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The kind.
    pub kind: Kind,
    /// The panic message and location, the two results, the error message.
    pub message: String,
    /// What identifies the bug, for deduplication and minimization.
    pub signature: String,
}

impl Failure {
    /// A failure whose signature is `kind` and `key` with digits dropped (so one bug
    /// found with other numbers is one signature).
    pub fn new(kind: Kind, key: &str, message: String) -> Failure {
        let key: String = key
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .take(120)
            .collect();
        Failure {
            kind,
            signature: format!("{}: {key}", kind.name()),
            message,
        }
    }
}

/// A mismatch found by `check`; `key` says more about it for the signature.
fn mismatch(check: &str, key: &str, detail: String) -> Option<Failure> {
    Some(Failure::new(
        Kind::Mismatch,
        &format!("{check}: {key}"),
        format!("{check}: {detail}"),
    ))
}

/// A failure if an error message reaching the user says "internal".
fn check_message(message: &str) -> Option<Failure> {
    message.to_lowercase().contains("internal").then(|| {
        let key = message.split(" at line").next().unwrap_or(message);
        Failure::new(Kind::Internal, key, message.to_string())
    })
}

/// The message and location of the last panic while capturing.
static LAST_PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);
static CAPTURING: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Installs a panic hook that, while an execution runs, records the panic's message
/// and location instead of printing them (other panics print as usual).
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CAPTURING.load(Ordering::SeqCst) {
                return default(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(a panic without a message)".into());
            // Dependencies' sources without the machine's registry directory.
            let location = info
                .location()
                .map(|l| {
                    let file = l.file();
                    let file = match file.split_once("/registry/src/") {
                        Some((_, rest)) => rest.split_once('/').map_or(rest, |(_, f)| f),
                        None => file,
                    };
                    format!("{file}:{}", l.line())
                })
                .unwrap_or_default();
            let mut last = LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_none() {
                *last = Some((message, location));
            }
        }));
    });
}

/// What executions need: the schema, batches, a kernel cache, the Parquet bases and
/// a scratch directory.
pub struct Env {
    schema: SchemaRef,
    /// Small batches for the `sql` target: lengths 0 to 17, slices, NULLs.
    small: Vec<RecordBatch>,
    cache: Arc<KernelCache>,
    bases: Vec<pq::Base>,
    dir: tempfile::TempDir,
}

impl Env {
    /// A new environment (the Parquet bases are written once, here).
    pub fn new() -> Env {
        install_panic_hook();
        let mut r = Rng::new(0xba7c4);
        let small = (0..64)
            .map(|n| {
                let len = [0usize, 1, 2, 3, 5, 8, 15, 16, 17][n % 9];
                let offset = [0usize, 0, 1, 3, 64, 67][r.below(6) as usize];
                let null_p = [0.0, 0.1, 0.3, 0.9][r.below(4) as usize];
                common::sliced_batch(r.next(), len, offset, null_p)
            })
            .collect();
        Env {
            schema: common::schema(),
            small,
            // Small, so that the process does not grow with the run; the Fast pipeline,
            // so that compiling stays cheap.
            cache: Arc::new(KernelCache::new(64, 64 << 20).with_pipeline(Pipeline::Fast)),
            bases: pq::bases(),
            dir: tempfile::tempdir().expect("a scratch directory"),
        }
    }

    /// The Parquet base files.
    pub fn bases(&self) -> &[pq::Base] {
        &self.bases
    }
}

impl Default for Env {
    fn default() -> Self {
        Env::new()
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The input of execution `index` of `target` in the run seeded `seed`.
pub fn generate(env: &Env, target: Target, seed: u64, index: u64) -> Case {
    let mut r = Rng::new(splitmix(seed ^ splitmix(index ^ ((target as u64) << 56))));
    match target {
        Target::Sql => {
            let predicate = r.chance(0.5);
            let depth = 1 + r.below(5) as u32;
            let text = match r.below(100) {
                0..=47 => sqlgen::Gen::new(&mut r, false).any(depth, predicate),
                48..=80 => {
                    let valid = sqlgen::Gen::new(&mut r, false).any(depth, predicate);
                    sqlgen::mutate(&mut r, &valid)
                }
                81..=97 => sqlgen::token_soup(&mut r),
                _ => sqlgen::shape(&mut r),
            };
            Case::Sql {
                jit: false,
                text,
                batch_seed: r.next(),
                predicate,
            }
        }
        Target::Jit => {
            let predicate = r.chance(0.6);
            let depth = 1 + r.below(4) as u32;
            let text = sqlgen::Gen::new(&mut r, true).any(depth, predicate);
            Case::Sql {
                jit: true,
                text,
                batch_seed: r.next(),
                predicate,
            }
        }
        Target::Parquet => {
            let base = r.below(env.bases.len() as u64) as usize;
            let b = &env.bases[base];
            let mutations = pq::random_mutations(&mut r, b.bytes.len() as u64);
            let predicate = b.predicates[r.below(b.predicates.len() as u64) as usize];
            Case::Parquet {
                file: ParquetFile::Mutated { base, mutations },
                predicate: predicate.map(str::to_string),
                interpret: r.chance(0.8),
                pushdown: r.chance(0.7),
            }
        }
    }
}

/// Runs one case: `None` if it passed.
pub fn execute(env: &Env, case: &Case) -> Option<Failure> {
    // One execution at a time per process: the panic hook records the first panic of
    // any thread (the scan's readers run on their own threads) for this execution.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    install_panic_hook();
    *LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()) = None;
    CAPTURING.store(true, Ordering::SeqCst);
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| match case {
        Case::Sql {
            jit: false,
            text,
            batch_seed,
            predicate,
        } => run_sql(env, text, *batch_seed, *predicate),
        Case::Sql {
            jit: true,
            text,
            batch_seed,
            predicate,
        } => run_jit(env, text, *batch_seed, *predicate),
        Case::Parquet {
            file,
            predicate,
            interpret,
            pushdown,
        } => {
            let bytes = match file {
                ParquetFile::Mutated { base, mutations } => {
                    pq::apply(&env.bases[*base].bytes, mutations)
                }
                ParquetFile::Bytes(b) => b.clone(),
            };
            run_parquet(env, &bytes, predicate.as_deref(), *interpret, *pushdown)
        }
    }));
    CAPTURING.store(false, Ordering::SeqCst);
    let elapsed = start.elapsed();
    trace(|| match case {
        Case::Sql { text, .. } => format!(
            "time {} us, {} bytes: {}",
            elapsed.as_micros(),
            text.len(),
            text.chars().take(40).collect::<String>()
        ),
        Case::Parquet { .. } => format!("time {} us", elapsed.as_micros()),
    });
    match result {
        Ok(Some(f)) => Some(f),
        Ok(None) if elapsed > SLOW => Some(Failure::new(
            Kind::Slow,
            case.target().name(),
            format!("took {:.1} s", elapsed.as_secs_f64()),
        )),
        Ok(None) => None,
        Err(_) => {
            let (message, location) = LAST_PANIC
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .unwrap_or_else(|| ("(no message)".into(), String::new()));
            let first_line = message.lines().next().unwrap_or("");
            Some(Failure::new(
                Kind::Panic,
                &format!("{location} {first_line}"),
                format!("panicked at {location}: {message}"),
            ))
        }
    }
}

/// Checks an error's message, and that rendering it against the text works.
fn check_error(e: impl Into<Error>, text: &str) -> Option<Failure> {
    let e: Error = e.into();
    let _ = e.render(text);
    // A message may quote the text, which may say "internal" itself.
    if text.to_lowercase().contains("internal") {
        return None;
    }
    check_message(&e.to_string())
}

/// The rows where a BOOLEAN array is TRUE.
fn true_rows(a: &ArrayRef) -> Vec<usize> {
    let b = a.as_boolean();
    (0..b.len())
        .filter(|&i| b.is_valid(i) && b.value(i))
        .collect()
}

type Outcome<T> = Result<T, String>;

fn outcome<T>(r: broadhead::Result<T>) -> Outcome<T> {
    r.map_err(|e| e.to_string())
}

fn same(x: &Outcome<ArrayRef>, y: &Outcome<ArrayRef>, predicate: bool) -> bool {
    match (x, y) {
        (Ok(a), Ok(b)) if predicate => true_rows(a) == true_rows(b),
        (Ok(a), Ok(b)) => common::same_array(a, b),
        (Err(a), Err(b)) => a == b,
        _ => false,
    }
}

/// Which way two outcomes differ, for a mismatch's signature: "values", or the
/// error on either side (without row numbers).
fn how<T, U>(jit: &Outcome<T>, reference: &Outcome<U>) -> String {
    let side = |o: Result<(), &String>| match o {
        Ok(()) => "values".to_string(),
        Err(e) => format!("error {}", e.split(" at row").next().unwrap_or(e)),
    };
    format!(
        "{} vs {}",
        side(jit.as_ref().map(|_| ())),
        side(reference.as_ref().map(|_| ()))
    )
}

fn show(x: &Outcome<ArrayRef>) -> String {
    match x {
        Ok(a) => format!("{a:?}"),
        Err(e) => format!("error: {e}"),
    }
}

fn run_sql(env: &Env, text: &str, batch_seed: u64, predicate: bool) -> Option<Failure> {
    let expr = match parse_expr(text) {
        Ok(e) => e,
        Err(e) => return check_error(e, text),
    };
    let shown = expr.to_string();
    match parse_expr(&shown) {
        Ok(again) if again == expr => {}
        Ok(again) => {
            return mismatch(
                "Display round trip",
                "another tree",
                format!("{text:?} displays as {shown:?}, which parses as {again:?}"),
            )
        }
        Err(e) => {
            return mismatch(
                "Display round trip",
                &format!("does not parse: {}", e.message),
                format!("{text:?} displays as {shown:?}, which does not parse: {e}"),
            )
        }
    }
    let typed = match if predicate {
        bind_predicate(&expr, &env.schema)
    } else {
        bind(&expr, &env.schema)
    } {
        Ok(t) => t,
        Err(e) => return check_error(e, text),
    };
    let optimized = optimize(typed.clone());
    let batch = &env.small[(batch_seed % env.small.len() as u64) as usize];
    let reference = outcome(interpret(&typed, batch));
    let opt = outcome(interpret(&optimized, batch));
    for r in [&reference, &opt] {
        if let Err(e) = r {
            if let Some(f) = check_message(e) {
                return Some(f);
            }
        }
    }
    if !same(&reference, &opt, predicate) {
        return mismatch(
            "optimized against not",
            &how(&opt, &reference),
            format!(
                "{text}: interpreted {}, optimized {}",
                show(&reference),
                show(&opt)
            ),
        );
    }
    None
}

/// The batch lengths the `jit` target evaluates every kernel on.
pub const JIT_LENGTHS: [usize; 8] = [0, 1, 15, 16, 17, 64, 65, 1000];

fn run_jit(env: &Env, text: &str, batch_seed: u64, predicate: bool) -> Option<Failure> {
    let Ok(expr) = parse_expr(text) else {
        return None;
    };
    let schema = &env.schema;
    let typed = match if predicate {
        bind_predicate(&expr, schema)
    } else {
        bind(&expr, schema)
    } {
        Ok(t) => t,
        Err(e) => return check_error(e, text),
    };
    let mut r = Rng::new(batch_seed);
    let batches: Vec<RecordBatch> = JIT_LENGTHS
        .iter()
        .map(|&len| {
            let offset = [0usize, 3, 64, 67][r.below(4) as usize];
            let null_p = [0.0, 0.1, 0.5][r.below(3) as usize];
            common::sliced_batch(r.next(), len, offset, null_p)
        })
        .collect();
    if predicate {
        let filter = match Filter::with_cache(schema, &expr, &env.cache) {
            Ok(f) => f,
            Err(e) => return check_error(e, text),
        };
        for batch in &batches {
            let reference = outcome(interpret(&typed, batch)).map(|a| true_rows(&a));
            for mode in [
                SelectionMode::UInt16,
                SelectionMode::UInt32,
                SelectionMode::UInt64,
            ] {
                let jit = outcome(filter.evaluate_with_mode(batch, mode))
                    .map(|s| s.iter().collect::<Vec<_>>());
                if jit != reference {
                    return mismatch(
                        "filter against interpreter",
                        &how(&jit, &reference),
                        format!(
                            "{text} ({} rows, offset {}, {mode:?}): jit {jit:?}, interpreter {reference:?}",
                            batch.num_rows(),
                            batch.column(0).offset()
                        ),
                    );
                }
            }
            let mask = outcome(filter.evaluate_mask(batch))
                .map(|m| (0..m.len()).filter(|&i| m.value(i)).collect::<Vec<_>>());
            if mask != reference {
                return mismatch(
                    "filter mask against interpreter",
                    &how(&mask, &reference),
                    format!(
                        "{text} ({} rows): mask {mask:?}, interpreter {reference:?}",
                        batch.num_rows()
                    ),
                );
            }
            if let Err(e) = &reference {
                if let Some(f) = check_message(e) {
                    return Some(f);
                }
            }
        }
    } else {
        let projector = match Projector::with_cache(schema, std::slice::from_ref(&expr), &env.cache)
        {
            Ok(p) => p,
            Err(e) => return check_error(e, text),
        };
        for batch in &batches {
            let reference = outcome(interpret(&typed, batch));
            let jit = outcome(projector.evaluate(batch)).map(|mut v| v.remove(0));
            if !same(&jit, &reference, false) {
                return mismatch(
                    "projection against interpreter",
                    &how(&jit, &reference),
                    format!(
                        "{text} ({} rows, offset {}): jit {}, interpreter {}",
                        batch.num_rows(),
                        batch.column(0).offset(),
                        show(&jit),
                        show(&reference)
                    ),
                );
            }
            let selection =
                SelectionVector::UInt32((0..batch.num_rows() as u32).step_by(2).collect());
            let taken = arrow::compute::take_record_batch(batch, &selection.to_array())
                .expect("take the selected rows");
            let reference = outcome(interpret(&typed, &taken));
            let jit =
                outcome(projector.evaluate_selected(batch, &selection)).map(|mut v| v.remove(0));
            // Rows of errors are numbered differently in the two; compare values only.
            let agree = match (&jit, &reference) {
                (Err(_), Err(_)) => true,
                _ => same(&jit, &reference, false),
            };
            if !agree {
                return mismatch(
                    "selected projection against interpreter",
                    &how(&jit, &reference),
                    format!(
                        "{text} ({} rows): jit {}, interpreter {}",
                        batch.num_rows(),
                        show(&jit),
                        show(&reference)
                    ),
                );
            }
            if let Err(e) = &reference {
                if let Some(f) = check_message(e) {
                    return Some(f);
                }
            }
        }
    }
    None
}

fn run_parquet(
    env: &Env,
    bytes: &[u8],
    predicate: Option<&str>,
    interpret: bool,
    pushdown: bool,
) -> Option<Failure> {
    let path = env.dir.path().join("case.parquet");
    std::fs::write(&path, bytes).expect("write the case to the scratch directory");
    let dataset = match Dataset::open(&[path]) {
        Ok(d) => d,
        Err(e) => {
            trace(|| format!("parquet open: {e}"));
            return check_message(&e.to_string());
        }
    };
    let columns: Vec<usize> = (0..dataset.schema().fields().len()).collect();
    let options = ScanOptions {
        batch_size: 64,
        threads: 1,
        pushdown,
        prune: true,
        interpret,
        policy: broadhead::CompilePolicy::Eager,
    };
    let scan = match Scan::new(&dataset, predicate, &columns, options) {
        Ok(s) => s,
        Err(e) => return check_message(&e.to_string()),
    };
    let mut rows = 0usize;
    let result = scan.run(&|b: RecordBatch| Ok(b.num_rows()), &mut |item| {
        if let ScanItem::Batch(n) = item {
            rows += n;
        }
        Ok(true)
    });
    trace(|| match &result {
        Ok(_) => format!("parquet: {rows} rows"),
        Err(e) => format!("parquet: {e}"),
    });
    match result {
        Ok(_) => None,
        Err(e) => check_message(&e.to_string()),
    }
}

/// With `FUZZ_TRACE` set, prints what executions end with.
fn trace(line: impl FnOnce() -> String) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("FUZZ_TRACE").is_some()) {
        eprintln!("{}", line());
    }
}

/// What one worker found: executions run and failures (all, and first of each
/// signature, minimized).
#[derive(Debug, Default)]
pub struct Tally {
    /// Executions run.
    pub executions: u64,
    /// Failing executions.
    pub failures: u64,
    /// The first failure of each signature, its case minimized.
    pub found: Vec<(Case, Failure)>,
}

/// How hard to try minimizing: checks per failure.
pub fn minimize_budget(target: Target) -> usize {
    match target {
        Target::Sql => 2000,
        Target::Jit => 150,
        Target::Parquet => 300,
    }
}

/// Runs executions `from..from + count` of `target` (stopping at `deadline`),
/// minimizing the first failure of each new signature (`known` holds those already
/// found) and passing it to `found`. `progress` is called with the next index after
/// every execution. Returns the next index.
#[allow(clippy::too_many_arguments)]
pub fn run(
    env: &Env,
    target: Target,
    seed: u64,
    from: u64,
    count: u64,
    deadline: Option<Instant>,
    known: &mut std::collections::HashSet<String>,
    tally: &mut Tally,
    found: &mut dyn FnMut(&Case, &Failure),
    progress: &mut dyn FnMut(u64),
) -> u64 {
    let mut i = from;
    while i < from + count {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let case = generate(env, target, seed, i);
        i += 1;
        tally.executions += 1;
        if let Some(failure) = execute(env, &case) {
            tally.failures += 1;
            if known.insert(failure.signature.clone()) {
                let small = if failure.kind == Kind::Slow {
                    case
                } else {
                    minimize::minimize(&case, minimize_budget(target), &mut |c| {
                        execute(env, c).is_some_and(|f| f.signature == failure.signature)
                    })
                };
                let failure = execute(env, &small).unwrap_or(failure);
                found(&small, &failure);
                tally.found.push((small, failure));
            }
        }
        progress(i);
    }
    i
}

/// Saves a case under `dir` as `NNN.sql` or `NNN.parquet` and `NNN.json` (what it
/// found), numbered after the highest case there. Returns the case file's path.
pub fn save_case(env: &Env, dir: &Path, case: &Case, failure: &Failure) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create the case directory");
    let next = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.split('.').next()?.parse::<u32>().ok()
        })
        .max()
        .map_or(1, |n| n + 1);
    let stem = format!("{next:03}");
    let mut meta = case.to_json();
    meta["kind"] = json!(failure.kind.name());
    meta["signature"] = json!(failure.signature);
    meta["found"] = json!(failure.message.chars().take(2000).collect::<String>());
    let path = match case {
        Case::Sql { text, .. } => {
            if let Some(o) = meta.as_object_mut() {
                o.remove("text");
            }
            let p = dir.join(format!("{stem}.sql"));
            std::fs::write(&p, text).expect("write the case");
            p
        }
        Case::Parquet { file, .. } => {
            let bytes = match file {
                ParquetFile::Mutated { base, mutations } => {
                    pq::apply(&env.bases[*base].bytes, mutations)
                }
                ParquetFile::Bytes(b) => b.clone(),
            };
            let p = dir.join(format!("{stem}.parquet"));
            std::fs::write(&p, bytes).expect("write the case");
            p
        }
    };
    let text = serde_json::to_string_pretty(&meta).expect("JSON") + "\n";
    std::fs::write(dir.join(format!("{stem}.json")), text).expect("write the case");
    path
}

/// The cases saved under `dir`, by file stem, in order.
pub fn load_cases(dir: &Path) -> Vec<(String, Case)> {
    let mut stems: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_string)
        })
        .collect();
    stems.sort();
    stems
        .into_iter()
        .map(|stem| {
            let meta: Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join(format!("{stem}.json"))).expect("read"),
            )
            .expect("a case's JSON");
            let mut meta = meta;
            let case = match meta["target"].as_str() {
                Some("parquet") => {
                    let bytes = std::fs::read(dir.join(format!("{stem}.parquet"))).expect("read");
                    Case::from_json(&meta, Some(bytes))
                }
                _ => {
                    let text = std::fs::read_to_string(dir.join(format!("{stem}.sql")))
                        .expect("read the case's SQL");
                    meta["text"] = json!(text);
                    Case::from_json(&meta, None)
                }
            }
            .unwrap_or_else(|e| panic!("case {stem}: {e}"));
            (stem, case)
        })
        .collect()
}

/// The signatures of the cases saved under `dir`.
pub fn load_signatures(dir: &Path) -> std::collections::HashSet<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok()?;
            Some(v["signature"].as_str()?.to_string())
        })
        .collect()
}

/// Peak resident memory of this process (VmHWM), in KiB.
pub fn peak_rss_kib() -> u64 {
    status_kib("VmHWM:")
}

/// Resident memory of this process (VmRSS), in KiB.
pub fn rss_kib() -> u64 {
    status_kib("VmRSS:")
}

fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
