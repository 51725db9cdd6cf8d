//! DataFusion physical expressions → Broadhead [`Expr`]s.
//!
//! A [`Translator`] walks a DataFusion expression from its root and builds the
//! Broadhead expression of every node it can translate with the same meaning (see the
//! README's table). A sub-tree it cannot translate becomes an *input*: DataFusion
//! evaluates it first and the kernel reads it as a column. Inputs are only taken from
//! places DataFusion itself evaluates for every row (not the right side of `AND`/`OR`,
//! not a `CASE` branch), so hoisting one never raises an error DataFusion would not.
//! Every translated node is bound by Broadhead's binder and must have DataFusion's
//! type (a string or binary layout aside), else it is left to DataFusion.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use broadhead::{Expr, ExprKind};
use datafusion::common::ScalarValue as DfScalar;
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{
    BinaryExpr, CaseExpr, CastExpr, Column, InListExpr, IsNotNullExpr, IsNullExpr, LikeExpr,
    Literal, NegativeExpr, NotExpr, TryCastExpr,
};
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};

use crate::Semantics;

/// The result of translating one DataFusion expression.
pub(crate) struct Translation {
    /// The Broadhead expression, over the columns of `fields`.
    pub expr: Expr,
    /// The inputs (DataFusion expressions, as they were in the original tree) the
    /// kernel reads as columns, in the order of `fields`.
    pub inputs: Vec<Arc<dyn PhysicalExpr>>,
    /// The schema of the kernel's input batch: one field per input.
    pub fields: Vec<Field>,
    /// Inputs whose float values must hold no NaN and no `-0.0` for the kernel's
    /// comparisons to agree with Arrow's total order (DataFusion semantics).
    pub guarded: Vec<usize>,
    /// How many operator nodes (not columns or literals) were translated.
    pub operators: usize,
}

/// Translates `expr` (over `schema`) when its root can be translated and at least
/// one operator is; `None` otherwise.
pub(crate) fn translate(
    expr: &Arc<dyn PhysicalExpr>,
    schema: &Schema,
    semantics: Semantics,
) -> Option<Translation> {
    let mut t = Translator {
        schema,
        semantics,
        inputs: vec![],
        fields: vec![],
        guarded: vec![],
        operators: 0,
    };
    let out = t.node(expr, false)?;
    if t.operators == 0 || t.inputs.is_empty() {
        return None;
    }
    Some(Translation {
        expr: out,
        inputs: t.inputs,
        fields: t.fields,
        guarded: t.guarded,
        operators: t.operators,
    })
}

struct Translator<'a> {
    schema: &'a Schema,
    semantics: Semantics,
    inputs: Vec<Arc<dyn PhysicalExpr>>,
    fields: Vec<Field>,
    guarded: Vec<usize>,
    operators: usize,
}

/// What the translator has taken so far, to undo a node that fails half-way.
struct Mark {
    inputs: usize,
    guarded: usize,
    operators: usize,
}

