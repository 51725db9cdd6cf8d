//! The interpreter: evaluates a [`TypedExpr`] with Arrow compute kernels.
//!
//! It is the reference the JIT is tested against and the "interpreted evaluation"
//! the benchmarks compare with, so it is written to be fast in the usual way: one
//! kernel call per node, literals passed as scalars, and checked arithmetic that
//! takes a per-row slow path only when a kernel reports an error.
//!
//! Errors follow the rule in `docs/semantics.md`: a row raises an error only if its
//! value is used. Each node therefore returns, beside its array, the rows that raised
//! an error (`Errors`); `AND`, `OR`, `CASE` and `COALESCE` drop the errors of rows
//! whose value they do not use, and the first remaining row is reported at the root.

mod arithmetic;
mod calls;
mod casts;
mod checked;
mod control;
mod decimals;
mod errors;
mod values;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, RecordBatch, RecordBatchOptions};
use arrow::compute::kernels::boolean;
use arrow::datatypes::Schema;

use crate::error::{EvalError, Result};
use crate::scalar::ScalarValue;
use crate::struct_fields::{field_array, field_at};
use crate::typed::{TypedExpr, TypedKind};

use errors::Errors;
pub(crate) use values::true_rows;
use values::{Data, Value};

/// Evaluates `expr` over `batch`, returning an array of `batch.num_rows()` values.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Array, AsArray, Float64Array, RecordBatch};
/// use arrow::datatypes::{DataType, Field, Schema};
/// use broadhead::{bind::bind, interpret::interpret, sql::parse_expr};
///
/// let schema = Schema::new(vec![Field::new("x", DataType::Float64, true)]);
/// let batch = RecordBatch::try_new(
///     Arc::new(schema.clone()),
///     vec![Arc::new(Float64Array::from(vec![Some(1.0), None, Some(4.0)]))],
/// ).unwrap();
/// let typed = bind(&parse_expr("x > 2.0").unwrap(), &schema).unwrap();
/// let result = interpret(&typed, &batch).unwrap();
/// let result = result.as_boolean();
/// assert_eq!(result.iter().collect::<Vec<_>>(), vec![Some(false), None, Some(true)]);
/// ```
pub fn interpret(expr: &TypedExpr, batch: &RecordBatch) -> Result<ArrayRef> {
    let interpreter = Interpreter {
        batch,
        shared: RefCell::new(HashMap::new()),
    };
    let value = interpreter.eval(expr)?;
    if let Some(e) = value.errors.first_row() {
        return Err(e.into());
    }
    Ok(value.into_array(batch.num_rows()))
}

/// Evaluates an expression that reads no column, as a single value.
pub fn evaluate_constant(expr: &TypedExpr) -> Result<ScalarValue> {
    let batch = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )?;
    let array = interpret(expr, &batch)?;
    ScalarValue::from_array(array.as_ref(), 0).ok_or_else(|| {
        EvalError::Other(format!("cannot fold a value of type {}", array.data_type())).into()
    })
}

struct Interpreter<'a> {
    batch: &'a RecordBatch,
    /// The values of the enclosing `Let`s, by id.
    shared: RefCell<HashMap<usize, Value>>,
}

impl Interpreter<'_> {
    fn len(&self) -> usize {
        self.batch.num_rows()
    }

    #[recursive::recursive]
    fn eval(&self, expr: &TypedExpr) -> Result<Value> {
        match &expr.kind {
            TypedKind::Column(i) if *i >= self.batch.num_columns() => {
                // A STRUCT field of a batch it was not appended to (the caller's
                // batch, not one `Decoding` made): read from its STRUCT column.
                let schema = self.batch.schema();
                let field = field_at(&schema, *i).ok_or_else(|| {
                    crate::Error::from(arrow::error::ArrowError::SchemaError(format!(
                        "the batch has no column {i}: it has {}",
                        self.batch.num_columns()
                    )))
                })?;
                let column = field_array(self.batch.columns(), &field);
                let column = crate::decode::widened_decimal(&column).unwrap_or(column);
                Ok(Value::array(column))
            }
            TypedKind::Column(i) => {
                let column = self.batch.column(*i);
                // A DECIMAL stored in 32 or 64 bits, computed on as `Decimal128`.
                let column =
                    crate::decode::widened_decimal(column).unwrap_or_else(|| column.clone());
                Ok(Value::array(column))
            }
            TypedKind::Literal(v) => Ok(Value {
                data: Data::Scalar(v.to_array(1)),
                errors: Errors::none(),
            }),
            TypedKind::Call { sig, args } => {
                let args = args
                    .iter()
                    .map(|a| self.eval(a))
                    .collect::<Result<Vec<_>>>()?;
                self.call(sig, &expr.data_type, args)
            }
            TypedKind::And(children) => self.logic(children, true),
            TypedKind::Or(children) => self.logic(children, false),
            TypedKind::Not(x) => {
                let x = self.eval(x)?;
                let a = x.to_array(self.len());
                let result = boolean::not(a.as_boolean())?;
                Ok(Value::array(Arc::new(result)).with_errors(x.errors))
            }
            TypedKind::IsNull { expr, negated } => {
                let x = self.eval(expr)?;
                let a = x.to_array(self.len());
                let result = if *negated {
                    boolean::is_not_null(&a)?
                } else {
                    boolean::is_null(&a)?
                };
                Ok(Value::array(Arc::new(result)).with_errors(x.errors))
            }
            TypedKind::Cast(x) => {
                let v = self.eval(x)?;
                self.cast(v, &expr.data_type)
            }
            TypedKind::TryCast(x) => {
                let v = self.eval(x)?;
                self.try_cast(v, &expr.data_type)
            }
            TypedKind::Case {
                branches,
                else_expr,
            } => self.case(branches, else_expr, &expr.data_type),
            TypedKind::Coalesce(args) => self.coalesce(args, &expr.data_type),
            TypedKind::InList {
                expr,
                list,
                negated,
            } => self.in_list(expr, list, *negated),
            TypedKind::Let { id, value, body } => {
                // The value's errors surface through the `Ref`s that use it.
                let v = self.eval(value)?;
                let previous = self.shared.borrow_mut().insert(*id, v);
                let result = self.eval(body);
                let mut shared = self.shared.borrow_mut();
                match previous {
                    Some(p) => shared.insert(*id, p),
                    None => shared.remove(id),
                };
                result
            }
            TypedKind::Ref(id) => {
                self.shared.borrow().get(id).cloned().ok_or_else(|| {
                    EvalError::Other(format!("reference ${id} outside its LET")).into()
                })
            }
        }
    }
}
