//! Running compiled kernels on Arrow data: binding a batch's buffers to the kernel's
//! input slots, choosing the kernel variant for the batch's nulls, and turning a
//! failing row into a precise error.
//!
//! A kernel is specialized on which inputs have nulls: a column whose `null_count`
//! is 0 gets no validity code at all. The variant for the schema's nullability is
//! compiled up front; others are compiled the first time a batch needs them, up to
//! [`MAX_SPECIALIZED`] patterns. Beyond that every other pattern runs the variant
//! that reads validity for every input (compiled once), with an all-valid bitmap
//! for columns that have none, so data whose nulls move between columns costs at
//! most `MAX_SPECIALIZED + 1` compilations per expression.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{DataType, Schema};
use broadhead_codegen::{compile, CompileOptions, Explain, Kernel, Mode, OutSlot, PType, Slot};

use crate::cache::KernelCache;

use crate::error::{Error, EvalError, Result};
use crate::functions::row::Arena;
use crate::interpret::interpret;
use crate::layout::{byte_layout, byte_slot};
use crate::lower::{lower, Interpreted, Lowered, Unsupported};
use crate::typed::TypedExpr;

/// How many null patterns get a kernel of their own before later patterns share the
/// all-nullable variant.
pub(crate) const MAX_SPECIALIZED: usize = 2;

/// One or more expressions compiled into one kernel, with its variants.
pub(crate) struct Jit {
    lowered: Lowered,
    exprs: Vec<TypedExpr>,
    cache: Arc<KernelCache>,
    variants: RwLock<HashMap<Vec<bool>, Arc<Kernel>>>,
}

/// A batch's buffers as the kernel reads them, plus any words we had to realign and
/// the tables of data buffer addresses of view columns (slots point into both).
struct Bound {
    slots: Vec<Slot>,
    _realigned: Vec<Vec<u64>>,
    _tables: Vec<Vec<*const u8>>,
}

/// A bitmap as 64-bit words starting at row 0: the buffer itself when it is already
/// word-aligned with whole words in bounds, else a copy.
fn words(bits: &BooleanBuffer, realigned: &mut Vec<Vec<u64>>) -> *const u64 {
    let (offset, len) = (bits.offset(), bits.len());
    let bytes = bits.inner();
    let needed = len.div_ceil(64) * 8;
    let start = offset / 8;
    if offset % 64 == 0 && bytes.len() >= start + needed {
        let p = bytes.as_ptr().wrapping_add(start);
        if (p as usize) % 8 == 0 {
            return p as *const u64;
        }
    }
    let copy: Vec<u64> = bytes.bit_chunks(offset, len).iter_padded().collect();
    realigned.push(copy);
    realigned
        .last()
        .map(|v| v.as_ptr())
        .unwrap_or(std::ptr::null())
}

impl Jit {
    /// Lowers and compiles `exprs` (all over `schema`); `Ok(Err(_))` when the JIT
    /// does not support them.
    pub(crate) fn new(
        exprs: Vec<TypedExpr>,
        mode: Mode,
        schema: &Schema,
        cache: &Arc<KernelCache>,
    ) -> Result<Result<Jit, Unsupported>> {
        let lowered = match lower(&exprs.iter().collect::<Vec<_>>(), mode, schema) {
            Ok(l) => l,
            Err(u) => return Ok(Err(u)),
        };
        let jit = Jit {
            lowered,
            exprs,
            cache: cache.clone(),
            variants: RwLock::new(HashMap::new()),
        };
        jit.kernel(&jit.nullable(schema))?;
        Ok(Ok(jit))
    }

    /// Which input slots may hold nulls for batches of `schema` (an interpreted
    /// subtree may).
    fn nullable(&self, schema: &Schema) -> Vec<bool> {
        self.lowered
            .columns
            .iter()
            .map(|c| c.is_none_or(|c| schema.field(c).is_nullable()))
            .collect()
    }

    fn program_for(&self, nullable: &[bool]) -> broadhead_codegen::Program {
        let mut program = self.lowered.program.clone();
        for (spec, &n) in program.inputs.iter_mut().zip(nullable) {
            spec.nullable = n;
        }
        program
    }

    /// The kernel for inputs with nulls where `nullable` says, and the null pattern it
    /// was compiled for: `nullable` itself, or (once [`MAX_SPECIALIZED`] patterns have
    /// their own) the all-nullable pattern.
    fn kernel(&self, nullable: &[bool]) -> Result<(Arc<Kernel>, Vec<bool>)> {
        let all = vec![true; nullable.len()];
        let pattern = {
            let variants = self.variants.read().unwrap_or_else(|p| p.into_inner());
            if let Some(k) = variants.get(nullable) {
                return Ok((k.clone(), nullable.to_vec()));
            }
            let specialized = variants.keys().filter(|p| **p != all).count();
            if specialized < MAX_SPECIALIZED {
                nullable.to_vec()
            } else if let Some(k) = variants.get(&all) {
                return Ok((k.clone(), all));
            } else {
                all
            }
        };
        let kernel = self
            .cache
            .get_or_compile(&self.program_for(&pattern))
            .map_err(|e| Error::Compile(e.to_string()))?;
        let mut variants = self.variants.write().unwrap_or_else(|p| p.into_inner());
        let kernel = variants.entry(pattern.clone()).or_insert(kernel).clone();
        Ok((kernel, pattern))
    }

