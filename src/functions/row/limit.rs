//! The bound on computed strings per batch: the string results one function call
//! produces over one batch total at most [`MAX_BATCH_STRING_BYTES`] (lower with
//! [`ENV_BATCH_STRING_BYTES`]). Each call's [`Budget`] counts its bytes in row order;
//! the row whose value would pass the limit, and every later row, fails with a
//! message naming the function. The interpreter keeps a budget per function call
//! (in the adapters' collection loop), the JIT one per call site in the call's
//! [`Arena`](super::Arena); functions whose results can be much larger than their
//! arguments (`repeat`, `lpad`, `replace`) check the room left before they allocate
//! ([`Text::reserve`]).

use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

/// The most bytes of string results one function call may produce over one batch:
/// 1 GiB, PostgreSQL's limit on a single value. A computed string array thus fits
/// Arrow's 32-bit offsets (2 GiB) with room to spare, and a batch's computed strings
/// take at most a few GiB however large the counts in `repeat(s, n)` or
/// `lpad(s, n)` are.
pub const MAX_BATCH_STRING_BYTES: usize = 1 << 30;

/// The environment variable that lowers [`MAX_BATCH_STRING_BYTES`]: a number of
/// bytes (read once per process; larger values, and text that is not a number, leave
/// the limit at 1 GiB).
pub const ENV_BATCH_STRING_BYTES: &str = "BROADHEAD_BATCH_STRING_BYTES";

#[cfg(test)]
thread_local! {
    /// The limit on this test thread, when a test sets one ([`set_test_limit`]).
    static TEST_LIMIT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Sets the limit for the calling test thread (`None`: the process's), so that tests
/// cross it without allocating gigabytes.
#[cfg(test)]
pub(crate) fn set_test_limit(bytes: Option<usize>) {
    TEST_LIMIT.with(|l| l.set(bytes));
}

/// The limit in force: [`MAX_BATCH_STRING_BYTES`], or lower as
/// [`ENV_BATCH_STRING_BYTES`] says.
pub(crate) fn batch_string_limit() -> usize {
    #[cfg(test)]
    if let Some(bytes) = TEST_LIMIT.with(|l| l.get()) {
        return bytes;
    }
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| limit_from(std::env::var(ENV_BATCH_STRING_BYTES).ok().as_deref()))
}

/// The limit [`ENV_BATCH_STRING_BYTES`]'s value `var` sets.
fn limit_from(var: Option<&str>) -> usize {
    var.and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(MAX_BATCH_STRING_BYTES, |b| b.min(MAX_BATCH_STRING_BYTES))
}

/// `bytes` for a message: in GiB, MiB or KiB when a whole number of them.
fn show_bytes(bytes: usize) -> String {
    for (unit, size) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= size && bytes % size == 0 {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} bytes")
}

/// Why a row fails when `name`'s results for the batch would pass `limit` bytes (the
/// error adds the row).
fn over_limit(name: &str, limit: usize) -> String {
    format!(
        "{name}: the batch's string results would exceed {}",
        show_bytes(limit)
    )
}

/// The bytes of string results one function call has produced over a batch so far.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    /// The function, for the message.
    name: &'static str,
    limit: usize,
    spent: usize,
    /// The row that passed the limit, if one did: every later row fails too.
    over: Option<usize>,
}

impl Budget {
    /// A budget for `name`'s results over one batch, none spent.
    pub(crate) fn new(name: &'static str) -> Budget {
        Budget {
            name,
            limit: batch_string_limit(),
            spent: 0,
            over: None,
        }
    }

    /// How many more bytes the batch's results may take.
    pub(crate) fn room(&self) -> usize {
        match self.over {
            Some(_) => 0,
            None => self.limit - self.spent,
        }
    }

    /// Counts the `bytes` of row `row`'s value; the error if they would pass the
    /// limit (or an earlier row's did).
    pub(crate) fn charge(&mut self, bytes: usize, row: usize) -> Result<(), String> {
        if self.over.is_some() || bytes > self.limit - self.spent {
            return Err(self.exhaust(row));
        }
        self.spent += bytes;
        Ok(())
    }

