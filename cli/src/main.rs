//! `broadhead`: filter and project Parquet files with SQL expressions compiled to
//! native code. See `docs/cli.md`, or `broadhead --help`.
//!
//! This file holds the command line, dispatch, and errors with exit codes; each
//! command is a module of its own, and the arguments several share are in `args`.
//!
//! Nothing here uses `println!`/`eprintln!` (they panic when the stream fails): stdout is
//! written with `outln!`/`out!`, which return a [`Failure`], and stderr with
//! [`warn`], which ignores failures.

/// Writes a line to stdout; a failed write is a [`Failure`] (a closed pipe ends quietly).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Writes to stdout without a newline; see `outln!`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::print(format_args!($($arg)*))
    };
}

mod args;
mod bench;
mod cleanup;
mod csv;
mod demo;
mod explain;
mod filter;
#[cfg(feature = "datafusion")]
mod full_sql;
mod functions;
mod gen;
mod output;
mod pipe;
mod schema;
mod sql;
mod table;
mod target;
mod temp;
mod text_arg;

use std::io::{IsTerminal, Write};

use broadhead::scan::ScanError;
use clap::{Parser, Subcommand};

const EXAMPLES: &str = "\
Examples:
  broadhead demo
  broadhead gen tpch --scale 1 --table lineitem /tmp/lineitem.parquet
  broadhead filter /tmp/lineitem.parquet --where \"l_quantity < 24 AND l_discount BETWEEN 0.05 AND 0.07\" --count
  broadhead filter /tmp/lineitem.parquet --where \"l_shipmode = 'AIR'\" \\
      --select \"l_orderkey, l_extendedprice * (1 - l_discount) AS revenue\" --limit 5
  broadhead sql \"SELECT l_orderkey, l_quantity FROM '/tmp/lineitem.parquet' WHERE l_quantity > 49 LIMIT 3\"
  broadhead explain --schema /tmp/lineitem.parquet \"l_quantity < 24\"
  broadhead schema /tmp/lineitem.parquet
  broadhead functions 'regexp*'
  broadhead bench /tmp/lineitem.parquet --where \"l_quantity < 24\"";

/// Filter and project Parquet files with SQL expressions compiled to native code by LLVM.
#[derive(Parser)]
#[command(name = "broadhead", version, after_help = EXAMPLES)]
struct Cli {
    /// Neither read nor write compiled kernels in the on-disk kernel cache
    /// (~/.cache/broadhead/kernels; also BROADHEAD_KERNEL_CACHE=off)
    #[arg(long, global = true)]
    no_kernel_cache: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rows of Parquet files where a SQL predicate is TRUE, optionally projected.
    #[command(
        after_help = "Example:\n  broadhead filter lineitem.parquet --where \"l_quantity < 24\" \
        --select \"l_orderkey, l_extendedprice * (1 - l_discount) AS revenue\" --limit 10\n  \
        broadhead filter 'data/*.parquet' --where \"l_shipdate >= DATE '1994-01-01'\" --count"
    )]
    Filter(filter::FilterArgs),
    /// One SQL statement: `SELECT <list> FROM <file> [WHERE <expr>] [LIMIT n] [OFFSET n]`.
    #[command(
        after_help = "Example:\n  broadhead sql \"SELECT l_orderkey, l_quantity FROM 'lineitem.parquet' \
        WHERE l_quantity > 49 LIMIT 3\"\n  broadhead sql \"SELECT count(*) FROM read_parquet('data/*.parquet') WHERE l_discount = 0.05\""
    )]
    Sql(args::SqlArgs),
    /// How an expression is compiled: parsed, typed and optimized trees, LLVM IR, assembly.
    #[command(
        after_help = "Example:\n  broadhead explain \"a < 2 AND b LIKE 'x%'\"\n  \
        broadhead explain --schema lineitem.parquet --asm \"l_quantity < 24\""
    )]
    Explain(explain::ExplainArgs),
    /// A Parquet file's columns, types, row count and row groups.
    #[command(after_help = "Example:\n  broadhead schema lineitem.parquet")]
    Schema(schema::SchemaArgs),
    /// Generate data sets.
    #[command(subcommand)]
    Gen(gen::GenCommand),
    /// The main job on built-in data: TPC-H Q6's predicate with the JIT and the interpreter.
    #[command(after_help = "Example:\n  broadhead demo\n  broadhead demo --scale 1")]
    Demo(demo::DemoArgs),
    /// Time JIT against interpreted evaluation on your own file (in memory, median of runs).
    #[command(
        after_help = "Example:\n  broadhead bench lineitem.parquet --where \"l_quantity < 24\"\n  \
        broadhead bench lineitem.parquet --select \"l_extendedprice * (1 - l_discount)\""
    )]
    Bench(bench::BenchArgs),
    /// The functions and operators expressions can use: signatures, NULL behaviour, descriptions.
    #[command(
        after_help = "Example:\n  broadhead functions\n  broadhead functions upper\n  \
        broadhead functions 'date*' --format csv"
    )]
    Functions(functions::FunctionsArgs),
}

