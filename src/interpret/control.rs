//! Logic and choice: Kleene `AND` / `OR`, `CASE` and `COALESCE`, which drop the
//! errors of rows whose value they do not use, and `IN` lists.

use std::sync::Arc;

use arrow::array::{AsArray, BooleanArray, Scalar};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::kernels::{boolean, cmp, zip::zip};
use arrow::datatypes::DataType;

use crate::error::Result;
use crate::scalar::ScalarValue;
use crate::typed::TypedExpr;

use super::errors::Errors;
use super::values::{
    false_rows, in_layout, normalize_floats, true_rows, valid_rows, with_zone_of, Data, Value,
};
use super::Interpreter;

impl Interpreter<'_> {
    /// Kleene AND / OR, dropping errors in rows another child decides.
    pub(super) fn logic(&self, children: &[TypedExpr], is_and: bool) -> Result<Value> {
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

    pub(super) fn case(
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

    pub(super) fn coalesce(&self, args: &[TypedExpr], ty: &DataType) -> Result<Value> {
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

    pub(super) fn in_list(
        &self,
        probe: &TypedExpr,
        list: &[ScalarValue],
        negated: bool,
    ) -> Result<Value> {
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
}
