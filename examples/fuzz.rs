//! The long fuzz run (docs/fuzzing.md):
//!
//! ```text
//! cargo run --release --example fuzz -- --seconds 1800 --seed 1 [--out DIR]
//!     [--share sql=0.6,jit=0.1,parquet=0.3] [--mem-mb 2048]
//! cargo run --example fuzz -- --replay tests/fuzz-findings
//! ```
//!
//! The parent process runs the targets of `tests/fuzz/` in child processes (itself,
//! with `--worker`), a few seconds at a time, under an address-space limit
//! (`setrlimit(RLIMIT_AS)`) and a CPU-time limit (`RLIMIT_CPU`), so that an abort, a
//! stack overflow, an allocation above the limit or an endless loop is recorded as a
//! failure instead of ending the run. After a crash
//! the chunk is run again from its last checkpoint reporting every execution, to
//! find the one that crashes; that case is minimized with `--one` child processes.
//! Other failures are minimized inside the worker. Each new failure signature is
//! saved under `--out` (default `tests/fuzz-findings/`). At the end it prints the
//! executions and failures per target and the peak resident memory.

#[path = "../tests/fuzz/mod.rs"]
mod fuzz;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use fuzz::{Case, Env, Failure, Kind, Target};
use serde_json::{json, Value};

/// Exit status of `--one` when the case fails without crashing.
const FAILED: i32 = 3;

struct Args {
    map: HashMap<String, String>,
    flags: HashSet<String>,
}

impl Args {
    fn parse() -> Args {
        let mut map = HashMap::new();
        let mut flags = HashSet::new();
        let mut it = std::env::args().skip(1).peekable();
        while let Some(a) = it.next() {
            if let Some(key) = a.strip_prefix("--") {
                match it.peek() {
                    Some(v) if !v.starts_with("--") => {
                        map.insert(key.to_string(), it.next().unwrap_or_default());
                    }
                    _ => {
                        flags.insert(key.to_string());
                    }
                }
            }
        }
        Args { map, flags }
    }

    fn get<T: std::str::FromStr>(&self, key: &str, default: T) -> T {
        match self.map.get(key) {
            Some(v) => v.parse().unwrap_or_else(|_| {
                eprintln!("--{key} {v}: not a valid value");
                std::process::exit(2)
            }),
            None => default,
        }
    }
}

/// Limits this process's address space to `mb` MiB, so that an allocation above it
/// fails (and aborts) here instead of taking the machine's memory, and its CPU time
/// to `cpu_seconds`, so that an endless loop ends (SIGXCPU) and is recorded.
fn limit(mb: u64, cpu_seconds: u64) {
    for (resource, value) in [(libc::RLIMIT_AS, mb << 20), (libc::RLIMIT_CPU, cpu_seconds)] {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: `setrlimit` reads the struct we pass by pointer and nothing else; it
        // only lowers this process's own limits.
        let rc = unsafe { libc::setrlimit(resource, &limit) };
        if rc != 0 {
            eprintln!("setrlimit failed: {}", std::io::Error::last_os_error());
        }
    }
}

/// Peak resident memory of the largest child that has ended, in KiB.
fn children_peak_kib() -> u64 {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `getrusage` writes one `rusage` through the pointer, which is valid
    // and exclusively borrowed for the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    if rc == 0 {
        usage.ru_maxrss.max(0) as u64
    } else {
        0
    }
}

fn main() {
    let args = Args::parse();
    if let Some(target) = args.map.get("worker") {
        worker(&args, target);
    } else if let Some(path) = args.map.get("one") {
        one(&args, Path::new(path));
    } else if let Some(dir) = args.map.get("replay") {
        replay(Path::new(dir));
    } else {
        parent(&args);
    }
}