impl Translator<'_> {
    fn mark(&self) -> Mark {
        Mark {
            inputs: self.inputs.len(),
            guarded: self.guarded.len(),
            operators: self.operators,
        }
    }

    fn undo(&mut self, mark: Mark) {
        self.inputs.truncate(mark.inputs);
        self.fields.truncate(mark.inputs);
        self.guarded.truncate(mark.guarded);
        self.operators = mark.operators;
    }

    fn lenient(&self) -> bool {
        self.semantics == Semantics::Broadhead
    }

    /// The translation of `e` as an operand: the node itself, else (where DataFusion
    /// evaluates it for every row anyway, or it is a column) an input.
    fn operand(&mut self, e: &Arc<dyn PhysicalExpr>, conditional: bool) -> Option<Expr> {
        if let Some(x) = self.node(e, conditional) {
            return Some(x);
        }
        if conditional && !e.is::<Column>() {
            return None;
        }
        self.input(e)
    }

    /// `e` as an input column (the same input for equal expressions).
    fn input(&mut self, e: &Arc<dyn PhysicalExpr>) -> Option<Expr> {
        if let Some(i) = self.inputs.iter().position(|x| x.as_ref() == e.as_ref()) {
            return Some(broadhead::col(self.fields[i].name().clone()));
        }
        let field = e.return_field(self.schema).ok()?;
        let base = match e.downcast_ref::<Column>() {
            Some(c) => c.name().to_string(),
            None => format!("_input{}", self.inputs.len()),
        };
        let name = if self.fields.iter().any(|f| f.name() == &base) {
            format!("{base}_{}", self.inputs.len())
        } else {
            base
        };
        self.inputs.push(Arc::clone(e));
        self.fields.push(Field::new(
            name.clone(),
            field.data_type().clone(),
            field.is_nullable(),
        ));
        Some(broadhead::col(name))
    }

    /// An operand that must be a leaf for Broadhead's float order to agree with
    /// Arrow's: a literal that is neither NaN nor `-0.0`, or an input, whose values
    /// are checked before each batch.
    fn float_leaf(&mut self, e: &Arc<dyn PhysicalExpr>, conditional: bool) -> Option<Expr> {
        if let Some(l) = e.downcast_ref::<Literal>() {
            let ordinary = match l.value() {
                DfScalar::Float64(Some(v)) => !(v.is_nan() || v.to_bits() == (-0.0f64).to_bits()),
                DfScalar::Float32(Some(v)) => !(v.is_nan() || v.to_bits() == (-0.0f32).to_bits()),
                _ => true,
            };
            return if ordinary { literal(l.value()) } else { None };
        }
        if conditional && !e.is::<Column>() {
            return None;
        }
        let x = self.input(e)?;
        let i = self.inputs.iter().position(|x| x.as_ref() == e.as_ref())?;
        if !self.guarded.contains(&i) {
            self.guarded.push(i);
        }
        Some(x)
    }

    /// The translation of the node `e` itself (with its operands), of DataFusion's
    /// type (see [`Translator::as_datafusion_type`]); `None` leaves the node to
    /// DataFusion.
    fn node(&mut self, e: &Arc<dyn PhysicalExpr>, conditional: bool) -> Option<Expr> {
        let mark = self.mark();
        let out = self
            .node_unchecked(e, conditional)
            .and_then(|x| self.as_datafusion_type(x, e));
        if out.is_none() {
            self.undo(mark);
        }
        out
    }

    fn node_unchecked(&mut self, e: &Arc<dyn PhysicalExpr>, conditional: bool) -> Option<Expr> {
        if e.is::<Column>() {
            return None;
        }
        if let Some(l) = e.downcast_ref::<Literal>() {
            return literal(l.value());
        }
        let out = self.operator(e, conditional)?;
        self.operators += 1;
        Some(out)
    }

    fn operator(&mut self, e: &Arc<dyn PhysicalExpr>, conditional: bool) -> Option<Expr> {
        if let Some(b) = e.downcast_ref::<BinaryExpr>() {
            return self.binary(b, conditional);
        }
        if let Some(n) = e.downcast_ref::<NotExpr>() {
            return Some(self.operand(n.arg(), conditional)?.not());
        }
        if let Some(n) = e.downcast_ref::<IsNullExpr>() {
            return Some(self.operand(n.arg(), conditional)?.is_null());
        }
        if let Some(n) = e.downcast_ref::<IsNotNullExpr>() {
            return Some(self.operand(n.arg(), conditional)?.is_not_null());
        }
        if let Some(n) = e.downcast_ref::<NegativeExpr>() {
            return Some(self.operand(n.arg(), conditional)?.neg());
        }
        if let Some(c) = e.downcast_ref::<CaseExpr>() {
            return self.case(c, conditional);
        }
        if let Some(c) = e.downcast_ref::<CastExpr>() {
            return self.cast(c.expr(), c.cast_type(), conditional, false);
        }
        if let Some(c) = e.downcast_ref::<TryCastExpr>() {
            return self.cast(c.expr(), c.cast_type(), conditional, true);
        }
        if let Some(l) = e.downcast_ref::<InListExpr>() {
            return self.in_list(l, conditional);
        }
        if let Some(l) = e.downcast_ref::<LikeExpr>() {
            return self.like(l, conditional);
        }
        if let Some(f) = e.downcast_ref::<ScalarFunctionExpr>() {
            return self.function(f, conditional);
        }
        None
    }

    fn is_float(&self, e: &Arc<dyn PhysicalExpr>) -> bool {
        e.data_type(self.schema)
            .map(|t| t.is_floating())
            .unwrap_or(true)
    }

    /// Both operands of a comparison: under DataFusion semantics, float operands are
    /// leaves whose values the kernel checks (see [`Translator::float_leaf`]).
    fn compared(
        &mut self,
        l: &Arc<dyn PhysicalExpr>,
        r: &Arc<dyn PhysicalExpr>,
        conditional: bool,
    ) -> Option<(Expr, Expr)> {
        if !self.lenient() && (self.is_float(l) || self.is_float(r)) {
            let a = self.float_leaf(l, conditional)?;
            let b = self.float_leaf(r, conditional)?;
            return Some((a, b));
        }
        let a = self.operand(l, conditional)?;
        let b = self.operand(r, conditional)?;
        Some((a, b))
    }

    fn binary(&mut self, b: &BinaryExpr, conditional: bool) -> Option<Expr> {
        let (l, r) = (b.left(), b.right());
        let op = *b.op();
        match op {
            Operator::And | Operator::Or => {
                // DataFusion evaluates the right side only for the rows the left
                // side leaves open (when few are), so it is a conditional place.
                let a = self.operand(l, conditional)?;
                let c = self.operand(r, true)?;
                Some(if op == Operator::And {
                    a.and(c)
                } else {
                    a.or(c)
                })
            }
            Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom => {
                let (a, c) = self.compared(l, r, conditional)?;
                Some(match op {
                    Operator::Eq => a.eq(c),
                    Operator::NotEq => a.not_eq(c),
                    Operator::Lt => a.lt(c),
                    Operator::LtEq => a.lt_eq(c),
                    Operator::Gt => a.gt(c),
                    Operator::GtEq => a.gt_eq(c),
                    Operator::IsDistinctFrom => a.is_distinct_from(c),
                    _ => a.is_not_distinct_from(c),
                })
            }
            Operator::Plus | Operator::Minus | Operator::Multiply => {
                // DataFusion wraps integer overflow (or, with `fail_on_overflow`,
                // raises it even for rows whose value is unused); Broadhead raises it
                // for used rows, and such a batch is evaluated again by DataFusion.
                if !self.lenient() && fails_on_overflow(b) && !self.is_float(l) {
                    return None;
                }
                let a = self.operand(l, conditional)?;
                let c = self.operand(r, conditional)?;
                Some(match op {
                    Operator::Plus => a.add(c),
                    Operator::Minus => a.sub(c),
                    _ => a.mul(c),
                })
            }
            Operator::Divide | Operator::Modulo => {
                // Integer division by zero is an error in both, but DataFusion raises
                // it for every row it evaluates: only a divisor that cannot fail
                // (a literal other than 0 and -1) is translated by default. Float
                // division by zero is an infinity or NaN in DataFusion, an error in
                // Broadhead: such batches are evaluated again by DataFusion.
                if !self.lenient() && !self.is_float(l) && !safe_divisor(r) {
                    return None;
                }
                let a = self.operand(l, conditional)?;
                let c = self.operand(r, conditional)?;
                Some(if op == Operator::Divide {
                    a.div(c)
                } else {
                    a.rem(c)
                })
            }
            Operator::StringConcat => {
                let a = self.operand(l, conditional)?;
                let c = self.operand(r, conditional)?;
                Some(a.concat(c))
            }
            _ => None,
        }
    }

    fn case(&mut self, c: &CaseExpr, conditional: bool) -> Option<Expr> {
        let operand = match c.expr() {
            Some(x) => {
                // A simple CASE compares its operand: with floats, Arrow's order.
                if !self.lenient() && self.is_float(x) {
                    return None;
                }
                Some(Box::new(self.operand(x, conditional)?))
            }
            None => None,
        };
        let mut branches = Vec::with_capacity(c.when_then_expr().len());
        for (i, (when, then)) in c.when_then_expr().iter().enumerate() {
            // The first condition is computed for every row; the others and every
            // value only for the rows that reach them.
            let w = self.operand(when, conditional || i > 0)?;
            let t = self.operand(then, true)?;
            branches.push((w, t));
        }
        let else_expr = match c.else_expr() {
            Some(x) => Some(Box::new(self.operand(x, true)?)),
            None => None,
        };
        Some(Expr::new(ExprKind::Case {
            operand,
            branches,
            else_expr,
        }))
    }

    fn cast(
        &mut self,
        arg: &Arc<dyn PhysicalExpr>,
        to: &DataType,
        conditional: bool,
        try_cast: bool,
    ) -> Option<Expr> {
        let from = arg.data_type(self.schema).ok()?;
        let x = self.operand(arg, conditional)?;
        if same_values(&from, to) {
            // A change of layout only (strings, dictionaries): the kernel reads every
            // layout, and the result is converted to DataFusion's at the end.
            return Some(x);
        }
        if !self.lenient() && !exact_cast(&from, to) {
            return None;
        }
        Some(if try_cast {
            x.try_cast(to.clone())
        } else {
            x.cast(to.clone())
        })
    }

    fn in_list(&mut self, l: &InListExpr, conditional: bool) -> Option<Expr> {
        let float = !self.lenient() && self.is_float(l.expr());
        let item = |t: &mut Self, e: &Arc<dyn PhysicalExpr>| {
            if float {
                t.float_leaf(e, conditional)
            } else {
                t.operand(e, conditional)
            }
        };
        let x = item(self, l.expr())?;
        let mut list = Vec::with_capacity(l.list().len());
        for e in l.list() {
            list.push(item(self, e)?);
        }
        if list.is_empty() {
            return None;
        }
        Some(if l.negated() {
            x.not_in_list(list)
        } else {
            x.in_list(list)
        })
    }

    fn like(&mut self, l: &LikeExpr, conditional: bool) -> Option<Expr> {
        // Arrow's ILIKE folds case differently from Broadhead's for some non-ASCII
        // letters; patterns with a backslash escape differ at their edges.
        if l.case_insensitive() && !self.lenient() {
            return None;
        }
        let pattern = match l.pattern().downcast_ref::<Literal>()?.value() {
            DfScalar::Utf8(Some(p))
            | DfScalar::Utf8View(Some(p))
            | DfScalar::LargeUtf8(Some(p)) => p.clone(),
            _ => return None,
        };
        if pattern.contains('\\') && !self.lenient() {
            return None;
        }
        let x = self.operand(l.expr(), conditional)?;
        let p = broadhead::lit(pattern.as_str());
        let m = if l.case_insensitive() {
            x.ilike(p)
        } else {
            x.like(p)
        };
        Some(if l.negated() { m.not() } else { m })
    }

    fn function(&mut self, f: &ScalarFunctionExpr, conditional: bool) -> Option<Expr> {
        let args = f.args();
        let name = function_name(f.name(), args, self.lenient())?;
        let mut out = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            // coalesce evaluates an argument only for the rows the earlier ones leave
            // NULL.
            let later = name == "coalesce" && i > 0;
            out.push(self.operand(a, conditional || later)?);
        }
        Some(broadhead::call(name, out))
    }

    /// `x` (over the inputs so far) as a value of `e`'s DataFusion type: `x` itself
    /// when Broadhead binds it to that type (a string or binary layout aside), `x`
    /// cast to it when both are decimals of the same scale and Broadhead's precision
    /// is the smaller (the same number; DataFusion's product of two DECIMAL(15,2)s is
    /// a DECIMAL(31,4), Broadhead's, as DuckDB's, a DECIMAL(18,4): a product beyond
    /// 18 digits is then Broadhead's overflow error, and the batch is evaluated again
    /// by DataFusion), else `None`.
    fn as_datafusion_type(&self, x: Expr, e: &Arc<dyn PhysicalExpr>) -> Option<Expr> {
        let want = e.data_type(self.schema).ok()?;
        let schema = Schema::new(self.fields.clone());
        let got = broadhead::bind::bind(&x, &schema).ok()?.data_type;
        if same_values(&got, &want) || got == want {
            return Some(x);
        }
        match (&got, &want) {
            (DataType::Decimal128(p, s), DataType::Decimal128(p2, s2)) if s == s2 && p < p2 => {
                Some(x.cast(want))
            }
            _ => None,
        }
    }
}

