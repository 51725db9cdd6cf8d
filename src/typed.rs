//! The typed expression: what the binder produces and both back ends consume.
//!
//! Columns are resolved to indices, every node has a type, implicit casts are
//! explicit [`TypedKind::Cast`] nodes, functions point at their registry entry, and
//! sugar is gone (`NULLIF` and simple `CASE` are searched `CASE`, `BETWEEN` is two
//! comparisons; `IN` lists hold literals of the probe's type).
//!
//! Desugaring uses an operand more than once. A column or literal is simply copied;
//! any other operand is written once, in a [`TypedKind::Let`], and its uses are
//! [`TypedKind::Ref`] nodes, so nesting `NULLIF`s or `BETWEEN`s keeps the tree linear
//! in the size of the text.

use std::fmt;

use arrow_schema::{DataType, Schema};

use crate::expr::Span;
use crate::functions::Signature;
use crate::scalar::ScalarValue;
use crate::sql::print::{binary_operator, postfix_operator, write_identifier};
use crate::struct_fields::field_at;
use crate::types::sql_type_name;

/// A typed node.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedExpr {
    /// What the node is.
    pub kind: TypedKind,
    /// The type of its value.
    pub data_type: DataType,
    /// Where it came from in the expression text.
    pub span: Span,
}

/// The kinds of typed node.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedKind {
    /// The column at this index of the schema.
    Column(usize),
    /// A literal of the node's type.
    Literal(ScalarValue),
    /// A registry function.
    Call {
        /// The resolved signature.
        sig: &'static Signature,
        /// Arguments, of exactly the signature's types.
        args: Vec<TypedExpr>,
    },
    /// Kleene AND of two or more BOOLEAN children.
    And(Vec<TypedExpr>),
    /// Kleene OR of two or more BOOLEAN children.
    Or(Vec<TypedExpr>),
    /// Kleene NOT.
    Not(Box<TypedExpr>),
    /// Searched CASE; every value has the node's type.
    Case {
        /// `(condition, value)` pairs, conditions BOOLEAN.
        branches: Vec<(TypedExpr, TypedExpr)>,
        /// The value when no condition is TRUE.
        else_expr: Box<TypedExpr>,
    },
    /// `expr [NOT] IN (literals…)`; the literals have `expr`'s type and may be NULL.
    InList {
        /// The probe.
        expr: Box<TypedExpr>,
        /// The list.
        list: Vec<ScalarValue>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// The value tested.
        expr: Box<TypedExpr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// Conversion to the node's type.
    Cast(Box<TypedExpr>),
    /// `TRY_CAST`: conversion to the node's type, NULL where the conversion fails
    /// (errors of the operand itself are still raised).
    TryCast(Box<TypedExpr>),
    /// The first non-NULL argument.
    Coalesce(Vec<TypedExpr>),
    /// `body`, in which [`TypedKind::Ref`]`(id)` is the value of `value`: an operand
    /// that desugaring uses several times, computed once. The node has `body`'s type.
    Let {
        /// The name `Ref` nodes in `body` use (unique within the tree).
        id: usize,
        /// The shared value.
        value: Box<TypedExpr>,
        /// The expression using it.
        body: Box<TypedExpr>,
    },
    /// The value of the enclosing [`TypedKind::Let`] with this id.
    Ref(usize),
}

impl TypedExpr {
    /// A node.
    pub fn new(kind: TypedKind, data_type: DataType, span: Span) -> TypedExpr {
        TypedExpr {
            kind,
            data_type,
            span,
        }
    }

    /// A literal node.
    pub fn literal(value: ScalarValue, span: Span) -> TypedExpr {
        let data_type = value.data_type();
        TypedExpr::new(TypedKind::Literal(value), data_type, span)
    }

    /// The literal value, if this is a literal.
    pub fn as_literal(&self) -> Option<&ScalarValue> {
        match &self.kind {
            TypedKind::Literal(v) => Some(v),
            _ => None,
        }
    }

    /// The direct children, in evaluation order.
    pub fn children(&self) -> Vec<&TypedExpr> {
        match &self.kind {
            TypedKind::Column(_) | TypedKind::Literal(_) | TypedKind::Ref(_) => vec![],
            TypedKind::Let { value, body, .. } => vec![value, body],
            TypedKind::Call { args, .. } => args.iter().collect(),
            TypedKind::And(c) | TypedKind::Or(c) | TypedKind::Coalesce(c) => c.iter().collect(),
            TypedKind::Not(x) | TypedKind::Cast(x) | TypedKind::TryCast(x) => vec![x],
            TypedKind::IsNull { expr, .. } | TypedKind::InList { expr, .. } => vec![expr],
            TypedKind::Case {
                branches,
                else_expr,
            } => branches
                .iter()
                .flat_map(|(c, v)| [c, v])
                .chain(std::iter::once(&**else_expr))
                .collect(),
        }
    }