/// `--worker TARGET --seed S --from I --seconds T [--careful] [--known FILE]`: runs
/// executions from `I` for `T` seconds, printing `p NEXT FAILING` checkpoints
/// (before every execution with `--careful`), `f JSON` per new failure and
/// `d NEXT FAILING PEAK_KIB` at the end.
fn worker(args: &Args, target: &str) {
    let seconds = args.get("seconds", 10.0f64);
    limit(args.get("mem-mb", 2048u64), seconds as u64 + 60);
    let target = Target::parse(target).unwrap_or_else(|| {
        eprintln!("unknown target {target}");
        std::process::exit(2)
    });
    let seed = args.get("seed", 1u64);
    let from = args.get("from", 0u64);
    let count = args.get("count", u64::MAX / 4);
    let careful = args.flags.contains("careful");
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut known: HashSet<String> = args
        .map
        .get("known")
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default();
    let env = Env::new();
    let out = std::io::stdout();
    let mut tally = fuzz::Tally::default();
    let failing = std::cell::Cell::new(0u64);
    let say = |line: String| {
        let mut out = out.lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    say(format!("p {from} 0"));
    let mut last = Instant::now();
    let next = fuzz::run(
        &env,
        target,
        seed,
        from,
        count,
        Some(deadline),
        &mut known,
        &mut tally,
        &mut |case, failure| {
            failing.set(failing.get() + 1);
            say(format!(
                "f {}",
                json!({
                    "case": case.to_json(),
                    "kind": failure.kind.name(),
                    "message": failure.message,
                    "signature": failure.signature,
                })
            ));
        },
        &mut |next| {
            if careful || last.elapsed() > Duration::from_millis(250) {
                last = Instant::now();
                say(format!("p {next} {}", failing.get()));
            }
        },
    );
    say(format!(
        "d {next} {} {}",
        tally.failures,
        fuzz::peak_rss_kib()
    ));
}

/// `--one CASE.json`: runs one case; exit 0 if it passes, 3 if it fails.
fn one(args: &Args, path: &Path) {
    limit(args.get("mem-mb", 2048u64), 60);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("read the case"))
        .expect("a case's JSON");
    let case = Case::from_json(&v, None).expect("a case");
    let env = Env::new();
    match fuzz::execute(&env, &case) {
        Some(f) => {
            println!("{}", f.signature);
            std::process::exit(FAILED)
        }
        None => std::process::exit(0),
    }
}

/// `--replay DIR`: runs every case saved under `DIR` and prints whether it passes
/// now, or the signature of its failure (after a fix is merged, the cases of
/// tests/fuzz-findings/ that pass move to tests/fuzz-regressions/).
fn replay(dir: &Path) {
    let env = Env::new();
    for (stem, case) in fuzz::load_cases(dir) {
        match fuzz::execute(&env, &case) {
            None => println!("{stem}: passes"),
            Some(f) => println!("{stem}: {}", f.signature),
        }
    }
}

/// Per-target figures of the run.
#[derive(Default, Clone)]
struct Stats {
    next: u64,
    executions: u64,
    failing: u64,
    crashes: u64,
    time: Duration,
}

struct Parent {
    exe: PathBuf,
    seed: u64,
    mem_mb: u64,
    out: PathBuf,
    scratch: tempfile::TempDir,
    known: HashSet<String>,
    saved: Vec<(String, PathBuf)>,
    env: Env,
}

/// What a child run reported.
struct ChildRun {
    status: ExitStatus,
    /// The last checkpoint: the next index and the failing count so far.
    next: u64,
    failing: u64,
    finished: bool,
    stderr: String,
}

impl Parent {
    fn known_file(&self) -> PathBuf {
        let p = self.scratch.path().join("known.txt");
        let text: String = self.known.iter().map(|s| format!("{s}\n")).collect();
        std::fs::write(&p, text).expect("write the known signatures");
        p
    }

