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

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::BooleanBufferBuilder;
use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Datum, Int32Array, PrimitiveArray, RecordBatch,
    RecordBatchOptions, Scalar,
};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::kernels::{boolean, cmp, numeric, zip::zip};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{self as t, ArrowPrimitiveType, DataType, Schema};

use crate::error::{Error, EvalError, Result};
use crate::functions::{cast, FuncId, RowImpl, Signature};
use crate::layout::{is_string, str_value};
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::{is_float, is_integer, is_time, sql_type_name, time_unit, units_per_second};

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

/// What kind of error a row raised.
#[derive(Debug, Clone, PartialEq)]
enum ErrorKind {
    DivisionByZero,
    Overflow(String),
    /// A function's failures: the rows, ascending, and why (for a function of
    /// literals, one entry for row 0 that stands for every row).
    Function(Arc<Vec<(usize, String)>>),
}

/// The rows that raised errors, by kind (usually none).
#[derive(Debug, Clone, Default)]
struct Errors(Vec<(ErrorKind, BooleanBuffer)>);

impl Errors {
    fn none() -> Errors {
        Errors(Vec::new())
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn of(kind: ErrorKind, rows: BooleanBuffer) -> Errors {
        if rows.count_set_bits() == 0 {
            Errors::none()
        } else {
            Errors(vec![(kind, rows)])
        }
    }

    fn union(mut self, other: Errors) -> Errors {
        self.0.extend(other.0);
        self
    }

    /// All error rows, whatever their kind.
    fn any(&self, len: usize) -> BooleanBuffer {
        self.0
            .iter()
            .fold(BooleanBuffer::new_unset(len), |acc, (_, m)| &acc | m)
    }

    /// Keeps only the errors of rows in `keep`.
    fn restrict(self, keep: &BooleanBuffer) -> Errors {
        Errors(
            self.0
                .into_iter()
                .map(|(k, m)| (k, &m & keep))
                .filter(|(_, m)| m.count_set_bits() > 0)
                .collect(),
        )
    }

    fn first_row(&self) -> Option<EvalError> {
        self.0
            .iter()
            .filter_map(|(k, m)| m.set_indices().next().map(|row| (row, k)))
            .min_by_key(|(row, _)| *row)
            .map(|(row, kind)| match kind {
                ErrorKind::DivisionByZero => EvalError::DivisionByZero { row },
                ErrorKind::Overflow(what) => EvalError::Overflow {
                    what: what.clone(),
                    row,
                },
                ErrorKind::Function(failed) => {
                    // The entry of the row, or (for a function of literals, which
                    // fails on every row) the one entry before it.
                    let i = failed.partition_point(|(r, _)| *r <= row);
                    EvalError::Function {
                        message: failed
                            .get(i.saturating_sub(1))
                            .map_or_else(String::new, |(_, m)| m.clone()),
                        row,
                    }
                }
            })
    }
}

/// A node's result: an array (or a scalar for literals) and the rows that errored.
#[derive(Clone)]
struct Value {
    data: Data,
    errors: Errors,
}

#[derive(Clone)]
enum Data {
    Array(ArrayRef),
    Scalar(ArrayRef),
}

impl Value {
    fn array(array: ArrayRef) -> Value {
        Value {
            data: Data::Array(array),
            errors: Errors::none(),
        }
    }

    fn with_errors(mut self, errors: Errors) -> Value {
        self.errors = self.errors.union(errors);
        self
    }

    fn into_array(self, len: usize) -> ArrayRef {
        match self.data {
            Data::Array(a) => a,
            Data::Scalar(s) => expand(&s, len),
        }
    }

    fn to_array(&self, len: usize) -> ArrayRef {
        match &self.data {
            Data::Array(a) => a.clone(),
            Data::Scalar(s) => expand(s, len),
        }
    }

    fn datum(&self) -> Box<dyn Datum + '_> {
        match &self.data {
            Data::Array(a) => Box::new(a.clone()),
            Data::Scalar(s) => Box::new(Scalar::new(s.clone())),
        }
    }

    fn data_type(&self) -> DataType {
        match &self.data {
            Data::Array(a) | Data::Scalar(a) => a.data_type().clone(),
        }
    }

    fn is_scalar(&self) -> bool {
        matches!(self.data, Data::Scalar(_))
    }
}