    /// Compile timings of the first variant compiled.
    pub(crate) fn compile_timings(&self) -> broadhead_codegen::CompileTimings {
        let variants = self.variants.read().unwrap_or_else(|p| p.into_inner());
        variants
            .values()
            .next()
            .map(|k| k.timings)
            .unwrap_or_default()
    }

    /// The IR and assembly of the variant for `schema`'s nullability.
    pub(crate) fn explain(&self, schema: &Schema) -> Result<Explain> {
        let kernel = compile(
            &self.program_for(&self.nullable(schema)),
            CompileOptions {
                explain: true,
                pipeline: self.cache.pipeline(),
            },
        )
        .map_err(|e| Error::Compile(e.to_string()))?;
        Ok(kernel.explain.unwrap_or_default())
    }

    /// The subtrees the interpreter evaluates for the kernel.
    pub(crate) fn interpreted(&self) -> &[Interpreted] {
        &self.lowered.interpreted
    }

    /// The arrays of the kernel's input slots for `batch` (of the schema it was
    /// compiled for): its columns, and the values of the interpreted subtrees.
    pub(crate) fn inputs(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
        let mut arrays: Vec<Option<ArrayRef>> = self
            .lowered
            .columns
            .iter()
            .map(|c| c.map(|c| batch.column(c).clone()))
            .collect();
        for i in &self.lowered.interpreted {
            arrays[i.slot] = Some(interpret(&i.expr, batch)?);
        }
        arrays
            .into_iter()
            .map(|a| a.ok_or_else(|| mismatch(&DataType::Null)))
            .collect()
    }

    /// Binds `columns` for the variant compiled for null pattern `pattern` (which
    /// includes every column with nulls): a column the variant reads validity for but
    /// which has no bitmap gets an all-valid one.
    fn bind(&self, columns: &[ArrayRef], rows: usize, pattern: &[bool]) -> Result<Bound> {
        let mut slots = Vec::with_capacity(columns.len());
        let mut realigned = Vec::new();
        let mut tables = Vec::new();
        for ((spec, array), &nullable) in
            self.lowered.program.inputs.iter().zip(columns).zip(pattern)
        {
            let validity = match array.nulls() {
                Some(n) if nullable => words(n.inner(), &mut realigned),
                None if nullable => {
                    realigned.push(vec![u64::MAX; rows.div_ceil(64)]);
                    realigned
                        .last()
                        .map(|v| v.as_ptr())
                        .unwrap_or(std::ptr::null())
                }
                _ => std::ptr::null(),
            };
            let data = array.to_data();
            let slot = match spec.ty {
                PType::Str => {
                    if byte_layout(array.data_type()) != Some(spec.layout) {
                        return Err(mismatch(array.data_type()));
                    }
                    byte_slot(array.as_ref(), validity, &mut tables)
                        .ok_or_else(|| mismatch(array.data_type()))?
                }
                PType::Bool => {
                    let b = array
                        .as_boolean_opt()
                        .ok_or_else(|| mismatch(array.data_type()))?;
                    Slot {
                        values: words(b.values(), &mut realigned) as *const u8,
                        validity,
                        data: std::ptr::null(),
                    }
                }
                t => {
                    let width = t.width() as usize;
                    let buffer = data
                        .buffers()
                        .first()
                        .ok_or_else(|| mismatch(array.data_type()))?;
                    if buffer.len() < (data.offset() + data.len()) * width {
                        return Err(mismatch(array.data_type()));
                    }
                    let values = buffer.as_ptr().wrapping_add(data.offset() * width);
                    Slot {
                        values,
                        validity,
                        data: std::ptr::null(),
                    }
                }
            };
            slots.push(slot);
        }
        Ok(Bound {
            slots,
            _realigned: realigned,
            _tables: tables,
        })
    }

    /// Runs the kernel over `columns` (the arrays of the input slots, all of `rows`
    /// rows and of the compiled types); `outs` must be sized as
    /// [`Kernel::run`] requires for `mode`. Strings the kernel computes live in
    /// `arena` (string outputs point into it and into the columns). On a failing
    /// row, `describe(row)` gives the precise error.
    pub(crate) fn run(
        &self,
        columns: &[ArrayRef],
        rows: usize,
        outs: &[OutSlot],
        mode: u64,
        arena: &mut Arena,
        describe: impl Fn(usize) -> Error,
    ) -> Result<usize> {
        if columns.len() != self.lowered.columns.len() || columns.iter().any(|c| c.len() != rows) {
            return Err(EvalError::SchemaMismatch("column count or length differs".into()).into());
        }
        let narrowed = narrow_decimals(&self.lowered.program.inputs, columns)?;
        let columns = narrowed.as_deref().unwrap_or(columns);
        let has_nulls: Vec<bool> = columns.iter().map(|c| c.null_count() > 0).collect();
        let (kernel, pattern) = self.kernel(&has_nulls)?;
        let bound = self.bind(columns, rows, &pattern)?;
        // SAFETY: `bound.slots` has one slot per program input, built from arrays of
        // `rows` rows whose types the caller checked against the compiled schema: values
        // pointers come from the arrays' own buffers (offset-adjusted, length checked),
        // bitmaps are whole words from row 0 (realigned copies otherwise), and a
        // validity pointer (the array's, or all-valid words for `rows` rows) is present
        // exactly for the inputs the variant treats as nullable. `self.lowered.params`
        // holds one value per parameter, with helper states owned by
        // `self.lowered.states`. `outs` is sized by the caller. `arena` is the `Arena`
        // the row-function helper expects as `ctx`, borrowed mutably for the call.
        let ctx = arena as *mut Arena as *mut u8;
        let result =
            unsafe { kernel.run(&bound.slots, &self.lowered.params, rows, outs, mode, ctx) };
        result.map_err(describe)
    }

