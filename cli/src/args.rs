//! The arguments more than one command takes: what a scan reads (`filter`,
//! `bench`), how it runs (`filter`, `sql`), where results go, and `sql`'s own,
//! which the scan (`sql`) and DataFusion (`full_sql`) both read.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::text_arg::text_arg;

/// What a scan reads and computes: files, a predicate and a select list. The help
/// here is `filter`'s; a command that means them otherwise says so with `mut_arg`
/// (`bench`).
#[derive(Args, Clone, Debug)]
pub struct ScanArgs {
    /// Parquet files, directories of them, or globs ('data/*.parquet'); one schema
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The predicate, a SQL expression: rows where it is TRUE are kept; @FILE reads it
    /// from FILE, - from standard input [default: every row]
    #[arg(
        long = "where",
        short = 'w',
        value_name = "EXPR",
        allow_hyphen_values = true,
        value_parser = text_arg
    )]
    pub predicate: Option<String>,
    /// The output columns, a SQL select list ("a, b * 2 AS c"); @FILE reads it from
    /// FILE, - from standard input [default: all columns]
    #[arg(
        long,
        short,
        value_name = "LIST",
        allow_hyphen_values = true,
        value_parser = text_arg
    )]
    pub select: Option<String>,
}

/// How results are written.
#[derive(Args, Clone, Debug)]
pub struct OutputArgs {
    /// Output format [default: table when stdout is a terminal, else csv; with
    /// --output, from the file's extension]
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Write to this file. A regular file is written to a temporary file beside it and
    /// renamed over it when complete, keeping the replaced file's permissions (and, as
    /// root, its owner); devices, pipes and /dev/stdout are written directly
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Replace an output file that is read-only (its permissions are kept); without
    /// it, such a file is refused
    #[arg(long)]
    pub force: bool,
}

/// Output formats.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// An aligned text table (the first rows, with a note of how many were not shown)
    Table,
    /// CSV with a header line
    Csv,
    /// JSON, one object per line
    Json,
    /// Parquet
    Parquet,
    /// Arrow IPC file
    Arrow,
}

/// How the scan runs.
#[derive(Args, Clone, Debug)]
pub struct ExecArgs {
    /// Threads reading row groups [default: all cores]
    #[arg(long)]
    pub threads: Option<usize>,
    /// Rows per batch
    #[arg(long, default_value_t = 8192, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_size: u64,
    /// Evaluate the predicate after reading whole batches instead of inside the
    /// Parquet reader (for comparison)
    #[arg(long)]
    pub no_pushdown: bool,
    /// Read every row group, even those whose statistics rule the predicate out
    #[arg(long)]
    pub no_prune: bool,
    /// Evaluate with the interpreter instead of the JIT (for comparison, or as a fallback)
    #[arg(long)]
    pub interpret: bool,
    /// No progress bar
    #[arg(long, short)]
    pub quiet: bool,
    /// Print how the expressions ran on stderr when done: batches evaluated by the
    /// interpreter and by the compiled kernel (which compiles in the background
    /// while the interpreter starts), when the kernel arrived, row groups pruned
    #[arg(long)]
    pub stats: bool,
}

impl ExecArgs {
    /// The scan's options these arguments ask for.
    pub fn scan_options(&self) -> broadhead::scan::ScanOptions {
        let mut o = broadhead::scan::ScanOptions::default();
        if let Some(t) = self.threads {
            o.threads = t.max(1);
        }
        o.batch_size = self.batch_size as usize;
        o.pushdown = !self.no_pushdown;
        o.prune = !self.no_prune;
        o.interpret = self.interpret;
        o.policy = broadhead::CompilePolicy::Tiered;
        o
    }
}

/// Arguments of `broadhead sql`.
#[derive(Args, Debug)]
pub struct SqlArgs {
    /// `SELECT <list> FROM <file> [WHERE <expr>] [LIMIT n] [OFFSET n]`; the list may hold
    /// expressions, `*`, or `count(*)` alone; the file is 'path' (a file, a directory or
    /// a glob), read_parquet('path'), or a bare name such as lineitem.parquet. A build
    /// with the feature `datafusion` runs any SELECT or EXPLAIN (GROUP BY, ORDER BY,
    /// joins, aggregates) through DataFusion. @FILE reads the statement from FILE, -
    /// from standard input
    #[arg(allow_hyphen_values = true, value_parser = text_arg)]
    pub query: String,
    /// Run the statement through DataFusion even when the scan could (a build with
    /// the feature `datafusion`); with --interpret, without Broadhead's rule
    #[arg(long)]
    pub datafusion: bool,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub exec: ExecArgs,
}