/// Whether DataFusion raises integer overflow of this arithmetic node (its
/// `fail_on_overflow` flag, which has no accessor: its `Debug` form shows it).
fn fails_on_overflow(b: &BinaryExpr) -> bool {
    format!("{b:?}").contains("fail_on_overflow: true")
}

/// An integer divisor that can fail neither by zero nor by `MIN / -1`.
fn safe_divisor(e: &Arc<dyn PhysicalExpr>) -> bool {
    let Some(l) = e.downcast_ref::<Literal>() else {
        return false;
    };
    let v = match l.value() {
        DfScalar::Int8(Some(v)) => i128::from(*v),
        DfScalar::Int16(Some(v)) => i128::from(*v),
        DfScalar::Int32(Some(v)) => i128::from(*v),
        DfScalar::Int64(Some(v)) => i128::from(*v),
        DfScalar::UInt8(Some(v)) => i128::from(*v),
        DfScalar::UInt16(Some(v)) => i128::from(*v),
        DfScalar::UInt32(Some(v)) => i128::from(*v),
        DfScalar::UInt64(Some(v)) => i128::from(*v),
        _ => return false,
    };
    v != 0 && v != -1
}

/// Whether two Arrow types hold the same SQL values in different layouts (string,
/// binary and dictionary encodings).
pub(crate) fn same_values(a: &DataType, b: &DataType) -> bool {
    use DataType::*;
    fn base(t: &DataType) -> &DataType {
        match t {
            Dictionary(_, v) => base(v),
            LargeUtf8 | Utf8View => &Utf8,
            LargeBinary | BinaryView => &Binary,
            t => t,
        }
    }
    base(a) == base(b)
}