    /// Runs a worker child, saving the new failures it reports.
    fn child(&mut self, target: Target, from: u64, seconds: f64, careful: bool) -> ChildRun {
        let err_path = self.scratch.path().join("stderr.txt");
        let err = std::fs::File::create(&err_path).expect("a stderr file");
        let mut cmd = Command::new(&self.exe);
        cmd.args(["--worker", target.name()])
            .args(["--seed", &self.seed.to_string()])
            .args(["--from", &from.to_string()])
            .args(["--seconds", &seconds.to_string()])
            .args(["--mem-mb", &self.mem_mb.to_string()])
            .arg("--known")
            .arg(self.known_file())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err));
        if careful {
            cmd.args(["--count", "2000", "--careful"]);
        }
        let mut child = cmd.spawn().expect("start a worker");
        let stdout = child.stdout.take().expect("piped stdout");
        let (mut next, mut failing, mut finished) = (from, 0, false);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let (tag, rest) = line.split_once(' ').unwrap_or((&line, ""));
            let nums: Vec<u64> = rest
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            match tag {
                "p" if nums.len() >= 2 => (next, failing) = (nums[0], nums[1]),
                "d" if nums.len() >= 2 => {
                    (next, failing, finished) = (nums[0], nums[1], true);
                }
                "f" => {
                    if let Ok(v) = serde_json::from_str::<Value>(rest) {
                        self.record(&v);
                    }
                }
                _ => {}
            }
        }
        let status = child.wait().expect("wait for a worker");
        let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
        ChildRun {
            status,
            next,
            failing,
            finished,
            stderr,
        }
    }

    /// Saves a failure a worker reported, if its signature is new.
    fn record(&mut self, v: &Value) {
        let Some(signature) = v["signature"].as_str() else {
            return;
        };
        let Ok(case) = Case::from_json(&v["case"], None) else {
            return;
        };
        let kind = match v["kind"].as_str() {
            Some("panic") => Kind::Panic,
            Some("mismatch") => Kind::Mismatch,
            Some("internal") => Kind::Internal,
            Some("slow") => Kind::Slow,
            _ => Kind::Crash,
        };
        let failure = Failure {
            kind,
            message: v["message"].as_str().unwrap_or("").to_string(),
            signature: signature.to_string(),
        };
        self.save(&case, &failure);
    }

    fn save(&mut self, case: &Case, failure: &Failure) {
        if self.known.insert(failure.signature.clone()) {
            let path = fuzz::save_case(&self.env, &self.out, case, failure);
            println!(
                "NEW {} ({}): {}",
                failure.signature,
                path.display(),
                failure.message.chars().take(300).collect::<String>()
            );
            self.saved.push((failure.signature.clone(), path));
        }
    }

    /// Runs `case` in a `--one` child: `Some(signature)` if it crashed the child.
    fn crash_signature(&self, case: &Case) -> Option<String> {
        let path = self.scratch.path().join("one.json");
        std::fs::write(&path, case.to_json().to_string()).expect("write the case");
        let output = Command::new(&self.exe)
            .arg("--one")
            .arg(&path)
            .args(["--mem-mb", &self.mem_mb.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .expect("run a case");
        match output.status.code() {
            Some(0) | Some(FAILED) => None,
            _ => Some(crash_signature(
                output.status,
                &String::from_utf8_lossy(&output.stderr),
            )),
        }
    }

    /// Finds, minimizes and saves the execution that crashed a worker, running
    /// `from..` again with a checkpoint before every execution. Returns the index
    /// after the crash (or after the careful run, if nothing crashed).
    fn after_crash(&mut self, target: Target, from: u64, stats: &mut Stats) -> u64 {
        let run = self.child(target, from, 120.0, true);
        stats.executions += run.next - from;
        stats.failing += run.failing;
        if run.finished || run.status.success() {
            return run.next;
        }
        let index = run.next;
        let case = fuzz::generate(&self.env, target, self.seed, index);
        let signature = crash_signature(run.status, &run.stderr);
        stats.executions += 1;
        stats.failing += 1;
        stats.crashes += 1;
        if !self.known.contains(&signature) {
            let small = fuzz::minimize::minimize(&case, 60, &mut |c| {
                self.crash_signature(c).as_deref() == Some(signature.as_str())
            });
            let message = format!(
                "execution {index} (seed {}) ended the process: {}",
                self.seed,
                run.stderr
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" / ")
            );
            let failure = Failure {
                kind: Kind::Crash,
                message,
                signature: signature.clone(),
            };
            self.save(&small, &failure);
        }
        index + 1
    }
}

