//! `broadhead`: filter and project Parquet files with SQL expressions compiled to
//! native code. See `docs/cli.md`, or `broadhead --help`.

mod cli;

fn main() {
    let code = cli::main();
    exit_now(code)
}

/// Ends the process with `code` once stdout and stderr are flushed, without
/// running atexit handlers and C++ static destructors: a kernel may still be
/// compiling on a background thread (expressions never wait for the compiler), and
/// destroying LLVM's globals under it crashes that thread.
fn exit_now(code: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` only ends the process. Everything the command writes is
    // written by now: stdout and stderr were flushed above, output files were
    // closed (and renamed into place) before `cli::main` returned.
    unsafe { libc::_exit(i32::from(code)) }
}
