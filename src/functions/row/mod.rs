//! Functions written row by row, run by both back ends.
//!
//! A function is a closure over one row's argument values (`|s: &str| …`). The
//! adapters here ([`map1`], [`map2`], [`map3`], [`variadic`]) turn it into a
//! [`RowImpl`] with two faces:
//!
//! * the interpreter's: a loop over Arrow arrays building the result array, with
//!   the rows that failed and why;
//! * the JIT's: a loop over one block of rows ([`CallArg`]s in, a [`CallOut`]
//!   out), which the kernel calls through the single runtime helper
//!   [`call_row_function`]. Strings arrive as views (address, length) into the
//!   batch or into the call's [`Arena`]; computed strings ([`Utf8`] results) are
//!   written to the arena, while a [`Slice`] result — a byte range of the first
//!   argument, as `substr` and `trim` give — is passed on as a view, without
//!   copying.
//!
//! Argument and result types are the markers of [`Arg`](args::Arg) and [`Ret`]:
//! Arrow's primitive types (`Int64Type`, `Float64Type`, `Date32Type`, …),
//! [`Utf8`], [`Slice`], [`Written`], [`Bool`] and [`Blob`] (bytes). A [`Written`]
//! result is appended by the closure to a `String` the adapter lends it (the
//! `_with` adapters, [`map1_with`] …): the JIT's face collects a block's values in
//! that one buffer and copies it into the arena once per block, so that no
//! `String` is allocated and no copy made per row. A closure returns
//! `Ok(Some(v))`, `Ok(None)` for a NULL result, or `Err(message)` for a row that
//! fails (`"cannot take the square root of a negative number"`); the message is
//! reported with the row, and only for rows whose value is used.
//!
//! The string results of one call over one batch are bounded (`limit.rs`): the
//! adapters count each row's bytes against the call's [`Budget`](limit::Budget),
//! and a row that would pass the limit fails, naming the function
//! ([`RowImpl::named`]). A [`Written`] result's closure is lent a [`Text`], which
//! tells it before it allocates whether a value would fit.
//!
//! This file holds the [`RowImpl`] type, the markers and the runtime helper; the
//! argument types are read in `args.rs`, results written in `results.rs`, the
//! adapters are in `adapters.rs`, the arena in `arena.rs`, the JIT's face of
//! joining strings in `join.rs`, and the bound on a batch's strings in `limit.rs`.

mod adapters;
mod arena;
mod args;
mod join;
mod limit;
mod results;
#[cfg(test)]
mod testing;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow_schema::DataType;
use broadhead_codegen::{CallArg, CallFn, CallOut, Helper, LANES};

pub use adapters::{map1, map1_with, map2, map2_with, map3, map3_with, variadic, variadic_with};
pub use arena::Arena;
pub(crate) use join::join_block;
pub use join::push_short;
pub use limit::{Text, ENV_BATCH_STRING_BYTES, MAX_BATCH_STRING_BYTES};
pub use results::Ret;

/// A row that failed and why.
pub type RowError = (usize, String);

/// The interpreter's face: the arguments (arrays of `rows` rows), the result type
/// and the budget of the batch's string results to the result array and the rows
/// that failed.
type EvalFn = dyn Fn(&[ArrayRef], usize, &DataType, &mut limit::Budget) -> (ArrayRef, Vec<RowError>)
    + Send
    + Sync;

/// The JIT's face: one block (see [`CallFn`]); returns the lanes that failed.
type BlockFn = dyn Fn(&mut Arena, &[CallArg], &mut CallOut) -> u64 + Send + Sync;

/// A function implemented row by row, for both back ends.
#[derive(Clone)]
pub struct RowImpl {
    eval: Arc<EvalFn>,
    block: Arc<BlockFn>,
    /// NULL if any argument is NULL (the closure never sees NULLs).
    pub strict: bool,
    /// Whether a row can fail.
    pub can_error: bool,
    /// The function's name, for the error of a batch whose strings pass the limit
    /// (the registry gives each signature its function's).
    pub(crate) name: &'static str,
}

/// The name of a [`RowImpl`] not yet [named](RowImpl::named).
pub(crate) const UNNAMED: &str = "function";

impl std::fmt::Debug for RowImpl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowImpl")
            .field("strict", &self.strict)
            .field("can_error", &self.can_error)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl RowImpl {
    /// The same function with errors declared (for closures that can fail).
    pub fn fallible(mut self) -> RowImpl {
        self.can_error = true;
        self
    }

    /// The same function called `name` in its errors (unless it already has a name).
    pub(crate) fn named(mut self, name: &'static str) -> RowImpl {
        if self.name == UNNAMED {
            self.name = name;
        }
        self
    }

    /// The same function with its JIT face replaced by `block`, written for the
    /// function's job instead of through an adapter. It must compute what the
    /// interpreter's face does (`tests/functions.rs` runs both on every signature).
    pub(crate) fn with_block(
        mut self,
        block: impl Fn(&mut Arena, &[CallArg], &mut CallOut) -> u64 + Send + Sync + 'static,
    ) -> RowImpl {
        self.block = Arc::new(block);
        self
    }

    /// Evaluates over arrays of `rows` rows (each argument has `rows` values, or
    /// one value for every row, a literal's): one batch, whose string results count
    /// against one budget. A row on which the function panics (a bug) fails with a
    /// message saying so.
    pub fn evaluate(
        &self,
        args: &[ArrayRef],
        rows: usize,
        ret: &DataType,
    ) -> (ArrayRef, Vec<RowError>) {
        let mut budget = limit::Budget::new(self.name);
        if let Ok(result) = catch_unwind(AssertUnwindSafe(|| {
            (self.eval)(args, rows, ret, &mut budget)
        })) {
            return result;
        }
        // Find the rows that panic, one row at a time.
        let mut budget = limit::Budget::new(self.name);
        let mut parts = Vec::with_capacity(rows);
        let mut errors = Vec::new();
        for row in 0..rows {
            let one: Vec<ArrayRef> = args.iter().map(|a| a.slice(at(a, row), 1)).collect();
            match catch_unwind(AssertUnwindSafe(|| (self.eval)(&one, 1, ret, &mut budget))) {
                Ok((part, failed)) => {
                    errors.extend(failed.into_iter().map(|(_, m)| (row, m)));
                    parts.push(part);
                }
                Err(_) => {
                    errors.push((row, "the function failed unexpectedly".to_string()));
                    parts.push(arrow::array::new_null_array(ret, 1));
                }
            }
        }
        let parts: Vec<&dyn Array> = parts.iter().map(|p| p.as_ref()).collect();
        let result = arrow::compute::concat(&parts)
            .unwrap_or_else(|_| arrow::array::new_null_array(ret, rows));
        (result, errors)
    }
}