    /// Marks the limit passed at row `row` unless an earlier row passed it (a
    /// function found that the row's value would not fit); returns the message.
    pub(crate) fn exhaust(&mut self, row: usize) -> String {
        self.over.get_or_insert(row);
        self.message()
    }

    /// Why rows fail once the limit is passed.
    pub(crate) fn message(&self) -> String {
        over_limit(self.name, self.limit)
    }

    /// The row that passed the limit, if one did.
    pub(crate) fn over_at(&self) -> Option<usize> {
        self.over
    }
}

/// What a [`Written`](super::Written) result's closure appends to: a `String` (it
/// dereferences to one) that knows how much more the batch's results may take, so
/// that a function whose result can be far larger than its arguments checks before
/// it allocates ([`Text::reserve`]).
#[derive(Debug)]
pub struct Text {
    buf: String,
    /// The length `buf` may reach within the batch's limit.
    end: usize,
    /// The function and its limit, for the message.
    name: &'static str,
    limit: usize,
    /// The closure found that its value would not fit.
    over: bool,
}

impl Default for Text {
    fn default() -> Text {
        Text::new(String::new())
    }
}

impl Deref for Text {
    type Target = String;
    fn deref(&self) -> &String {
        &self.buf
    }
}

impl DerefMut for Text {
    fn deref_mut(&mut self) -> &mut String {
        &mut self.buf
    }
}

impl Text {
    /// `buf` to append to, without a limit until [`Text::limit_by`].
    pub(super) fn new(buf: String) -> Text {
        Text {
            buf,
            end: usize::MAX,
            name: "",
            limit: usize::MAX,
            over: false,
        }
    }

    /// Bounds what the next value may append by what `budget` has room for.
    pub(super) fn limit_by(&mut self, budget: &Budget) {
        self.end = self.buf.len().saturating_add(budget.room());
        (self.name, self.limit, self.over) = (budget.name, budget.limit, false);
    }

    /// Room for `bytes` more bytes, reserved; an error (the value fails) if they
    /// would pass the batch's limit, before anything is allocated.
    pub fn reserve(&mut self, bytes: usize) -> Result<(), String> {
        if self
            .buf
            .len()
            .checked_add(bytes)
            .is_none_or(|n| n > self.end)
        {
            return Err(self.exhausted());
        }
        self.buf.reserve(bytes);
        Ok(())
    }

    /// An error if what was appended passed the batch's limit (for functions that
    /// check as they write).
    pub fn check(&mut self) -> Result<(), String> {
        if self.buf.len() > self.end {
            return Err(self.exhausted());
        }
        Ok(())
    }

    fn exhausted(&mut self) -> String {
        self.over = true;
        over_limit(self.name, self.limit)
    }

    /// Whether the value failed for the limit (then the batch's budget is spent).
    pub(super) fn is_over(&self) -> bool {
        self.over
    }

