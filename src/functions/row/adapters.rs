//! The adapters that make a row function's two faces from one closure: [`map1`],
//! [`map2`], [`map3`] (and their `_with` forms) and [`variadic`].

use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow_schema::DataType;
use broadhead_codegen::{CallArg, CallOut};

use super::arena::Arena;
use super::args::Arg;
use super::limit::Budget;
use super::results::{Collect, Ret};
use super::{at, lane_mask, lanes, Outcome, RowError, RowImpl, UNNAMED};

/// The interpreter's face of an adapter: the result's rows, collected one by one,
/// and the rows that failed.
struct Collected<'b, R: Ret> {
    b: R::Builder,
    errors: Vec<RowError>,
    scratch: R::Scratch,
    /// The bytes of the batch's string results so far.
    budget: &'b mut Budget,
}

impl<'b, R: Ret> Collected<'b, R> {
    fn new(rows: usize, budget: &'b mut Budget) -> Collected<'b, R> {
        Collected {
            b: R::Builder::with_rows(rows),
            errors: Vec::new(),
            scratch: R::Scratch::default(),
            budget,
        }
    }

    /// A NULL row, without a call (a strict function's argument is NULL).
    fn null(&mut self) {
        R::append(&mut self.b, None, None, &self.scratch, 0)
    }

    /// Row `row`'s outcome of `f`, which is lent the scratch; `first` is the first
    /// argument when it is a string.
    #[inline(always)]
    fn row(
        &mut self,
        row: usize,
        first: Option<&str>,
        f: impl FnOnce(&mut R::Scratch) -> Outcome<R::Item>,
    ) {
        match within_budget::<R>(self.budget, row, &mut self.scratch, 0, f) {
            Ok(v) => R::append(&mut self.b, v, first, &self.scratch, 0),
            Err(m) => {
                self.errors.push((row, m));
                R::append(&mut self.b, None, None, &self.scratch, 0)
            }
        }
        R::clear(&mut self.scratch);
    }

    /// The array, of type `ty`, and the rows that failed.
    fn finish(self, ty: &DataType) -> (ArrayRef, Vec<RowError>) {
        (self.b.finish_as(ty), self.errors)
    }
}

/// The outcome of `f` for row `row` of the batch, lent `scratch` (whose value
/// starts at `mark`), with a string value counted against `budget`: an error when
/// it would pass the batch's limit, which the closure may also find itself before
/// allocating (then the budget is spent).
#[inline(always)]
fn within_budget<R: Ret>(
    budget: &mut Budget,
    row: usize,
    scratch: &mut R::Scratch,
    mark: usize,
    f: impl FnOnce(&mut R::Scratch) -> Outcome<R::Item>,
) -> Outcome<R::Item> {
    if !R::COUNTED {
        return f(scratch);
    }
    R::limit(scratch, budget);
    match f(scratch) {
        Ok(Some(v)) => budget
            .charge(R::bytes(&v, scratch, mark), row)
            .map(|()| Some(v)),
        Err(m) if R::over(scratch) => {
            budget.exhaust(row);
            Err(m)
        }
        other => other,
    }
}

/// The JIT's face of an adapter: one block's lanes, written one by one, and those
/// that were valid and that failed.
struct BlockWriter<R: Ret> {
    valid: u64,
    failed: u64,
    scratch: R::Scratch,
}

impl<R: Ret> BlockWriter<R> {
    fn new(arena: &mut Arena) -> BlockWriter<R> {
        BlockWriter {
            valid: 0,
            failed: 0,
            scratch: R::take_scratch(arena),
        }
    }

    /// Lane `i`'s outcome of `f`, which is lent the scratch; `first` is the first
    /// argument when it is a string.
    #[inline(always)]
    fn lane(
        &mut self,
        out: &mut CallOut,
        arena: &mut Arena,
        i: usize,
        first: Option<&str>,
        f: impl FnOnce(&mut R::Scratch) -> Outcome<R::Item>,
    ) {
        let mark = R::mark(&self.scratch);
        let row = (out.row as usize).wrapping_add(i);
        match within_budget::<R>(arena.budget(), row, &mut self.scratch, mark, f) {
            Ok(Some(v)) => {
                // SAFETY: the kernel gives room for a block of the result type, and a
                // string argument lives for the call.
                unsafe { R::write(out, i, v, first, arena, &mut self.scratch, mark) };
                self.valid |= 1 << i;
            }
            Ok(None) => R::discard(&mut self.scratch, mark),
            Err(_) => {
                R::discard(&mut self.scratch, mark);
                self.failed |= 1 << i;
            }
        }
    }