/// What a kernel's call site points its helper at: the implementation and the
/// number of arguments at that site.
pub(crate) struct CallState {
    pub(crate) imp: RowImpl,
    pub(crate) arity: usize,
}

/// The runtime helper every [`Lowering::Helper`](super::Lowering::Helper) call
/// goes through.
pub(crate) fn helper() -> Helper {
    let f: CallFn = call_row_function;
    Helper {
        name: "broadhead_call_row_function",
        addr: f as usize,
    }
}

/// The [`CallFn`] of row functions: `state` is a [`CallState`], `ctx` the call's
/// [`Arena`].
///
/// # Safety
/// Called by generated code only: `state` points at a live `CallState`, `ctx` at
/// the `Arena` of the running call (used by one thread), `args` at `arity`
/// descriptors whose lanes in `out.valid` (strict calls) or whose valid lanes
/// (others) hold values of the signature's types, and `out` at room for a block of
/// results.
unsafe extern "C" fn call_row_function(
    state: *const u8,
    ctx: *mut u8,
    args: *const CallArg,
    out: *mut CallOut,
) -> u64 {
    // SAFETY: as the contract above says.
    let (call, arena, out) = unsafe {
        (
            &*(state as *const CallState),
            &mut *(ctx as *mut Arena),
            &mut *out,
        )
    };
    // SAFETY: `args` points at `arity` descriptors.
    let args = unsafe { std::slice::from_raw_parts(args, call.arity) };
    let compute = out.valid;
    arena.enter(state as usize, call.imp.name);
    if let Ok(failed) = catch_unwind(AssertUnwindSafe(|| (call.imp.block)(arena, args, out))) {
        arena.leave(out.row, failed);
        return failed;
    }
    // A lane panicked (a bug in the function): run the lanes one at a time, so that
    // just the ones that panic fail, as the interpreter's rows do.
    let (mut valid, mut failed) = (0, 0);
    for i in lanes(compute) {
        out.valid = 1 << i;
        match catch_unwind(AssertUnwindSafe(|| (call.imp.block)(arena, args, out))) {
            Ok(f) => {
                failed |= f;
                valid |= out.valid;
            }
            Err(_) => failed |= 1 << i,
        }
    }
    out.valid = valid;
    arena.leave(out.row, failed);
    failed
}

/// The VARCHAR marker: arguments are `&str` (read from arrays of any string layout:
/// `Utf8`, `LargeUtf8`, `Utf8View`), results `String`s (`Utf8` arrays).
pub struct Utf8;
/// A VARCHAR result that is part of the first argument (a string): the closure
/// returns the byte range, and the JIT passes it on as a view without copying.
pub struct Slice;
/// A VARCHAR result the closure appends to the `String` it is lent and reports
/// with `Ok(Some(()))`. The `String` may hold earlier rows' values: the closure
/// only appends. One buffer serves every row, where a [`Utf8`] result allocates a
/// `String` per row.
pub struct Written;
/// The BOOLEAN marker.
pub struct Bool;
/// The BLOB marker: arguments are `&[u8]` (of a BLOB, or the UTF-8 bytes of a
/// VARCHAR, in any layout), results `Vec<u8>` (a BLOB).
pub struct Blob;

/// What a function returns for one row: a value, `None` for NULL, or why it failed.
pub type Outcome<T> = Result<Option<T>, String>;

/// Where row `row`'s value of argument `a` is: a one-value argument (a literal)
/// holds it for every row.
#[inline(always)]
fn at(a: &ArrayRef, row: usize) -> usize {
    if a.len() == 1 {
        0
    } else {
        row
    }
}

/// The lanes of a mask, lowest first.
fn lanes(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

/// Every lane of a block.
fn lane_mask() -> u64 {
    if LANES >= 64 {
        u64::MAX
    } else {
        (1u64 << LANES) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{AsArray, Int64Array};
    use arrow::datatypes::Int64Type;

    #[test]
    fn a_panic_fails_only_the_rows_that_panic() {
        let f = map1::<Int64Type, Int64Type, _>(|x: i64| {
            assert!(x != 2, "a bug");
            Ok(Some(x))
        });
        let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let (out, errors) = f.evaluate(&[a], 3, &DataType::Int64);
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(out.iter().collect::<Vec<_>>(), vec![Some(1), None, Some(3)]);
        assert_eq!(
            errors,
            vec![(1, "the function failed unexpectedly".to_string())]
        );
    }
}