    /// The buffer, for the arena to keep between blocks.
    pub(super) fn into_string(self) -> String {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_only_lowers_the_limit() {
        assert_eq!(limit_from(None), MAX_BATCH_STRING_BYTES);
        assert_eq!(limit_from(Some(" 1000 ")), 1000);
        assert_eq!(limit_from(Some("5000000000000")), MAX_BATCH_STRING_BYTES);
        assert_eq!(limit_from(Some("1G")), MAX_BATCH_STRING_BYTES);
    }

    #[test]
    fn the_message_names_the_function_and_the_limit() {
        assert_eq!(
            over_limit("repeat", 1 << 30),
            "repeat: the batch's string results would exceed 1 GiB"
        );
        assert_eq!(show_bytes(3 << 20), "3 MiB");
        assert_eq!(show_bytes(1000), "1000 bytes");
        assert_eq!(show_bytes(0), "0 bytes");
    }

    #[test]
    fn a_budget_fails_the_row_that_passes_it_and_every_later_one() {
        set_test_limit(Some(10));
        let mut b = Budget::new("f");
        assert!(b.charge(4, 0).is_ok());
        assert!(b.charge(6, 1).is_ok());
        assert_eq!(b.room(), 0);
        assert!(b.charge(0, 2).is_ok());
        assert_eq!(b.over_at(), None);
        let mut b = Budget::new("f");
        assert!(b.charge(4, 0).is_ok());
        assert_eq!(
            b.charge(7, 1),
            Err("f: the batch's string results would exceed 10 bytes".into())
        );
        assert!(b.charge(0, 2).is_err(), "later rows fail too");
        assert_eq!(b.over_at(), Some(1));
        set_test_limit(None);
    }

    #[test]
    fn text_refuses_a_reservation_past_the_room() {
        set_test_limit(Some(10));
        let mut budget = Budget::new("g");
        budget.charge(3, 0).unwrap();
        let mut t = Text::new("ab".into());
        t.limit_by(&budget);
        assert!(t.reserve(7).is_ok());
        assert!(!t.is_over());
        assert!(t.reserve(8).is_err());
        assert!(t.is_over());
        assert!(t.reserve(usize::MAX).is_err());
        t.limit_by(&budget);
        t.push_str("1234567");
        assert!(t.check().is_ok());
        t.push('8');
        assert!(t.check().is_err());
        set_test_limit(None);
    }
}

/// Both back ends on batches whose string results cross the limit: the same error,
/// naming the function and the row, and the budget starting again with each batch.
#[cfg(test)]
mod back_ends {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    use super::set_test_limit;
    use crate::bind::bind;
    use crate::interpret::interpret;
    use crate::optimize::optimize;
    use crate::sql::parse_expr;
    use crate::{Filter, Projector};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new("n", DataType::Int64, true),
            Field::new("d", DataType::Int64, true),
        ])
    }

    /// `rows` rows of `s` = 'abcd', `n` = 10 and `d` = 1 but at row `zero` (0).
    fn batch(rows: usize, zero: Option<usize>) -> RecordBatch {
        let s: ArrayRef = Arc::new(StringArray::from(vec!["abcd"; rows]));
        let n: ArrayRef = Arc::new(Int64Array::from(vec![10; rows]));
        let d: ArrayRef = Arc::new(Int64Array::from_iter_values(
            (0..rows).map(|r| i64::from(Some(r) != zero)),
        ));
        RecordBatch::try_new(Arc::new(schema()), vec![s, n, d]).unwrap()
    }

    /// The error of the JIT's projection and filter (`length(e) > 0`) and the
    /// interpreter's for `e` over `b`, with the limit at `limit` bytes (all the
    /// same, or the test fails); `None` if they succeed.
    fn outcome(e: &str, b: &RecordBatch, limit: usize) -> Option<String> {
        set_test_limit(Some(limit));
        let s = schema();
        let expr = parse_expr(e).unwrap();
        let p = Projector::from_exprs(&s, std::slice::from_ref(&expr)).unwrap();
        assert!(p.is_jit(0), "{e} compiles");
        let projected = p.evaluate(b).err().map(|e| e.to_string());
        let pred = parse_expr(&format!("length({e}) > 0")).unwrap();
        let f = Filter::from_expr(&s, &pred).unwrap();
        assert!(f.is_jit(), "{e} compiles");
        let filtered = f.evaluate_mask(b).err().map(|e| e.to_string());
        let interpreted = interpret(&optimize(bind(&expr, &s).unwrap()), b)
            .err()
            .map(|e| e.to_string());
        set_test_limit(None);
        assert_eq!(projected, interpreted, "{e}: projection");
        assert_eq!(filtered, interpreted, "{e}: filter");
        interpreted
    }

    #[test]
    fn every_string_function_fails_at_the_row_that_passes_the_limit() {
        // 40 bytes a row: rows 0 and 1 fit 100 bytes, row 2 does not.
        let b = batch(300, None);
        let bbb = "b".repeat(37);
        for (e, name) in [
            ("repeat(s, n)", "repeat"),
            ("lpad(s, 40, 'xy')", "lpad"),
            ("rpad(s, 40)", "rpad"),
            ("concat(s, s, s, s, s, s, s, s, s, s)", "concat"),
            ("s || s || s || s || s || s || s || s || s || s", "||"),
            ("s || repeat(s, 9)", "repeat"),
            ("s || lpad(s, 32)", "||"),
            (&format!("replace(s, 'b', '{bbb}')"), "replace"),
            ("upper(repeat(s, n))", "repeat"),
        ] {
            assert_eq!(
                outcome(e, &b, 100),
                Some(format!(
                    "{name}: the batch's string results would exceed 100 bytes at row 2"
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn a_value_larger_than_the_limit_fails_before_it_is_allocated() {
        // 400 MB a row, within PostgreSQL's limit on a value: refused at row 0 by
        // the room left (1 KiB), not allocated and then refused.
        let b = batch(3, None);
        assert_eq!(
            outcome("repeat(s, n * 10000000)", &b, 1024).as_deref(),
            Some("repeat: the batch's string results would exceed 1 KiB at row 0")
        );
        assert_eq!(
            outcome("lpad(s, n * 20000000, 'é')", &b, 1024).as_deref(),
            Some("lpad: the batch's string results would exceed 1 KiB at row 0")
        );
        // Past the value's own limit: PostgreSQL's error, as before.
        assert_eq!(
            outcome("repeat(s, n * 1000000000)", &b, 1024).as_deref(),
            Some("requested length too large at row 0")
        );
    }

    #[test]
    fn the_limit_is_per_batch_and_per_call() {
        // Two rows fit, batch after batch.
        let b = batch(2, None);
        assert_eq!(outcome("repeat(s, n)", &b, 100), None);
        assert_eq!(outcome("repeat(s, n)", &b, 100), None);
        // Two calls of 40 bytes a row each have their own 100 bytes.
        assert_eq!(outcome("repeat(s, n) || ''", &b, 100), None);
        // 30 + 40 bytes a row: `||` passes 100 bytes at row 1, `rpad` at row 2.
        let b = batch(3, None);
        assert_eq!(
            outcome("lpad(s, 30) || rpad(s, 40)", &b, 100).as_deref(),
            Some("||: the batch's string results would exceed 100 bytes at row 1")
        );
    }

    #[test]
    fn rows_whose_value_is_not_used_count_in_both_back_ends() {
        // Only row 5 takes the branch; both back ends compute `repeat` for every
        // row, so row 5's value is past the limit.
        let b = batch(10, Some(5));
        let e = "CASE WHEN d = 0 THEN repeat(s, n) ELSE s END";
        assert_eq!(
            outcome(e, &b, 100).as_deref(),
            Some("repeat: the batch's string results would exceed 100 bytes at row 5")
        );
        // No row takes it: no error.
        assert_eq!(outcome(e, &batch(10, None), 100), None);
    }

    #[test]
    fn selected_rows_name_the_row_of_the_batch() {
        set_test_limit(Some(100));
        let s = schema();
        let p = Projector::from_exprs(&s, &[parse_expr("repeat(s, n)").unwrap()]).unwrap();
        assert!(p.is_jit(0));
        // The third selected row (row 20 of the batch) passes 100 bytes.
        let selection = crate::SelectionVector::UInt32(vec![5, 10, 20, 30]);
        let e = p
            .evaluate_selected(&batch(40, None), &selection)
            .unwrap_err();
        set_test_limit(None);
        assert_eq!(
            e.to_string(),
            "repeat: the batch's string results would exceed 100 bytes at row 20"
        );
    }

    #[test]
    fn other_errors_before_the_limit_are_reported() {
        // Row 1 divides by zero, row 2 passes the limit.
        let b = batch(10, Some(1));
        let e = "repeat(s, n) || CAST(10 / d AS VARCHAR)";
        assert_eq!(
            outcome(e, &b, 100).as_deref(),
            Some("division by zero at row 1")
        );
        // Row 2 does both: the first argument's error.
        let b = batch(10, Some(2));
        assert_eq!(
            outcome(e, &b, 100).as_deref(),
            Some("repeat: the batch's string results would exceed 100 bytes at row 2")
        );
    }
}