    /// Ends the block: the valid lanes in `out.valid`; returns the failed ones.
    fn end(self, out: &mut CallOut, arena: &mut Arena) -> u64 {
        // SAFETY: the lanes `valid` were written by `lane`, with this scratch.
        unsafe { R::end_block(out, self.valid, arena, self.scratch) };
        out.valid = self.valid;
        self.failed
    }
}

/// The first argument as a string, if it is one.
macro_rules! first_str {
    ($a:ident $x:ident $(, $rest:ident $y:ident)*) => {
        $a::as_str($x)
    };
}

macro_rules! map_n {
    ($(#[$doc:meta])* $name:ident, $(#[$doc_with:meta])* $with:ident, $($a:ident $x:ident $k:tt),+) => {
        $(#[$doc])*
        pub fn $name<$($a: Arg,)+ R: Ret, F>(f: F) -> RowImpl
        where
            F: for<'a> Fn($($a::Item<'a>),+) -> Outcome<R::Item> + Send + Sync + 'static,
        {
            $with::<$($a,)+ R, _>(move |$($x,)+ _: &mut R::Scratch| f($($x),+))
        }

        $(#[$doc_with])*
        pub fn $with<$($a: Arg,)+ R: Ret, F>(f: F) -> RowImpl
        where
            F: for<'a> Fn($($a::Item<'a>,)+ &mut R::Scratch) -> Outcome<R::Item>
                + Send
                + Sync
                + 'static,
        {
            let f = Arc::new(f);
            let g = f.clone();
            RowImpl {
                eval: Arc::new(move |args: &[ArrayRef], rows: usize, ty: &DataType, budget: &mut Budget| {
                    let mut c = Collected::<R>::new(rows, budget);
                    for row in 0..rows {
                        if $(args[$k].is_null(at(&args[$k], row)))||+ {
                            c.null();
                            continue;
                        }
                        $(let $x = $a::get(args[$k].as_ref(), at(&args[$k], row));)+
                        c.row(row, first_str!($($a $x),+), |s| f($($x,)+ s));
                    }
                    c.finish(ty)
                }),
                block: Arc::new(move |arena: &mut Arena, args: &[CallArg], out: &mut CallOut| {
                    let mut w = BlockWriter::<R>::new(arena);
                    for i in lanes(out.valid & lane_mask()) {
                        // SAFETY: the kernel computes only lanes where every argument
                        // is valid (a strict call), and those hold values.
                        $(let $x = unsafe { $a::lane(&args[$k], i) };)+
                        w.lane(out, arena, i, first_str!($($a $x),+), |s| g($($x,)+ s));
                    }
                    w.end(out, arena)
                }),
                strict: true,
                can_error: false,
                name: UNNAMED,
            }
        }
    };
}

map_n!(
    /// A function of one argument, NULL when it is NULL.
    map1,
    /// [`map1`] with the result type's scratch lent to the closure (the `String` a
    /// [`Written`](super::Written) result is appended to).
    map1_with,
    A a 0
);
map_n!(
    /// A function of two arguments, NULL when either is NULL.
    map2,
    /// [`map2`] with the result type's scratch lent to the closure.
    map2_with,
    A a 0, B b 1
);
map_n!(
    /// A function of three arguments, NULL when any is NULL.
    map3,
    /// [`map3`] with the result type's scratch lent to the closure.
    map3_with,
    A a 0, B b 1, C c 2
);

