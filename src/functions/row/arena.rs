//! Where a kernel call's computed strings live: an arena of chunks that never move,
//! one of which an output may take as its buffer without a copy.

use arrow::buffer::Buffer;

use super::limit::Budget;

/// Where a kernel call's computed strings live: chunks that never move, so the
/// views handed out stay valid until the arena is dropped (after the call's
/// outputs are made). A projection's output whose strings are a run of one chunk
/// takes that chunk as its data ([`Arena::adopt`]) instead of copying it.
#[derive(Debug, Default)]
pub struct Arena {
    pub(super) chunks: Vec<Chunk>,
    /// The room the first chunk is made with.
    first: usize,
    /// The buffer [`Written`](super::Written) results of a block are collected in, kept between
    /// blocks for its capacity.
    pub(super) text: String,
    /// Each call site's budget of string results in this call (one batch), and
    /// which one is running.
    sites: Vec<Site>,
    current: usize,
}

/// A kernel call site, as the arena tracks its strings.
#[derive(Debug)]
struct Site {
    /// The address of the site's state.
    key: usize,
    budget: Budget,
    /// The row of lane 0 of the last block the site computed, and the lanes of it
    /// that failed.
    row: u64,
    failed: u64,
}

#[derive(Debug)]
pub(super) enum Chunk {
    /// Still written to (within its capacity, so that it never moves).
    Open(Vec<u8>),
    /// Given to arrays: read only.
    Adopted(Buffer),
}

impl Chunk {
    /// Where the chunk's bytes are, and how many there are.
    fn span(&self) -> (usize, usize) {
        match self {
            Chunk::Open(v) => (v.as_ptr() as usize, v.len()),
            Chunk::Adopted(b) => (b.as_ptr() as usize, b.len()),
        }
    }
}

impl Arena {
    /// An arena whose first chunk has room for `bytes` bytes (at least 64 KiB), so
    /// that a call that needs no more keeps its strings in one chunk.
    pub fn with_room(bytes: usize) -> Arena {
        Arena {
            first: bytes,
            ..Arena::default()
        }
    }

    /// Makes the call site `site` (the address of its state), a call of `name`, the
    /// one whose string results count against its budget until [`Arena::leave`].
    pub(crate) fn enter(&mut self, site: usize, name: &'static str) {
        self.current = match self.sites.iter().position(|s| s.key == site) {
            Some(i) => i,
            None => {
                self.sites.push(Site {
                    key: site,
                    budget: Budget::new(name),
                    row: 0,
                    failed: 0,
                });
                self.sites.len() - 1
            }
        };
    }

    /// Ends a block of the running call site: lane 0 was row `row`, and the lanes
    /// `failed` failed.
    pub(crate) fn leave(&mut self, row: u64, failed: u64) {
        if let Some(s) = self.sites.get_mut(self.current) {
            (s.row, s.failed) = (row, failed);
        }
    }

    /// The budget of the running call site (one of its own for a block run without
    /// [`Arena::enter`], as tests do).
    pub(super) fn budget(&mut self) -> &mut Budget {
        if self.sites.is_empty() {
            self.enter(0, super::UNNAMED);
        }
        &mut self.sites[self.current].budget
    }

    /// Why row `row` failed, if a call site failed it because the batch's strings
    /// passed the limit there or before: the interpreter cannot tell from the row
    /// alone. (The kernel stops at the first block with an error, so that block is
    /// each site's last; of two sites that failed the row, the first called.)
    pub(crate) fn limit_error(&self, row: usize) -> Option<String> {
        let row = row as u64;
        self.sites
            .iter()
            .find(|s| {
                s.budget.over_at().is_some_and(|at| at as u64 <= row)
                    && row
                        .checked_sub(s.row)
                        .is_some_and(|lane| lane < 64 && s.failed >> lane & 1 == 1)
            })
            .map(|s| s.budget.message())
    }

    /// Whether `at` is one of the bytes the arena holds.
    #[cfg(test)]
    pub(crate) fn holds(&self, at: *const u8) -> bool {
        let at = at as usize;
        self.chunks.iter().any(|c| {
            let (base, used) = c.span();
            (base..base + used).contains(&at)
        })
    }

    /// The bytes the arena holds.
    pub fn used(&self) -> usize {
        self.chunks.iter().map(|c| c.span().1).sum()
    }