/// Casts that cannot fail and that Arrow and Broadhead compute alike: widening
/// integers, integers and REALs to DOUBLE, integers to REAL, dates to timestamps,
/// decimals to wider decimals and (up to 18 digits) to DOUBLE, integers to decimals
/// with room for every value.
fn exact_cast(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    let int_digits = |t: &DataType| -> Option<u8> {
        Some(match t {
            Int8 | UInt8 => 3,
            Int16 | UInt16 => 5,
            Int32 | UInt32 => 10,
            Int64 => 19,
            UInt64 => 20,
            _ => return None,
        })
    };
    match (from, to) {
        (a, b) if a.is_integer() && b.is_integer() => widens(a, b),
        (a, Float64 | Float32) if a.is_integer() => true,
        (Float32, Float64) => true,
        (Date32, Timestamp(_, None)) => true,
        (Decimal128(p, _), Float64) => *p <= 18,
        (Decimal128(p, s), Decimal128(p2, s2)) => {
            s2 >= s && i16::from(*p2) - i16::from(*s2) >= i16::from(*p) - i16::from(*s)
        }
        (a, Decimal128(p2, s2)) if a.is_integer() => {
            int_digits(a).is_some_and(|d| i16::from(*p2) - i16::from(*s2) >= i16::from(d))
        }
        _ => false,
    }
}