/// A function of any number of arguments of one type, which sees NULLs (as
/// `None`) and decides its result itself (`concat` skips them); with `strict`, it
/// is NULL when any argument is NULL and sees only non-NULL rows.
pub fn variadic<A: Arg, R: Ret, F>(strict: bool, f: F) -> RowImpl
where
    F: for<'a> Fn(&[Option<A::Item<'a>>]) -> Outcome<R::Item> + Send + Sync + 'static,
{
    variadic_with::<A, R, _>(strict, move |values, _: &mut R::Scratch| f(values))
}

/// [`variadic`] with the result type's scratch lent to the closure (the `String` a
/// [`Written`](super::Written) result is appended to).
pub fn variadic_with<A: Arg, R: Ret, F>(strict: bool, f: F) -> RowImpl
where
    F: for<'a> Fn(&[Option<A::Item<'a>>], &mut R::Scratch) -> Outcome<R::Item>
        + Send
        + Sync
        + 'static,
{
    let f = Arc::new(f);
    let g = f.clone();
    RowImpl {
        eval: Arc::new(
            move |args: &[ArrayRef], rows: usize, ty: &DataType, budget: &mut Budget| {
                let mut c = Collected::<R>::new(rows, budget);
                let mut values = Vec::with_capacity(args.len());
                for row in 0..rows {
                    values.clear();
                    values.extend(
                        args.iter()
                            .map(|a| (at(a, row), a))
                            .map(|(i, a)| (!a.is_null(i)).then(|| A::get(a.as_ref(), i))),
                    );
                    if strict && values.iter().any(Option::is_none) {
                        c.null();
                        continue;
                    }
                    let first = values.first().copied().flatten();
                    c.row(row, first.and_then(A::as_str), |s| f(&values, s));
                }
                c.finish(ty)
            },
        ),
        block: Arc::new(
            move |arena: &mut Arena, args: &[CallArg], out: &mut CallOut| {
                // The row's values: on the stack for up to 8 arguments.
                let (mut inline, mut spilled) = ([None; 8], Vec::new());
                let values = match args.len() {
                    n @ 0..=8 => &mut inline[..n],
                    n => {
                        spilled.resize(n, None);
                        &mut spilled[..]
                    }
                };
                let mut w = BlockWriter::<R>::new(arena);
                for i in lanes(out.valid & lane_mask()) {
                    for (v, a) in values.iter_mut().zip(args) {
                        // SAFETY: valid lanes hold values; a strict call computes only
                        // lanes where every argument is valid.
                        *v = (strict || a.valid >> i & 1 == 1).then(|| unsafe { A::lane(a, i) });
                    }
                    let first = values.first().copied().flatten();
                    w.lane(out, arena, i, first.and_then(A::as_str), |s| g(values, s));
                }
                w.end(out, arena)
            },
        ),
        strict,
        can_error: false,
        name: UNNAMED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::row::{Slice, Utf8};
    use arrow::array::{AsArray, Int64Array, StringArray};
    use arrow::datatypes::Int64Type;

    #[test]
    fn the_interpreter_face_skips_nulls_and_collects_errors() {
        let f = map1::<Int64Type, Int64Type, _>(|x: i64| {
            if x < 0 {
                Err("negative".to_string())
            } else {
                Ok(Some(x * 2))
            }
        })
        .fallible();
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(-1)]));
        let (out, errors) = f.evaluate(&[a], 3, &DataType::Int64);
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(out.iter().collect::<Vec<_>>(), vec![Some(2), None, None]);
        assert_eq!(errors, vec![(2, "negative".to_string())]);
    }

    #[test]
    fn strings_borrow_or_own() {
        let upper = map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(s.to_uppercase())));
        let first = map1::<Utf8, Slice, _>(|s: &str| {
            Ok(Some(0..s.chars().next().map_or(0, char::len_utf8)))
        });
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("straße"), None, Some("")]));
        let (u, _) = upper.evaluate(std::slice::from_ref(&a), 3, &DataType::Utf8);
        let (f, _) = first.evaluate(&[a], 3, &DataType::Utf8);
        let u: Vec<_> = u.as_string::<i32>().iter().collect();
        let f: Vec<_> = f.as_string::<i32>().iter().collect();
        assert_eq!(u, vec![Some("STRASSE"), None, Some("")]);
        assert_eq!(f, vec![Some("s"), None, Some("")]);
    }
}
