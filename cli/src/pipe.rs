//! A reader that went away: a write to stdout or to a pipe given with `-o` that
//! failed with a broken pipe is noted, and the command ends quietly (exit 0), as
//! `| head` users expect.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static READER_GONE: AtomicBool = AtomicBool::new(false);

/// Whether a write to stdout, or to a pipe given with `-o` (`-o /dev/stdout | head`, a
/// FIFO), failed because its reader went away: not an error worth reporting.
pub fn reader_gone() -> bool {
    READER_GONE.load(Ordering::Relaxed)
}

/// A writer that remembers a broken pipe ([`reader_gone`]).
pub struct ReaderGone<W>(pub W);

impl<W: Write> Write for ReaderGone<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).inspect_err(note_broken_pipe)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().inspect_err(note_broken_pipe)
    }
}

fn note_broken_pipe(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        READER_GONE.store(true, Ordering::Relaxed);
    }
}