/// Whether every value of integer type `a` is a value of integer type `b`.
fn widens(a: &DataType, b: &DataType) -> bool {
    use DataType::*;
    let bits = |t: &DataType| match t {
        Int8 | UInt8 => 8,
        Int16 | UInt16 => 16,
        Int32 | UInt32 => 32,
        _ => 64,
    };
    match (a.is_signed_integer(), b.is_signed_integer()) {
        (true, true) | (false, false) => bits(a) <= bits(b),
        (false, true) => bits(a) < bits(b),
        (true, false) => false,
    }
}

/// DataFusion's scalar functions that Broadhead computes alike: DataFusion's names,
/// the number of arguments (`None`: any number from one), and the Broadhead
/// registry function. A test checks every one is in the registry with that arity,
/// so renaming a Broadhead function cannot silently drop its translation.
const SAME_MEANING: &[(&[&str], Option<usize>, &str)] = &[
    (&["upper"], Some(1), "upper"),
    (&["lower"], Some(1), "lower"),
    (
        &["character_length", "char_length", "length"],
        Some(1),
        "length",
    ),
    (&["octet_length"], Some(1), "octet_length"),
    (&["btrim", "trim"], Some(1), "btrim"),
    (&["ltrim"], Some(1), "ltrim"),
    (&["rtrim"], Some(1), "rtrim"),
    (&["substr", "substring"], Some(2), "substr"),
    (&["substr", "substring"], Some(3), "substr"),
    (&["strpos", "instr"], Some(2), "strpos"),
    (&["left"], Some(2), "left"),
    (&["right"], Some(2), "right"),
    (&["replace"], Some(3), "replace"),
    (&["starts_with"], Some(2), "starts_with"),
    (&["ends_with"], Some(2), "ends_with"),
    (&["coalesce"], None, "coalesce"),
    (&["nullif"], Some(2), "nullif"),
    (&["concat"], None, "concat"),
    (&["abs"], Some(1), "abs"),
    (&["floor"], Some(1), "floor"),
    (&["ceil"], Some(1), "ceil"),
    (&["round"], Some(1), "round"),
    (&["sqrt"], Some(1), "sqrt"),
    (&["ln"], Some(1), "ln"),
    (&["log10"], Some(1), "log10"),
    (&["exp"], Some(1), "exp"),
];

