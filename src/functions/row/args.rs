//! Argument types: how a row's value is read from an Arrow array (the
//! interpreter's face) and from a block's lane (the JIT's).

use arrow::array::{Array, ArrowPrimitiveType, AsArray};
use broadhead_codegen::CallArg;

use super::{Blob, Bool, Utf8};

/// An argument type: how a row's value is read from an array and from a block.
pub trait Arg: 'static {
    /// One row's value.
    type Item<'a>: Copy;
    /// Row `i` of `a` (an array of this type; the row is valid).
    fn get(a: &dyn Array, i: usize) -> Self::Item<'_>;
    /// Lane `i` of a block.
    ///
    /// # Safety
    /// The descriptor holds a block of this type and lane `i` is valid.
    unsafe fn lane(arg: &CallArg, i: usize) -> Self::Item<'_>;
    /// The value as a string, for string arguments ([`Slice`](super::Slice) results are ranges of
    /// the first argument).
    fn as_str<'a>(_v: Self::Item<'a>) -> Option<&'a str> {
        None
    }
}

impl<T: ArrowPrimitiveType> Arg for T {
    type Item<'a> = T::Native;
    fn get(a: &dyn Array, i: usize) -> T::Native {
        a.as_primitive::<T>().value(i)
    }
    unsafe fn lane(arg: &CallArg, i: usize) -> T::Native {
        // SAFETY: the block holds LANES values of this type and i < LANES.
        unsafe { *(arg.values as *const T::Native).add(i) }
    }
}

impl Arg for Utf8 {
    type Item<'a> = &'a str;
    fn get(a: &dyn Array, i: usize) -> &str {
        crate::layout::str_value(a, i)
    }
    unsafe fn lane(arg: &CallArg, i: usize) -> &str {
        // SAFETY: as the caller promises; a valid lane's view points at UTF-8 bytes
        // (an Arrow string array's or the arena's copy of a `str`).
        unsafe { std::str::from_utf8_unchecked(Blob::lane(arg, i)) }
    }
    fn as_str<'a>(v: Self::Item<'a>) -> Option<&'a str> {
        Some(v)
    }
}

impl Arg for Blob {
    type Item<'a> = &'a [u8];
    fn get(a: &dyn Array, i: usize) -> &[u8] {
        crate::layout::bytes_value(a, i)
    }
    unsafe fn lane(arg: &CallArg, i: usize) -> &[u8] {
        // SAFETY: a valid lane's view points at bytes (of an Arrow array, a literal
        // or the arena) that live for the call.
        unsafe {
            let ptr = *(arg.values as *const u64).add(i) as *const u8;
            let len = *arg.lens.add(i) as usize;
            std::slice::from_raw_parts(ptr, len)
        }
    }
}

impl Arg for Bool {
    type Item<'a> = bool;
    fn get(a: &dyn Array, i: usize) -> bool {
        a.as_boolean().value(i)
    }
    unsafe fn lane(arg: &CallArg, i: usize) -> bool {
        // SAFETY: a boolean block is one u64 mask.
        unsafe { (*(arg.values as *const u64) >> i) & 1 == 1 }
    }
}