/// `a` labelled with the time zone of `ty` when both are timestamps of one unit in
/// different zones (the values, UTC instants, are kept); otherwise `a` itself.
fn with_zone_of(a: ArrayRef, ty: &DataType) -> ArrayRef {
    use arrow::array::AsArray;
    use t::TimeUnit::*;
    let (DataType::Timestamp(unit, zone), DataType::Timestamp(own, own_zone)) = (ty, a.data_type())
    else {
        return a;
    };
    if unit != own || zone == own_zone {
        return a;
    }
    let zone = zone.clone();
    match unit {
        Second => Arc::new(
            a.as_primitive::<t::TimestampSecondType>()
                .clone()
                .with_timezone_opt(zone),
        ),
        Millisecond => Arc::new(
            a.as_primitive::<t::TimestampMillisecondType>()
                .clone()
                .with_timezone_opt(zone),
        ),
        Microsecond => Arc::new(
            a.as_primitive::<t::TimestampMicrosecondType>()
                .clone()
                .with_timezone_opt(zone),
        ),
        Nanosecond => Arc::new(
            a.as_primitive::<t::TimestampNanosecondType>()
                .clone()
                .with_timezone_opt(zone),
        ),
    }
}

fn expand(scalar: &ArrayRef, len: usize) -> ArrayRef {
    match ScalarValue::from_array(scalar.as_ref(), 0) {
        Some(v) => v.to_array(len),
        None => arrow::array::new_null_array(scalar.data_type(), len),
    }
}

/// TRUE rows (NULL counts as not TRUE), as a bitmap.
pub(crate) fn true_rows(b: &BooleanArray) -> BooleanBuffer {
    match b.nulls() {
        Some(n) => b.values() & n.inner(),
        None => b.values().clone(),
    }
}

/// FALSE rows, as a bitmap.
fn false_rows(b: &BooleanArray) -> BooleanBuffer {
    match b.nulls() {
        Some(n) => &!b.values() & n.inner(),
        None => !b.values(),
    }
}

fn valid_rows(a: &dyn Array) -> BooleanBuffer {
    match a.logical_nulls() {
        Some(n) => n.inner().clone(),
        None => BooleanBuffer::new_set(a.len()),
    }
}