/// The Broadhead function a DataFusion scalar function is, when their meaning is the
/// same for these arguments.
fn function_name(df: &str, args: &[Arc<dyn PhysicalExpr>], lenient: bool) -> Option<&'static str> {
    let n = args.len();
    // A negative length is an error in both, but DataFusion raises it for every row
    // it evaluates: a literal length that is not negative cannot fail.
    if matches!(df, "substr" | "substring")
        && n == 3
        && !(lenient || non_negative_literal(&args[2]))
    {
        return None;
    }
    SAME_MEANING
        .iter()
        .find(|(names, arity, _)| names.contains(&df) && arity.map_or(n >= 1, |a| a == n))
        .map(|&(_, _, name)| name)
}

fn non_negative_literal(e: &Arc<dyn PhysicalExpr>) -> bool {
    e.downcast_ref::<Literal>()
        .is_some_and(|l| match l.value() {
            DfScalar::Int64(Some(v)) => *v >= 0,
            DfScalar::Int32(Some(v)) => *v >= 0,
            _ => false,
        })
}

/// A DataFusion literal as a Broadhead one, for the types both have.
fn literal(v: &DfScalar) -> Option<Expr> {
    use broadhead::ScalarValue as B;
    let value = match v {
        DfScalar::Null => return Some(broadhead::null()),
        v if v.is_null() => {
            let t = v.data_type();
            if !supported_type(&t) {
                return None;
            }
            B::Null(t)
        }
        DfScalar::Boolean(Some(b)) => B::Boolean(*b),
        DfScalar::Int8(Some(x)) => B::Int8(*x),
        DfScalar::Int16(Some(x)) => B::Int16(*x),
        DfScalar::Int32(Some(x)) => B::Int32(*x),
        DfScalar::Int64(Some(x)) => B::Int64(*x),
        DfScalar::UInt8(Some(x)) => B::UInt8(*x),
        DfScalar::UInt16(Some(x)) => B::UInt16(*x),
        DfScalar::UInt32(Some(x)) => B::UInt32(*x),
        DfScalar::UInt64(Some(x)) => B::UInt64(*x),
        DfScalar::Float32(Some(x)) => B::Float32(*x),
        DfScalar::Float64(Some(x)) => B::Float64(*x),
        DfScalar::Decimal128(Some(x), p, s) => B::Decimal128(*x, *p, *s),
        DfScalar::Utf8(Some(s)) | DfScalar::LargeUtf8(Some(s)) | DfScalar::Utf8View(Some(s)) => {
            B::Utf8(s.clone())
        }
        DfScalar::Date32(Some(d)) => B::Date32(*d),
        DfScalar::TimestampSecond(Some(x), tz) => B::Timestamp(*x, TimeUnit::Second, tz.clone()),
        DfScalar::TimestampMillisecond(Some(x), tz) => {
            B::Timestamp(*x, TimeUnit::Millisecond, tz.clone())
        }
        DfScalar::TimestampMicrosecond(Some(x), tz) => {
            B::Timestamp(*x, TimeUnit::Microsecond, tz.clone())
        }
        DfScalar::TimestampNanosecond(Some(x), tz) => {
            B::Timestamp(*x, TimeUnit::Nanosecond, tz.clone())
        }
        _ => return None,
    };
    Some(broadhead::lit(value))
}

/// The types of typed NULL literals translated.
fn supported_type(t: &DataType) -> bool {
    use DataType::*;
    t.is_integer()
        || t.is_floating()
        || matches!(
            t,
            Boolean | Utf8 | LargeUtf8 | Utf8View | Date32 | Decimal128(..) | Timestamp(..)
        )
}

#[cfg(test)]
mod tests {
    use super::SAME_MEANING;

    #[test]
    fn every_translation_target_is_a_registry_function_of_its_arity() {
        for &(names, arity, name) in SAME_MEANING {
            let f = broadhead::functions::function(name)
                .unwrap_or_else(|| panic!("{names:?} translate to '{name}', not in the registry"));
            let n = arity.unwrap_or(1);
            assert!(
                f.signatures.iter().any(|s| s.accepts_count(n)) || !f.forms.is_empty(),
                "'{name}' has no signature of {n} arguments"
            );
        }
    }
}