/// A failure: the message for stderr and the exit code.
#[derive(Debug)]
pub struct Failure {
    code: u8,
    message: String,
    /// A statement `broadhead sql` parsed but its scan cannot run (GROUP BY, a join,
    /// …): the feature `datafusion` runs it through DataFusion.
    beyond_scan: bool,
}

impl Failure {
    /// A usage or expression error (exit 2).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
            beyond_scan: false,
        }
    }

    /// A runtime or data error (exit 1).
    pub fn runtime(message: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            message: message.into(),
            beyond_scan: false,
        }
    }

    /// An engine error about the expression `source` (`what` names it, e.g. "--where"):
    /// parse and bind errors are usage errors shown with a caret under the position.
    pub fn expr(e: impl Into<broadhead::Error>, what: &str, source: &str) -> Failure {
        match e.into() {
            e @ (broadhead::Error::Parse(_) | broadhead::Error::Bind(_)) => {
                Failure::usage(format!("in {what}: {}", e.render(source)))
            }
            other => Failure::runtime(other.to_string()),
        }
    }
}

impl From<ScanError> for Failure {
    fn from(e: ScanError) -> Failure {
        match e {
            ScanError::Engine(e @ (broadhead::Error::Parse(_) | broadhead::Error::Bind(_))) => {
                Failure::usage(e.to_string())
            }
            other => Failure::runtime(other.to_string()),
        }
    }
}

impl From<broadhead::Error> for Failure {
    fn from(e: broadhead::Error) -> Failure {
        Failure::from(ScanError::Engine(e))
    }
}

impl From<broadhead::ParseError> for Failure {
    fn from(e: broadhead::ParseError) -> Failure {
        Failure::from(broadhead::Error::from(e))
    }
}

impl From<broadhead::BindError> for Failure {
    fn from(e: broadhead::BindError) -> Failure {
        Failure::from(broadhead::Error::from(e))
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::runtime(e.to_string())
    }
}

pub type CliResult<T = ()> = Result<T, Failure>;