    /// Copies `bytes` into the arena and returns their address.
    pub fn push(&mut self, bytes: &[u8]) -> *const u8 {
        // SAFETY: `fill` lends room for `bytes.len()` bytes, all of which are written.
        unsafe {
            self.fill(bytes.len(), |dst| {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len())
            })
        }
    }

    /// Adds `len` bytes to the arena, written by `write` into the room it is lent
    /// (at the address it is given), and returns their address.
    ///
    /// # Safety
    /// `write` writes every one of the `len` bytes at the address it is given, and
    /// nothing outside them.
    pub(crate) unsafe fn fill(&mut self, len: usize, write: impl FnOnce(*mut u8)) -> *const u8 {
        let last = match self.chunks.last_mut() {
            Some(Chunk::Open(c)) if c.capacity() - c.len() >= len => {
                // SAFETY: the chunk has room for `len` bytes; `write` is as
                // promised.
                return unsafe { append_to(c, len, write) };
            }
            Some(Chunk::Open(c)) => c.capacity(),
            Some(Chunk::Adopted(b)) => b.len(),
            None => 0,
        };
        // The first chunk as asked (up to 1 GiB), then doubling up to 16 MiB.
        let size = match last {
            0 => self.first.clamp(64 * 1024, 1 << 30),
            _ => last.saturating_mul(2).clamp(64 * 1024, 16 * 1024 * 1024),
        };
        let mut chunk = Vec::with_capacity(size.max(len));
        // SAFETY: the chunk has room for `len` bytes; `write` is as promised.
        let at = unsafe { append_to(&mut chunk, len, write) };
        // Moving the vector does not move its buffer.
        self.chunks.push(Chunk::Open(chunk));
        at
    }

    /// The `len` bytes at `start`, if they are in one chunk of the arena that is at
    /// least half full, as a slice of a buffer that owns that chunk (without
    /// copying). The chunk is written no more. A chunk mostly empty is not given
    /// away: the array would hold all of its memory (64 KiB at least) for a few
    /// bytes, which are cheaper to copy.
    pub fn adopt(&mut self, start: *const u8, len: usize) -> Option<Buffer> {
        let start = start as usize;
        let chunk = self.chunks.iter_mut().find(|c| {
            let (base, used) = c.span();
            start >= base && start.checked_add(len).is_some_and(|end| end <= base + used)
        })?;
        if let Chunk::Open(v) = chunk {
            if v.len() < v.capacity() / 2 {
                return None;
            }
            // The vector's memory becomes the buffer's: same address, no copy.
            *chunk = Chunk::Adopted(Buffer::from_vec(std::mem::take(v)));
        }
        let (base, _) = chunk.span();
        match chunk {
            Chunk::Adopted(b) => Some(b.slice_with_length(start - base, len)),
            Chunk::Open(_) => None,
        }
    }
}

/// Appends `len` bytes written by `write` to `chunk` and returns their address.
///
/// # Safety
/// `chunk` has room for `len` more bytes; `write` writes every one of the `len`
/// bytes at the address it is given, and nothing outside them.
unsafe fn append_to(chunk: &mut Vec<u8>, len: usize, write: impl FnOnce(*mut u8)) -> *const u8 {
    let start = chunk.len();
    // SAFETY: within the chunk's capacity (as the caller promises), so its buffer
    // does not move; `write` initializes the `len` bytes before the length covers
    // them.
    unsafe {
        let at = chunk.as_mut_ptr().add(start);
        write(at);
        chunk.set_len(start + len);
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arena_keeps_earlier_strings_in_place() {
        let mut arena = Arena::default();
        let first = arena.push(b"abc");
        let big = vec![b'x'; 200_000];
        arena.push(&big);
        // SAFETY: three bytes were pushed at `first` and the arena is alive.
        assert_eq!(unsafe { std::slice::from_raw_parts(first, 3) }, b"abc");
    }

    #[test]
    fn the_arena_gives_a_run_of_one_chunk_to_a_buffer_without_copying() {
        let mut arena = Arena::with_room(100);
        let a = arena.push(b"abc");
        // A chunk (of 64 KiB) mostly empty is not given away.
        assert!(arena.adopt(a, 3).is_none());
        let b = arena.push(&vec![b'x'; 40_000]);
        let run = arena.adopt(a, 40_003).unwrap();
        assert_eq!(run.as_ptr(), a);
        assert_eq!(&run.as_slice()[..5], b"abcxx");
        // Part of the same chunk again: the same memory.
        assert_eq!(arena.adopt(b, 2).unwrap().as_ptr(), b);
        // Not the arena's bytes, or past what was written.
        assert!(arena.adopt(b"abcde".as_ptr(), 5).is_none());
        assert!(arena.adopt(a, 40_004).is_none());
        // An adopted chunk is not written again: new bytes go to a new chunk.
        let c = arena.push(b"fgh");
        assert_eq!(&run.as_slice()[..5], b"abcxx");
        assert!(
            arena.adopt(a, 40_006).is_none(),
            "{c:?} is in a chunk of its own"
        );
        assert_eq!(arena.used(), 40_006);
    }
}
