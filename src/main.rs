//! `broadhead`: filter and project Parquet files with SQL expressions compiled to
//! native code. See `docs/cli.md`, or `broadhead --help`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