/// Whether stderr is a terminal a progress bar may draw on.
pub fn progress_allowed(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// Writes a message to stderr, ignoring a failure (there is nowhere left to report it).
/// Control characters are escaped on each line ([`broadhead::escape`]): a message
/// quoting a file name or expression text cannot forge lines or drive the terminal.
pub fn warn(message: std::fmt::Arguments) {
    let text = message.to_string();
    let _ = writeln!(
        std::io::stderr(),
        "{}",
        broadhead::escape::escape_lines(&text)
    );
}

fn main() {
    keep_large_blocks_in_the_heap();
    let code = run();
    exit_now(code)
}

/// glibc's `malloc` serves a block of 128 KiB or more with `mmap` (raising that
/// threshold to the size of each such block freed) and gives the free top of its heap
/// back to the kernel beyond twice the threshold, so blocks of that size allocated
/// and freed again and again cost page faults and the kernel zeroing every page. The
/// Parquet reader allocates such blocks for every page it decompresses and every
/// column chunk it decodes: in `perf`, the CSV export of TPC-H Q6 at scale 1 spent
/// about a fifth of its time in page faults, `clear_page` and `munmap`. Serving
/// blocks of up to 32 MiB from the heap, and keeping up to 256 MiB of freed heap,
/// took that export from 1.5–2.3 s to 1.0–1.1 s with one thread and from 0.79–1.0 s
/// to 0.67–0.71 s with two (three runs each; counts are unchanged).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_large_blocks_in_the_heap() {
    // SAFETY: `mallopt` only sets glibc malloc's tuning parameters (it takes
    // malloc's lock, and no other thread exists yet); both values are within the
    // documented ranges (the mmap threshold at most 32 MiB on 64-bit targets).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

/// Other C libraries' allocators are left as they are.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_large_blocks_in_the_heap() {}

/// Ends the process with `code` once stdout and stderr are flushed, without
/// running atexit handlers and C++ static destructors: a kernel may still be
/// compiling on a background thread (expressions never wait for the compiler), and
/// destroying LLVM's globals under it crashes that thread.
fn exit_now(code: u8) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` only ends the process. Everything the command writes is
    // written by now: stdout and stderr were flushed above, output files were
    // closed (and renamed into place) before `run` returned.
    unsafe { libc::_exit(i32::from(code)) }
}

/// Runs the command line; returns the exit code.
fn run() -> u8 {
    // A panic is a bug: one line, no backtrace, exit 1.
    std::panic::set_hook(Box::new(|info| {
        warn(format_args!(
            "broadhead: internal error (please report): {info}"
        ));
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            print_usage_error(&e);
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    cleanup::install();
    if !cli.no_kernel_cache {
        broadhead::KernelCache::global().set_disk_cache(broadhead::DiskCache::from_env());
    }
    // Kernels that arrive in about a tenth of O3's time (the scan runs on the
    // interpreter until they do), 1.2-1.35x slower than O3's on data streaming from
    // a file, where reading the file dominates; not upgraded to O3 when hot (the
    // library's default), whose compile would take a core from the scan. `bench`
    // measures kernels on data in cache, where O3's are 1.4-1.7x faster: it
    // compiles with O3 from the start.
    let pipeline = match cli.command {
        Command::Bench(_) => broadhead::Pipeline::O3,
        _ => broadhead::Pipeline::Quick,
    };
    broadhead::KernelCache::global().set_pipeline(pipeline);
    if matches!(
        cli.command,
        Command::Filter(_) | Command::Sql(_) | Command::Bench(_) | Command::Demo(_)
    ) {
        set_up_llvm_meanwhile();
    }
    let result = std::panic::catch_unwind(|| {
        match cli.command {
            Command::Filter(a) => filter::run(a),
            Command::Sql(a) => sql::run(a),
            Command::Explain(a) => explain::run(a),
            Command::Schema(a) => schema::run(a),
            Command::Gen(a) => gen::run(a),
            Command::Demo(a) => demo::run(a),
            Command::Bench(a) => bench::run(a),
            Command::Functions(a) => functions::run(a),
        }
        .and_then(|()| output::flush_stdout())
    });
    let code = match result {
        Ok(Ok(())) => 0,
        Ok(Err(_)) if pipe::reader_gone() => 0,
        Ok(Err(f)) => {
            warn(format_args!("broadhead: error: {}", f.message));
            f.code
        }
        Err(_) => 1,
    };
    finish_kernels_for_the_disk_cache();
    code
}

/// Prints clap's error (or help, or version). An error among whose arguments one has
/// control characters is found again on the arguments as messages show them
/// ([`broadhead::escape`]), so that it quotes them escaped, and printed without
/// colours: clap quotes arguments as they are (only its colour handling drops some
/// control characters, and never a newline).
fn print_usage_error(e: &clap::Error) {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let controls = args
        .iter()
        .any(|a| a.to_string_lossy().chars().any(char::is_control));
    if !(e.use_stderr() && controls) {
        let _ = e.print();
        return;
    }
    let shown: Vec<String> = args
        .iter()
        .map(|a| broadhead::escape::escape_path(std::path::Path::new(a)).into_owned())
        .collect();
    let again = Cli::try_parse_from(&shown).err();
    let text = again.as_ref().unwrap_or(e).render().to_string();
    warn(format_args!("{}", text.trim_end()));
}

/// Sets up LLVM (about 0.7 ms) on a thread of its own while the command opens its
/// input, so its first kernel, compiled or loaded from the disk cache, does not wait
/// for it. A failure is not reported here: the compile that needs LLVM reports it.
fn set_up_llvm_meanwhile() {
    let _ = std::thread::Builder::new()
        .name("broadhead-llvm-setup".into())
        .spawn(|| {
            let _ = broadhead_codegen::initialize();
        });
}

/// With the on-disk kernel cache on, waits (the output is complete by now) for the
/// kernels still compiling in the background: each is written to the disk cache
/// when it is compiled, so the next run loads it instead of compiling. A query that
/// ends before its kernel is ready thus pays for the compile once, at its end,
/// rather than in every run. Without a disk cache, or with one found unusable,
/// nothing waits: the process ends with `_exit` under any compile.
///
/// A cache directory (or secret) that others could write is refused by the library
/// (nothing is loaded from it or written to it); this says so in one line, once,
/// after the output. A directory that cannot be made or written stays silent.
fn finish_kernels_for_the_disk_cache() {
    let cache = broadhead::KernelCache::global();
    let Some(disk) = cache.disk_cache() else {
        return;
    };
    if disk.refusal().is_none() {
        cache.wait_for_background_compiles();
    }
    if let Some(broadhead::disk_cache::Refusal::Unsafe(why)) = disk.refusal() {
        warn(format_args!(
            "broadhead: warning: kernel cache not used: {why}"
        ));
    }
}