/// What identifies a crash: the runtime's last words, digits dropped, or the signal.
fn crash_signature(status: ExitStatus, stderr: &str) -> String {
    let words = stderr
        .lines()
        .rev()
        .find(|l| {
            l.contains("memory allocation")
                || l.contains("overflowed its stack")
                || l.contains("fatal runtime error")
                || l.contains("panicked")
        })
        .unwrap_or("");
    let words: String = words
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .take(120)
        .collect();
    format!("crash: {status} {}", words.trim())
}

fn parent(args: &Args) {
    let seconds = args.get("seconds", 60.0f64);
    let seed = args.get("seed", 1u64);
    let mem_mb = args.get("mem-mb", 2048u64);
    let out = args
        .map
        .get("out")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-findings"));
    let mut shares: HashMap<Target, f64> = HashMap::from([
        (Target::Sql, 0.6),
        (Target::Jit, 0.1),
        (Target::Parquet, 0.3),
    ]);
    if let Some(s) = args.map.get("share") {
        shares.clear();
        for part in s.split(',') {
            let (name, share) = part.split_once('=').unwrap_or((part, "1"));
            match (Target::parse(name), share.parse::<f64>()) {
                (Some(t), Ok(x)) if x > 0.0 => {
                    shares.insert(t, x);
                }
                _ => {
                    eprintln!("--share {s}: expected e.g. sql=0.6,jit=0.1,parquet=0.3");
                    std::process::exit(2)
                }
            }
        }
    }
    // Signatures already saved there are not saved again.
    let known: HashSet<String> = fuzz::load_signatures(&out);
    let mut p = Parent {
        exe: std::env::current_exe().expect("this executable"),
        seed,
        mem_mb,
        out,
        scratch: tempfile::tempdir().expect("a scratch directory"),
        known,
        saved: Vec::new(),
        env: Env::new(),
    };
    let mut stats: HashMap<Target, Stats> = HashMap::new();
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    println!(
        "fuzz: seed {seed}, {seconds} s, shares {shares:?}, out {}",
        p.out.display()
    );
    while Instant::now() < end {
        let target = *shares
            .keys()
            .min_by(|a, b| {
                let used =
                    |t: &Target| stats.get(t).map_or(0.0, |s| s.time.as_secs_f64()) / shares[t];
                used(a).total_cmp(&used(b))
            })
            .expect("a target");
        let chunk = (end - Instant::now()).as_secs_f64().clamp(0.5, 10.0);
        let mut s = stats.get(&target).cloned().unwrap_or_default();
        let t0 = Instant::now();
        let run = p.child(target, s.next, chunk, false);
        s.executions += run.next - s.next;
        s.failing += run.failing;
        s.next = if run.finished {
            run.next
        } else {
            eprintln!(
                "{} worker ended ({}) near execution {}; finding the case",
                target.name(),
                run.status,
                run.next
            );
            p.after_crash(target, run.next, &mut s)
        };
        s.time += t0.elapsed();
        stats.insert(target, s);
    }
    let total: u64 = stats.values().map(|s| s.executions).sum();
    println!(
        "\n{:<8} {:>12} {:>9} {:>8} {:>8} {:>9}",
        "target", "executions", "failing", "crashes", "time_s", "exec/s"
    );
    for t in Target::ALL {
        let s = stats.get(&t).cloned().unwrap_or_default();
        let secs = s.time.as_secs_f64();
        println!(
            "{:<8} {:>12} {:>9} {:>8} {:>8.0} {:>9.0}",
            t.name(),
            s.executions,
            s.failing,
            s.crashes,
            secs,
            s.executions as f64 / secs.max(1e-9)
        );
    }
    println!(
        "total executions: {total} in {:.0} s (seed {seed})",
        start.elapsed().as_secs_f64()
    );
    println!("new failure signatures saved: {}", p.saved.len());
    for (sig, path) in &p.saved {
        println!("  {} {sig}", path.display());
    }
    println!(
        "peak RSS: parent {} KiB, largest worker {} KiB (address space limit {mem_mb} MiB)",
        fuzz::peak_rss_kib(),
        children_peak_kib()
    );
}