    /// The schema indices of the columns the expression reads, sorted, without repeats.
    pub fn columns(&self) -> Vec<usize> {
        fn walk(e: &TypedExpr, out: &mut Vec<usize>) {
            if let TypedKind::Column(i) = e.kind {
                out.push(i);
            }
            for c in e.children() {
                walk(c, out);
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether evaluating this can raise an error on some row (overflow, division by
    /// zero, a cast out of range); a reference to a shared value counts as able to.
    pub fn can_error(&self) -> bool {
        let here = match &self.kind {
            TypedKind::Call { sig, args } => {
                sig.can_error
                    && sig.fails_with.is_none_or(|fails| {
                        let literals: Vec<_> = args.iter().map(TypedExpr::as_literal).collect();
                        fails(&literals)
                    })
            }
            TypedKind::Cast(x) => !crate::types::cast_never_fails(&x.data_type, &self.data_type),
            // The shared value it stands for may fail, and this use may be the one
            // that raises its errors: folding the use away must not drop them.
            TypedKind::Ref(_) => true,
            _ => false,
        };
        here || self.children().iter().any(|c| c.can_error())
    }

    /// Whether the value depends on no column.
    pub fn is_constant(&self) -> bool {
        !matches!(self.kind, TypedKind::Column(_) | TypedKind::Ref(_))
            && self.children().iter().all(|c| c.is_constant())
    }

    /// SQL text with casts explicit and columns named from `schema`.
    pub fn display<'a>(&'a self, schema: &'a Schema) -> impl fmt::Display + 'a {
        DisplayTyped { expr: self, schema }
    }
}

struct DisplayTyped<'a> {
    expr: &'a TypedExpr,
    schema: &'a Schema,
}

impl DisplayTyped<'_> {
    fn child<'b>(&'b self, e: &'b TypedExpr) -> DisplayTyped<'b> {
        DisplayTyped {
            expr: e,
            schema: self.schema,
        }
    }

    fn list(&self, f: &mut fmt::Formatter<'_>, items: &[TypedExpr], sep: &str) -> fmt::Result {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                f.write_str(sep)?;
            }
            write!(f, "{}", self.child(item))?;
        }
        Ok(())
    }
}

impl fmt::Display for DisplayTyped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.expr.kind {
            TypedKind::Column(i) => match self.schema.fields().get(*i) {
                Some(field) => write_identifier(f, field.name()),
                None => match field_at(self.schema, *i) {
                    Some(field) => {
                        for (k, name) in field.names.iter().enumerate() {
                            if k > 0 {
                                f.write_str(".")?;
                            }
                            write_identifier(f, name)?;
                        }
                        Ok(())
                    }
                    None => write!(f, "#{i}"),
                },
            },
            TypedKind::Literal(v) => write!(f, "{v}"),
            TypedKind::Call { sig, args } => {
                if let (Some(op), [l, r]) = (binary_operator(sig.name), args.as_slice()) {
                    write!(f, "({} {op} {})", self.child(l), self.child(r))
                } else if let (Some(op), [x]) = (postfix_operator(sig.name), args.as_slice()) {
                    write!(f, "({} {op})", self.child(x))
                } else if let ("negate", [x]) = (sig.name, args.as_slice()) {
                    write!(f, "(-({}))", self.child(x))
                } else {
                    write!(f, "{}(", sig.name)?;
                    self.list(f, args, ", ")?;
                    f.write_str(")")
                }
            }
            TypedKind::And(c) => {
                f.write_str("(")?;
                self.list(f, c, " AND ")?;
                f.write_str(")")
            }
            TypedKind::Or(c) => {
                f.write_str("(")?;
                self.list(f, c, " OR ")?;
                f.write_str(")")
            }
            TypedKind::Not(x) => write!(f, "(NOT {})", self.child(x)),
            TypedKind::Case {
                branches,
                else_expr,
            } => {
                f.write_str("CASE")?;
                for (c, v) in branches {
                    write!(f, " WHEN {} THEN {}", self.child(c), self.child(v))?;
                }
                write!(f, " ELSE {} END", self.child(else_expr))
            }
            TypedKind::InList {
                expr,
                list,
                negated,
            } => {
                write!(
                    f,
                    "({} {}IN (",
                    self.child(expr),
                    if *negated { "NOT " } else { "" }
                )?;
                for (i, v) in list.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("))")
            }
            TypedKind::IsNull { expr, negated } => {
                write!(
                    f,
                    "({} IS {}NULL)",
                    self.child(expr),
                    if *negated { "NOT " } else { "" }
                )
            }
            TypedKind::Cast(x) | TypedKind::TryCast(x) => {
                write!(
                    f,
                    "{}({} AS {})",
                    if matches!(self.expr.kind, TypedKind::Cast(_)) {
                        "CAST"
                    } else {
                        "TRY_CAST"
                    },
                    self.child(x),
                    sql_type_name(&self.expr.data_type)
                )
            }
            TypedKind::Coalesce(c) => {
                f.write_str("coalesce(")?;
                self.list(f, c, ", ")?;
                f.write_str(")")
            }
            TypedKind::Let { id, value, body } => write!(
                f,
                "(LET ${id} = {} IN {})",
                self.child(value),
                self.child(body)
            ),
            TypedKind::Ref(id) => write!(f, "${id}"),
        }
    }
}
