//! Function calls: the built-in operators (comparisons, LIKE, arithmetic, …) on
//! arrow kernels, and the functions implemented row by row.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, BooleanBufferBuilder, Int32Array};
use arrow::compute::kernels::cmp;
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{self as t, DataType};

use crate::error::{EvalError, Result};
use crate::functions::{FuncId, RowImpl, Signature};
use crate::layout::str_value;

use super::decimals::decimal_round;
use super::errors::{ErrorKind, Errors};
use super::values::{comparable, expand, false_rows, same_layout, true_rows, Data, Value};
use super::Interpreter;

impl Interpreter<'_> {
    pub(super) fn call(
        &self,
        sig: &Signature,
        ret: &DataType,
        mut args: Vec<Value>,
    ) -> Result<Value> {
        use FuncId::*;
        let func = sig.func;
        let n = self.len();
        let errors = args.iter_mut().fold(Errors::none(), |e, a| {
            e.union(std::mem::take(&mut a.errors))
        });
        let out = match func {
            Row => {
                let imp = sig.imp.as_ref().ok_or_else(|| {
                    EvalError::Other(format!("{} has no implementation", sig.display()))
                })?;
                self.row(imp, ret, &args)
            }
            Add | Subtract | Multiply | Divide | Modulo => {
                let (l, r) = (&args[0], &args[1]);
                self.arithmetic(func, ret, l, r)?
            }
            Negate | Abs => self.unary_checked(func, &args[0].to_array(n))?,
            DecimalRound(direction) => {
                let places = match args.get(1) {
                    None => Some(0),
                    Some(p) => p
                        .to_array(1)
                        .as_primitive_opt::<t::Int64Type>()
                        .and_then(|a| a.is_valid(0).then(|| a.value(0))),
                };
                decimal_round(&args[0].to_array(n), places, direction, ret)?
            }
            Equal | NotEqual | Less | LessEq | Greater | GreaterEq | IsDistinctFrom
            | IsNotDistinctFrom => {
                let l = comparable(&args[0])?;
                let r = comparable(&args[1])?;
                let (l, r) = same_layout(l, r)?;
                let (l, r) = (l.datum(), r.datum());
                let (l, r) = (l.as_ref(), r.as_ref());
                let result = match func {
                    Equal => cmp::eq(l, r),
                    NotEqual => cmp::neq(l, r),
                    Less => cmp::lt(l, r),
                    LessEq => cmp::lt_eq(l, r),
                    Greater => cmp::gt(l, r),
                    GreaterEq => cmp::gt_eq(l, r),
                    IsDistinctFrom => cmp::distinct(l, r),
                    _ => cmp::not_distinct(l, r),
                }?;
                Value::array(self.broadcast(Arc::new(result), &args))
            }
            IsTrue | IsNotTrue | IsFalse | IsNotFalse => {
                let a = args[0].to_array(n);
                let b = a.as_boolean();
                let values = match func {
                    IsTrue => true_rows(b),
                    IsNotTrue => !&true_rows(b),
                    IsFalse => false_rows(b),
                    _ => !&false_rows(b),
                };
                Value::array(Arc::new(BooleanArray::new(values, None)))
            }
            Like | ILike => {
                let (s, p) = same_layout(args[0].clone(), args[1].clone())?;
                let (s, p) = (s.datum(), p.datum());
                let result = if func == Like {
                    arrow::compute::kernels::comparison::like(s.as_ref(), p.as_ref())?
                } else {
                    arrow::compute::kernels::comparison::ilike(s.as_ref(), p.as_ref())?
                };
                Value::array(self.broadcast(Arc::new(result), &args))
            }
            Length => {
                let a = args[0].to_array(n);
                let lengths: Int32Array = (0..a.len())
                    .map(|i| {
                        a.is_valid(i)
                            .then(|| str_value(&a, i).chars().count() as i32)
                    })
                    .collect();
                Value::array(Arc::new(lengths))
            }
            DateAddDays | DateSubDays | DateDiffDays => {
                let as_days = |v: &Value| -> Result<Value> {
                    Ok(Value::array(cast_with_options(
                        &v.to_array(n),
                        &DataType::Int32,
                        &CastOptions::default(),
                    )?))
                };
                let (l, r) = (as_days(&args[0])?, as_days(&args[1])?);
                let op = if func == DateAddDays { Add } else { Subtract };
                let days = self.arithmetic(op, &DataType::Int32, &l, &r)?;
                if func == DateDiffDays {
                    days
                } else {
                    let dates = cast_with_options(
                        &days.to_array(n),
                        &DataType::Date32,
                        &CastOptions::default(),
                    )?;
                    Value::array(dates).with_errors(days.errors)
                }
            }
        };
        Ok(out.with_errors(errors))
    }

    /// A function implemented row by row, applied to `args` (its failures are the
    /// errors of the result).
    pub(super) fn row(&self, imp: &RowImpl, ret: &DataType, args: &[Value]) -> Value {
        let n = self.len();
        // Literal arguments are computed once, as a literal; a literal beside
        // columns is passed as one value, not repeated for every row (a long
        // string would take its length times the batch's rows).
        let scalar = args.iter().all(|a| a.is_scalar());
        let rows = if scalar { 1 } else { n };
        let arrays: Vec<ArrayRef> = args
            .iter()
            .map(|a| a.to_array(if a.is_scalar() { 1 } else { rows }))
            .collect();
        let (result, failed) = imp.evaluate(&arrays, rows, ret);
        let mut failing = BooleanBufferBuilder::new(n);
        if scalar {
            failing.append_n(n, !failed.is_empty());
        } else {
            failing.append_n(n, false);
            for (row, _) in &failed {
                failing.set_bit(*row, true);
            }
        }
        let errors = Errors::of(ErrorKind::Function(Arc::new(failed)), failing.finish());
        let data = if scalar {
            Data::Scalar(result)
        } else {
            Data::Array(result)
        };
        Value {
            data,
            errors: Errors::none(),
        }
        .with_errors(errors)
    }

    /// A kernel result of length 1 (both inputs scalar) as an array of the batch's length.
    fn broadcast(&self, result: ArrayRef, args: &[Value]) -> ArrayRef {
        if args.iter().all(|a| a.is_scalar()) && self.len() != 1 {
            expand(&result, self.len())
        } else {
            result
        }
    }
}