    /// Runs the kernel over `batch` (whose schema the caller checked).
    pub(crate) fn run_batch(
        &self,
        batch: &RecordBatch,
        outs: &[OutSlot],
        mode: u64,
    ) -> Result<usize> {
        let columns = self.inputs(batch)?;
        let mut arena = Arena::default();
        self.run(&columns, batch.num_rows(), outs, mode, &mut arena, |row| {
            self.describe_row(batch, row, row)
        })
    }

    /// The error the interpreter gives for row `row` of `batch` (used when the kernel
    /// reports that the row failed), with the row number of the batch.
    pub(crate) fn describe_row(
        &self,
        batch: &RecordBatch,
        row: usize,
        reported_row: usize,
    ) -> Error {
        let one = batch.slice(row, 1);
        for e in &self.exprs {
            if let Err(Error::Eval(err)) = interpret(e, &one) {
                return err.shifted(reported_row).into();
            }
        }
        EvalError::Other(format!("evaluation failed at row {reported_row}")).into()
    }
}

/// The `Decimal128` columns the kernel reads as `i64` (precision up to 18) as
/// `Int64` arrays of their unscaled values (`None` when there are none). Arrow
/// does not enforce a decimal's precision: a value beyond it is an error naming the
/// row, not a silent truncation.
fn narrow_decimals(
    inputs: &[broadhead_codegen::InputSpec],
    columns: &[ArrayRef],
) -> Result<Option<Vec<ArrayRef>>> {
    use arrow::datatypes::Decimal128Type;
    if !columns
        .iter()
        .any(|c| matches!(c.data_type(), DataType::Decimal128(..)))
    {
        return Ok(None);
    }
    let narrowed = inputs
        .iter()
        .zip(columns)
        .map(|(spec, c)| match c.data_type() {
            DataType::Decimal128(p, _) if spec.ty == PType::I64 => {
                let wide = c.as_primitive::<Decimal128Type>();
                let limit = crate::decimal::pow10::<i128>(u32::from(*p)).unwrap_or(i128::MAX);
                // One branch-free pass over every slot; only when some slot is beyond
                // the precision (maybe under a NULL) are the valid rows looked at.
                let all_fit = wide
                    .values()
                    .iter()
                    .fold(true, |fit, &v| fit & (v > -limit) & (v < limit));
                let outside = if all_fit {
                    None
                } else {
                    wide.iter()
                        .position(|v| v.is_some_and(|v| v.unsigned_abs() >= limit.unsigned_abs()))
                };
                if let Some(row) = outside {
                    return Err(EvalError::Function {
                        message: format!(
                            "the value {} of a {} column does not fit its precision",
                            crate::decimal::format(
                                wide.value(row),
                                crate::types::decimal_parts(c.data_type()).map_or(0, |(_, s)| s)
                            ),
                            crate::types::sql_type_name(c.data_type())
                        ),
                        row,
                    }
                    .into());
                }
                let narrow: arrow::array::Int64Array = wide.unary(|v| v as i64);
                Ok(Arc::new(narrow) as ArrayRef)
            }
            _ => Ok(c.clone()),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(narrowed))
}

fn mismatch(t: &DataType) -> Error {
    EvalError::SchemaMismatch(format!("unexpected column layout for {t}")).into()
}

/// Checks that `batch` has the schema an expression was compiled for: the same
/// column names and types (nullability and metadata may differ).
pub(crate) fn check_schema(expected: &Schema, batch: &RecordBatch) -> Result<()> {
    let actual = batch.schema();
    if actual.fields().len() != expected.fields().len() {
        return Err(EvalError::SchemaMismatch(format!(
            "expected {} columns, the batch has {}",
            expected.fields().len(),
            actual.fields().len()
        ))
        .into());
    }
    for (e, a) in expected.fields().iter().zip(actual.fields()) {
        if e.name() != a.name() || e.data_type() != a.data_type() {
            return Err(EvalError::SchemaMismatch(format!(
                "expected column '{}' of type {}, found '{}' of type {}",
                e.name(),
                e.data_type(),
                a.name(),
                a.data_type()
            ))
            .into());
        }
    }
    Ok(())
}