fn overflow(what: &str, t: &DataType) -> ErrorKind {
    ErrorKind::Overflow(format!("{} {what}", sql_type_name(t)))
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

    /// Kleene AND / OR, dropping errors in rows another child decides.
    fn logic(&self, children: &[TypedExpr], is_and: bool) -> Result<Value> {
        let n = self.len();
        let mut result: Option<BooleanArray> = None;
        let mut errors = Errors::none();
        let mut deciding = BooleanBuffer::new_unset(n);
        let mut parts = Vec::with_capacity(children.len());
        for child in children {
            let v = self.eval(child)?;
            let a = v.to_array(n);
            let b = a.as_boolean().clone();
            result = Some(match result {
                None => b.clone(),
                Some(r) if is_and => boolean::and_kleene(&r, &b)?,
                Some(r) => boolean::or_kleene(&r, &b)?,
            });
            parts.push((b, v.errors));
        }
        if parts.iter().any(|(_, e)| !e.is_empty()) {
            for (b, e) in &parts {
                let decides = if is_and { false_rows(b) } else { true_rows(b) };
                deciding = &deciding | &(&decides & &!&e.any(n));
            }
            for (_, e) in parts {
                errors = errors.union(e);
            }
            errors = errors.restrict(&!&deciding);
        }
        let result = result.expect("AND/OR has children");
        Ok(Value::array(Arc::new(result)).with_errors(errors))
    }

    /// `x` evaluated and labelled with the time zone of `ty`: the binder lets timestamps
    /// of one unit meet whatever their zones (the values are UTC instants either way),
    /// but arrow's `zip` wants one data type.
    fn eval_as(&self, x: &TypedExpr, ty: &DataType) -> Result<Value> {
        let mut v = self.eval(x)?;
        v.data = match v.data {
            Data::Array(a) => Data::Array(in_layout(with_zone_of(a, ty), ty)?),
            Data::Scalar(s) => Data::Scalar(with_zone_of(s, ty)),
        };
        Ok(v)
    }

    fn case(
        &self,
        branches: &[(TypedExpr, TypedExpr)],
        else_expr: &TypedExpr,
        ty: &DataType,
    ) -> Result<Value> {
        let n = self.len();
        let mut remaining = BooleanBuffer::new_set(n);
        let mut errors = Errors::none();
        let mut taken = Vec::with_capacity(branches.len());
        for (condition, value) in branches {
            let c = self.eval(condition)?;
            let c_array = c.to_array(n);
            let c_errors = c.errors.any(n);
            errors = errors.union(c.errors.restrict(&remaining));
            let take = &(&remaining & &true_rows(c_array.as_boolean())) & &!&c_errors;
            let v = self.eval_as(value, ty)?;
            errors = errors.union(v.errors.restrict(&take));
            remaining = &(&remaining & &!&take) & &!&c_errors;
            taken.push((take, v.data));
        }
        let e = self.eval_as(else_expr, ty)?;
        errors = errors.union(e.errors.restrict(&remaining));
        let mut result = Value {
            data: e.data,
            errors: Errors::none(),
        }
        .to_array(n);
        for (take, data) in taken.into_iter().rev() {
            let v = Value {
                data,
                errors: Errors::none(),
            };
            result = zip(&BooleanArray::new(take, None), &*v.datum(), &result)?;
        }
        Ok(Value::array(result).with_errors(errors))
    }

    fn coalesce(&self, args: &[TypedExpr], ty: &DataType) -> Result<Value> {
        let n = self.len();
        let mut remaining = BooleanBuffer::new_set(n);
        let mut errors = Errors::none();
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            let v = self.eval_as(arg, ty)?;
            let a = v.to_array(n);
            let any = v.errors.any(n);
            errors = errors.union(v.errors.restrict(&remaining));
            remaining = &remaining & &!&(&valid_rows(&a) | &any);
            values.push(a);
        }
        let mut result = values.pop().expect("coalesce has arguments");
        for a in values.into_iter().rev() {
            result = zip(&BooleanArray::new(valid_rows(&a), None), &a, &result)?;
        }
        Ok(Value::array(result).with_errors(errors))
    }

    fn in_list(&self, probe: &TypedExpr, list: &[ScalarValue], negated: bool) -> Result<Value> {
        let n = self.len();
        let x = self.eval(probe)?;
        let xa = normalize_floats(&x.to_array(n))?;
        let layout = xa.data_type().clone();
        let mut found = BooleanBuffer::new_unset(n);
        let mut has_null = false;
        for v in list {
            if v.is_null() {
                has_null = true;
                continue;
            }
            let s = normalize_floats(&v.to_array(1))?;
            let s = in_layout(s, &layout)?;
            let eq = cmp::eq(&xa, &Scalar::new(s))?;
            found = &found | &true_rows(&eq);
        }
        let valid = valid_rows(&xa);
        let known = if has_null { &valid & &found } else { valid };
        let values = if negated { !&found } else { found };
        let result = BooleanArray::new(values, Some(NullBuffer::new(known)));
        Ok(Value::array(Arc::new(result)).with_errors(x.errors))
    }

    fn call(&self, sig: &Signature, ret: &DataType, mut args: Vec<Value>) -> Result<Value> {
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
    fn row(&self, imp: &RowImpl, ret: &DataType, args: &[Value]) -> Value {
        let n = self.len();
        // Literal arguments are computed once, as a literal.
        let scalar = args.iter().all(|a| a.is_scalar());
        let rows = if scalar { 1 } else { n };
        let arrays: Vec<ArrayRef> = args.iter().map(|a| a.to_array(rows)).collect();
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

    fn arithmetic(&self, func: FuncId, t: &DataType, l: &Value, r: &Value) -> Result<Value> {
        let n = self.len();
        if crate::types::is_decimal(t) {
            let (la, ra) = (l.to_array(n), r.to_array(n));
            return decimal_binary(func, t, &la, &ra);
        }
        let float = is_float(t);
        // Fast path: arrow's checked kernels; floats only need a zero-divisor check.
        let fast = if float && matches!(func, FuncId::Divide | FuncId::Modulo) {
            // -0.0 is a zero divisor too: compare normalized values.
            let divisor = comparable(r)?;
            let zero_value = ScalarValue::Float64(0.0)
                .convert_exact(t)
                .unwrap_or(ScalarValue::Float64(0.0));
            let zero = cmp::eq(&*divisor.datum(), &Scalar::new(zero_value.to_array(1)))?;
            if true_rows(&zero).count_set_bits() == 0 {
                Some(if func == FuncId::Divide {
                    numeric::div(&*l.datum(), &*r.datum())?
                } else {
                    numeric::rem(&*l.datum(), &*r.datum())?
                })
            } else {
                None
            }
        } else {
            let (ld, rd) = (l.datum(), r.datum());
            let result = match func {
                FuncId::Add => numeric::add(ld.as_ref(), rd.as_ref()),
                FuncId::Subtract => numeric::sub(ld.as_ref(), rd.as_ref()),
                FuncId::Multiply => numeric::mul(ld.as_ref(), rd.as_ref()),
                FuncId::Divide => numeric::div(ld.as_ref(), rd.as_ref()),
                _ => numeric::rem(ld.as_ref(), rd.as_ref()),
            };
            result.ok()
        };
        if let Some(result) = fast {
            let all_scalar = l.is_scalar() && r.is_scalar();
            let result = if all_scalar && n != 1 {
                expand(&result, n)
            } else {
                result
            };
            return Ok(Value::array(result));
        }
        // Slow path: per row, recording which rows fail and why.
        let (la, ra) = (l.to_array(n), r.to_array(n));
        checked_binary(func, t, &la, &ra)
    }

    fn unary_checked(&self, func: FuncId, a: &ArrayRef) -> Result<Value> {
        macro_rules! signed {
            ($T:ty) => {{
                let p = a.as_primitive::<$T>();
                let f = if func == FuncId::Negate {
                    |v: <$T as ArrowPrimitiveType>::Native| v.checked_neg()
                } else {
                    |v: <$T as ArrowPrimitiveType>::Native| v.checked_abs()
                };
                checked_map(
                    p,
                    f,
                    if func == FuncId::Negate {
                        "negation"
                    } else {
                        "abs"
                    },
                )
            }};
        }
        macro_rules! float {
            ($T:ty) => {{
                let p = a.as_primitive::<$T>();
                let r: PrimitiveArray<$T> = if func == FuncId::Negate {
                    p.unary(|v| -v)
                } else {
                    p.unary(|v| v.abs())
                };
                Ok(Value::array(Arc::new(r)))
            }};
        }
        match a.data_type() {
            DataType::Int8 => signed!(t::Int8Type),
            DataType::Int16 => signed!(t::Int16Type),
            DataType::Int32 => signed!(t::Int32Type),
            DataType::Int64 => signed!(t::Int64Type),
            DataType::Float32 => float!(t::Float32Type),
            DataType::Float64 => float!(t::Float64Type),
            // abs of an unsigned integer is the value itself
            other if is_integer(other) => Ok(Value::array(a.clone())),
            DataType::Decimal128(..) => {
                let p = a.as_primitive::<t::Decimal128Type>();
                decimal_unary(func, p)
            }
            DataType::Decimal256(..) => {
                let p = a.as_primitive::<t::Decimal256Type>();
                decimal_unary(func, p)
            }
            other => Err(EvalError::Other(format!("no {func:?} for {other}")).into()),
        }
    }

    fn cast(&self, v: Value, to: &DataType) -> Result<Value> {
        let n = self.len();
        // To and from VARCHAR: the row functions the JIT calls too (they read strings
        // of any layout).
        let from = logical(v.data_type());
        if let Some(imp) = cast::cast_impl(&from, to) {
            let errors = v.errors.clone();
            return Ok(self.row(&imp, to, &[v]).with_errors(errors));
        }
        let a = v.to_array(n);
        let value = match (&from, to) {
            (DataType::Date32, DataType::Timestamp(unit, tz)) => {
                let days = cast_with_options(&a, &DataType::Int64, &CastOptions::default())?;
                let per_day = 86_400 * units_per_second(*unit);
                let scaled = scale_checked(&days, per_day, to)?;
                let out =
                    reinterpret_i64(&scaled.to_array(n), DataType::Timestamp(*unit, tz.clone()))?;
                Value::array(out).with_errors(scaled.errors)
            }
            (DataType::Timestamp(_, _), DataType::Date32)
            | (DataType::Date64, DataType::Date32) => {
                let unit = match &from {
                    DataType::Timestamp(unit, _) => *unit,
                    _ => t::TimeUnit::Millisecond,
                };
                let per_day = 86_400 * units_per_second(unit);
                let raw = reinterpret_i64(&a, DataType::Int64)?;
                let days: PrimitiveArray<t::Int64Type> = raw
                    .as_primitive::<t::Int64Type>()
                    .unary(|v| v.div_euclid(per_day));
                let days: ArrayRef = Arc::new(days);
                self.checked_cast(&days, &DataType::Date32)?
            }
            (DataType::Timestamp(from_unit, _), DataType::Timestamp(to_unit, tz)) => {
                let (f, t) = (units_per_second(*from_unit), units_per_second(*to_unit));
                let raw = reinterpret_i64(&a, DataType::Int64)?;
                let target = DataType::Timestamp(*to_unit, tz.clone());
                if t >= f {
                    let scaled = scale_checked(&raw, t / f, to)?;
                    let out = reinterpret_i64(&scaled.to_array(n), target)?;
                    Value::array(out).with_errors(scaled.errors)
                } else {
                    let div = f / t;
                    let p: PrimitiveArray<t::Int64Type> = raw
                        .as_primitive::<t::Int64Type>()
                        .unary(|v| v.div_euclid(div));
                    Value::array(reinterpret_i64(&(Arc::new(p) as ArrayRef), target)?)
                }
            }
            (f, to_time)
                if is_time(to_time) && (is_time(f) || matches!(f, DataType::Timestamp(..))) =>
            {
                self.to_time(&a, to)?
            }
            (f, i) if is_float(f) && is_integer(i) => {
                // PostgreSQL rounds half to even when converting floats to integers.
                let rounded: ArrayRef = match f {
                    DataType::Float32 => Arc::new(
                        a.as_primitive::<t::Float32Type>()
                            .unary::<_, t::Float32Type>(|v| v.round_ties_even()),
                    ),
                    _ => Arc::new(
                        a.as_primitive::<t::Float64Type>()
                            .unary::<_, t::Float64Type>(|v| v.round_ties_even()),
                    ),
                };
                self.checked_cast(&rounded, to)?
            }
            _ => self.checked_cast(&a, to)?,
        };
        Ok(value.with_errors(v.errors))
    }

    /// A TIME or TIMESTAMP array as a TIME of type `to`: a timestamp's time of day,
    /// or a time in another unit (made finer checked, coarser rounding toward the
    /// past), narrowed (checked) to 32 bits for seconds and milliseconds.
    fn to_time(&self, a: &ArrayRef, to: &DataType) -> Result<Value> {
        let n = self.len();
        let (unit, raw) = match a.data_type() {
            DataType::Timestamp(unit, _) => {
                let per_day = 86_400 * units_per_second(*unit);
                let raw = reinterpret_i64(a, DataType::Int64)?;
                let of_day: PrimitiveArray<t::Int64Type> = raw
                    .as_primitive::<t::Int64Type>()
                    .unary(|v| v.rem_euclid(per_day));
                (*unit, Arc::new(of_day) as ArrayRef)
            }
            DataType::Time32(unit) => {
                let narrow = reinterpret_i64(a, DataType::Int32)?;
                (
                    *unit,
                    cast_with_options(&narrow, &DataType::Int64, &CastOptions::default())?,
                )
            }
            DataType::Time64(unit) => (*unit, reinterpret_i64(a, DataType::Int64)?),
            other => return Err(EvalError::Other(format!("no TIME from {other}")).into()),
        };
        let target = time_unit(to).unwrap_or(unit);
        let (f, t) = (units_per_second(unit), units_per_second(target));
        let scaled = if t >= f {
            scale_checked(&raw, t / f, to)?
        } else {
            let p: PrimitiveArray<t::Int64Type> = raw
                .as_primitive::<t::Int64Type>()
                .unary(|v| v.div_euclid(f / t));
            Value::array(Arc::new(p))
        };
        let values = scaled.to_array(n);
        let (values, errors) = match to {
            DataType::Time32(_) => {
                let narrow = self.checked_cast(&values, &DataType::Int32)?;
                let errors =
                    rename_overflow(narrow.clone(), &format!("cast to {}", sql_type_name(to)))
                        .errors;
                (narrow.to_array(n), errors)
            }
            _ => (values, Errors::none()),
        };
        Ok(Value::array(reinterpret_i64(&values, to.clone())?)
            .with_errors(scaled.errors)
            .with_errors(errors))
    }

    /// `TRY_CAST`: the cast, with NULL in the rows where it fails; the operand's own
    /// errors are kept.
    fn try_cast(&self, mut v: Value, to: &DataType) -> Result<Value> {
        let operand_errors = std::mem::replace(&mut v.errors, Errors::none());
        // To and from VARCHAR: the row functions the JIT calls too (NULL for a bad
        // string, no error to build).
        if let Some(imp) = cast::try_cast_impl(&logical(v.data_type()), to) {
            return Ok(self.row(&imp, to, &[v]).with_errors(operand_errors));
        }
        let cast = self.cast(v, to)?;
        if cast.errors.is_empty() {
            return Ok(cast.with_errors(operand_errors));
        }
        let failed = cast.errors.any(self.len());
        let out = cast.to_array(self.len());
        let out = arrow::compute::nullif(&out, &BooleanArray::new(failed, None))?;
        Ok(Value::array(out).with_errors(operand_errors))
    }

    /// An arrow cast that fails on overflow; the failing rows are found with a safe
    /// cast (which makes them NULL) and reported.
    fn checked_cast(&self, a: &ArrayRef, to: &DataType) -> Result<Value> {
        let strict = CastOptions {
            safe: false,
            ..Default::default()
        };
        match cast_with_options(a, to, &strict) {
            Ok(out) => Ok(Value::array(out)),
            Err(_) => {
                let out = cast_with_options(a, to, &CastOptions::default())?;
                let failed = &valid_rows(a) & &!&valid_rows(&out);
                let what = format!("cast to {}", sql_type_name(to));
                Ok(Value::array(out).with_errors(Errors::of(ErrorKind::Overflow(what), failed)))
            }
        }
    }
}

/// Makes floats comparable by arrow's total order the SQL way: -0.0 becomes 0.0 and
/// every NaN the positive quiet NaN (so NaN = NaN and NaN sorts above everything).
fn normalize_floats(a: &ArrayRef) -> Result<ArrayRef> {
    fn fix<T: ArrowPrimitiveType>(
        a: &ArrayRef,
        canon: fn(T::Native) -> T::Native,
        needs: fn(T::Native) -> bool,
    ) -> ArrayRef {
        let p = a.as_primitive::<T>();
        if p.values().iter().any(|v| needs(*v)) {
            Arc::new(p.unary::<_, T>(canon))
        } else {
            a.clone()
        }
    }
    Ok(match a.data_type() {
        DataType::Float64 => fix::<t::Float64Type>(
            a,
            |v| if v.is_nan() { f64::NAN } else { v + 0.0 },
            |v| v.is_sign_negative() && (v == 0.0 || v.is_nan()),
        ),
        DataType::Float32 => fix::<t::Float32Type>(
            a,
            |v| if v.is_nan() { f32::NAN } else { v + 0.0 },
            |v| v.is_sign_negative() && (v == 0.0 || v.is_nan()),
        ),
        DataType::Timestamp(unit, Some(_)) => reinterpret_i64(a, DataType::Timestamp(*unit, None))?,
        _ => a.clone(),
    })
}

/// The SQL type of an array's type: VARCHAR (`Utf8`) for strings of any layout,
/// BLOB (`Binary`) for binary values of any layout.
fn logical(t: DataType) -> DataType {
    plain_layout(&t).unwrap_or(t)
}

/// `a` as an array of type `ty` when both are strings, or both BLOBs, of different
/// layouts (a copy); otherwise `a` itself. A value that is a column (`LargeUtf8`,
/// `Utf8View`, `LargeBinary`, `BinaryView`) is read in place everywhere but where
/// arrow needs one layout: `CASE` and `COALESCE` build their (`Utf8`) results, and
/// literals meet a column.
fn in_layout(a: ArrayRef, ty: &DataType) -> Result<ArrayRef> {
    if a.data_type() != ty
        && plain_layout(a.data_type()).is_some_and(|p| plain_layout(ty) == Some(p))
    {
        return Ok(arrow::compute::cast(&a, ty)?);
    }
    Ok(a)
}

/// The `i32`-offsets type of a string (`Utf8`) or BLOB (`Binary`) of any layout.
fn plain_layout(t: &DataType) -> Option<DataType> {
    match t {
        t if is_string(t) => Some(DataType::Utf8),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Some(DataType::Binary),
        _ => None,
    }
}

/// The operands of a comparison or LIKE in one string (or BLOB) layout, as arrow's
/// kernels need: a literal takes the column's layout (one value converted); two
/// columns of different layouts are compared as `Utf8` (`Binary`).
fn same_layout(l: Value, r: Value) -> Result<(Value, Value)> {
    let (lt, rt) = (l.data_type(), r.data_type());
    let Some(plain) =
        plain_layout(&lt).filter(|p| lt != rt && plain_layout(&rt).as_ref() == Some(p))
    else {
        return Ok((l, r));
    };
    let convert = |v: Value, ty: &DataType| -> Result<Value> {
        let data = match v.data {
            Data::Array(a) => Data::Array(in_layout(a, ty)?),
            Data::Scalar(s) => Data::Scalar(in_layout(s, ty)?),
        };
        Ok(Value {
            data,
            errors: v.errors,
        })
    };
    Ok(match (l.is_scalar(), r.is_scalar()) {
        (true, false) => (convert(l, &rt)?, r),
        (false, true) => (l, convert(r, &lt)?),
        _ => (convert(l, &plain)?, convert(r, &plain)?),
    })
}

/// A value ready for arrow's comparison kernels.
fn comparable(v: &Value) -> Result<Value> {
    let data = match &v.data {
        Data::Array(a) => Data::Array(normalize_floats(a)?),
        Data::Scalar(s) => Data::Scalar(normalize_floats(s)?),
    };
    Ok(Value {
        data,
        errors: Errors::none(),
    })
}

fn reinterpret_i64(a: &ArrayRef, to: DataType) -> Result<ArrayRef> {
    let data = a.to_data().into_builder().data_type(to).build()?;
    Ok(arrow::array::make_array(data))
}

fn scale_checked(a: &ArrayRef, factor: i64, to: &DataType) -> Result<Value> {
    let p = a.as_primitive::<t::Int64Type>();
    let what = format!("cast to {}", sql_type_name(to));
    checked_map(p, move |v: i64| v.checked_mul(factor), &what).map(|v| rename_overflow(v, &what))
}

fn rename_overflow(v: Value, what: &str) -> Value {
    let errors = Errors(
        v.errors
            .0
            .into_iter()
            .map(|(k, m)| {
                (
                    if let ErrorKind::Overflow(_) = k {
                        ErrorKind::Overflow(what.to_string())
                    } else {
                        k
                    },
                    m,
                )
            })
            .collect(),
    );
    Value {
        data: v.data,
        errors,
    }
}

/// Applies `f` to every valid value; rows where it returns `None` become NULL and
/// are reported as overflow errors.
fn checked_map<T: ArrowPrimitiveType>(
    p: &PrimitiveArray<T>,
    f: impl Fn(T::Native) -> Option<T::Native>,
    what: &str,
) -> Result<Value> {
    checked_map_as(p, f, what, p.data_type())
}

/// [`checked_map`] into values of type `out` (the same Arrow primitive type, with
/// another precision and scale: a decimal rounded to fewer places).
fn checked_map_as<T: ArrowPrimitiveType>(
    p: &PrimitiveArray<T>,
    f: impl Fn(T::Native) -> Option<T::Native>,
    what: &str,
    out_type: &DataType,
) -> Result<Value> {
    let mut failed = vec![false; p.len()];
    let out: PrimitiveArray<T> = p
        .iter()
        .zip(failed.iter_mut())
        .map(|(v, fail)| {
            v.and_then(|v| {
                let r = f(v);
                *fail = r.is_none();
                r
            })
        })
        .collect();
    let out = out.with_data_type(out_type.clone());
    let kind = overflow(what, out_type);
    let kind = if what.starts_with("cast") {
        ErrorKind::Overflow(what.to_string())
    } else {
        kind
    };
    Ok(Value::array(Arc::new(out)).with_errors(Errors::of(kind, BooleanBuffer::from(failed))))
}

/// The errors of `func` over rows of type `t`: division by zero where `zero` is
/// set, overflow (named by the operation) where `over` is.
fn arithmetic_errors(func: FuncId, t: &DataType, zero: Vec<bool>, over: Vec<bool>) -> Errors {
    let what = match func {
        FuncId::Add => "addition",
        FuncId::Subtract => "subtraction",
        FuncId::Multiply => "multiplication",
        FuncId::Divide => "division",
        _ => "modulo",
    };
    Errors::of(ErrorKind::DivisionByZero, BooleanBuffer::from(zero))
        .union(Errors::of(overflow(what, t), BooleanBuffer::from(over)))
}

/// Binary arithmetic row by row, recording division by zero and overflow per row.
fn checked_binary(func: FuncId, t: &DataType, l: &ArrayRef, r: &ArrayRef) -> Result<Value> {
    macro_rules! run {
        ($T:ty, $int:expr) => {{
            let (l, r) = (l.as_primitive::<$T>(), r.as_primitive::<$T>());
            let n = l.len();
            let mut zero = vec![false; n];
            let mut over = vec![false; n];
            let out: PrimitiveArray<$T> = (0..n)
                .map(|i| {
                    if l.is_null(i) || r.is_null(i) {
                        return None;
                    }
                    let (a, b) = (l.value(i), r.value(i));
                    let divides = matches!(func, FuncId::Divide | FuncId::Modulo);
                    #[allow(clippy::float_cmp)]
                    if divides && b == <$T as ArrowPrimitiveType>::Native::default() {
                        zero[i] = true;
                        return None;
                    }
                    let v = arith::<$T>(func, a, b, $int);
                    over[i] = v.is_none();
                    v
                })
                .collect();
            Ok(Value::array(Arc::new(out)).with_errors(arithmetic_errors(func, t, zero, over)))
        }};
    }
    match t {
        DataType::Int8 => run!(t::Int8Type, true),
        DataType::Int16 => run!(t::Int16Type, true),
        DataType::Int32 => run!(t::Int32Type, true),
        DataType::Int64 => run!(t::Int64Type, true),
        DataType::UInt8 => run!(t::UInt8Type, true),
        DataType::UInt16 => run!(t::UInt16Type, true),
        DataType::UInt32 => run!(t::UInt32Type, true),
        DataType::UInt64 => run!(t::UInt64Type, true),
        DataType::Float32 => run!(t::Float32Type, false),
        DataType::Float64 => run!(t::Float64Type, false),
        other => Err(Error::Eval(EvalError::Other(format!(
            "no arithmetic for {other}"
        )))),
    }
}

/// `-x` or `abs(x)` of decimals (exact: a decimal's range is symmetric; a value
/// outside its precision, which Arrow allows, may overflow).
fn decimal_unary<T>(func: FuncId, p: &PrimitiveArray<T>) -> Result<Value>
where
    T: ArrowPrimitiveType,
    T::Native: crate::decimal::DecimalInt,
{
    use arrow::datatypes::ArrowNativeTypeOp;
    let what = if func == FuncId::Negate {
        "negation"
    } else {
        "abs"
    };
    checked_map(
        p,
        move |v: T::Native| {
            if func == FuncId::Negate || v < T::Native::ZERO {
                v.neg_checked().ok()
            } else {
                Some(v)
            }
        },
        what,
    )
}

/// `round`, `trunc`, `floor` or `ceil` of decimals to `places` decimal places (the
/// result of type `ret`, which [`crate::decimal::rounded_type`] gave; `None`: a NULL
/// number of places, so NULL); a result beyond `ret`'s precision is an overflow error.
fn decimal_round(
    x: &ArrayRef,
    places: Option<i64>,
    direction: crate::decimal::Rounding,
    ret: &DataType,
) -> Result<Value> {
    fn run<T>(
        x: &ArrayRef,
        n: i64,
        direction: crate::decimal::Rounding,
        ret: &DataType,
    ) -> Result<Value>
    where
        T: ArrowPrimitiveType,
        T::Native: crate::decimal::DecimalInt,
    {
        use crate::decimal::{fits, round_value};
        let p = x.as_primitive::<T>();
        let scale = crate::types::decimal_parts(p.data_type()).map_or(0, |(_, s)| s);
        let precision = crate::types::decimal_parts(ret).map_or(0, |(p, _)| p);
        let round = |v| round_value(v, scale, n, direction).filter(|r| fits(*r, precision));
        checked_map_as(p, round, "rounding", ret)
    }
    let Some(n) = places else {
        return Ok(Value::array(arrow::array::new_null_array(ret, x.len())));
    };
    match x.data_type() {
        DataType::Decimal256(..) => run::<t::Decimal256Type>(x, n, direction, ret),
        _ => run::<t::Decimal128Type>(x, n, direction, ret),
    }
}

/// Decimal `+ - * %` row by row, in the result type `t` (the binder gave `+ - %`
/// operands of type `t`; `*` multiplies the unscaled values, whose scales add up):
/// a result beyond `t`'s precision is an overflow error, `%` by zero a division by zero.
fn decimal_binary(func: FuncId, t: &DataType, l: &ArrayRef, r: &ArrayRef) -> Result<Value> {
    fn run<T>(func: FuncId, t: &DataType, l: &ArrayRef, r: &ArrayRef) -> Result<Value>
    where
        T: ArrowPrimitiveType,
        T::Native: crate::decimal::DecimalInt,
    {
        use arrow::datatypes::ArrowNativeTypeOp;
        let precision = crate::types::decimal_parts(t).map_or(0, |(p, _)| p);
        let (l, r) = (l.as_primitive::<T>(), r.as_primitive::<T>());
        let n = l.len();
        let mut zero = vec![false; n];
        let mut over = vec![false; n];
        let out: PrimitiveArray<T> = (0..n)
            .map(|i| {
                if l.is_null(i) || r.is_null(i) {
                    return None;
                }
                let (a, b) = (l.value(i), r.value(i));
                let v = match func {
                    FuncId::Add => a.add_checked(b).ok(),
                    FuncId::Subtract => a.sub_checked(b).ok(),
                    FuncId::Multiply => a.mul_checked(b).ok(),
                    _ if b.is_zero() => {
                        zero[i] = true;
                        return None;
                    }
                    _ => Some(a.mod_wrapping(b)),
                };
                let v = v.filter(|v| crate::decimal::fits(*v, precision));
                over[i] = v.is_none();
                v
            })
            .collect();
        let errors = arithmetic_errors(func, t, zero, over);
        Ok(Value::array(Arc::new(out.with_data_type(t.clone()))).with_errors(errors))
    }
    match l.data_type() {
        DataType::Decimal256(..) => run::<t::Decimal256Type>(func, t, l, r),
        _ if matches!(t, DataType::Decimal256(..)) => {
            // Decimal128 operands of a Decimal256 result: widened first.
            let (l, r) = (decimal_as_256(l)?, decimal_as_256(r)?);
            run::<t::Decimal256Type>(func, t, &l, &r)
        }
        _ => run::<t::Decimal128Type>(func, t, l, r),
    }
}

/// A `Decimal128` array's unscaled values as a `Decimal256` array (same scale).
fn decimal_as_256(a: &ArrayRef) -> Result<ArrayRef> {
    let p = a.as_primitive::<t::Decimal128Type>();
    let wide: PrimitiveArray<t::Decimal256Type> = p.unary(arrow::datatypes::i256::from_i128);
    let s = crate::types::decimal_parts(a.data_type()).map_or(0, |(_, s)| s);
    Ok(Arc::new(wide.with_data_type(DataType::Decimal256(76, s))))
}

/// One checked arithmetic operation (the divisor is known to be non-zero).
fn arith<T: ArrowPrimitiveType>(
    func: FuncId,
    a: T::Native,
    b: T::Native,
    _int: bool,
) -> Option<T::Native>
where
    T::Native: arrow::datatypes::ArrowNativeTypeOp,
{
    use arrow::datatypes::ArrowNativeTypeOp;
    match func {
        FuncId::Add => a.add_checked(b).ok(),
        FuncId::Subtract => a.sub_checked(b).ok(),
        FuncId::Multiply => a.mul_checked(b).ok(),
        FuncId::Divide => a.div_checked(b).ok(),
        // MIN % -1 is 0 (as in PostgreSQL and arrow's rem kernel), not an overflow.
        _ => Some(a.mod_wrapping(b)),
    }
}
