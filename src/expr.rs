//! The expression tree: a Gandiva-like node tree that needs no schema.
//!
//! An [`Expr`] is what the SQL parser produces and what the builder API
//! ([`col`], [`lit`], [`Expr::gt`], [`Expr::and`], …) constructs. Operators are
//! function calls with Gandiva's names (`add`, `greater_than`, …), so the binder
//! resolves every one of them in the same function registry.
//!
//! `Display` prints SQL that the parser reads back into the same tree (a
//! property test checks this for generated trees). Trees built through the
//! builder or the parser are in *canonical form*: `AND`/`OR` are flat with at
//! least two children, a cast never wraps an untyped `NULL`, and `BETWEEN` is a
//! [`ExprKind::Between`] node only when its operand is computed (with a column or a
//! literal it is the two comparisons, which row-group pruning understands).
//!
//! Trees are limited in size: [`MAX_NODES`] nodes and [`MAX_DEPTH`] levels
//! ([`Expr::check_size`]); the parser and the binder reject larger ones.

use arrow_schema::DataType;

use crate::scalar::ScalarValue;
pub use crate::span::Span;

/// An expression node with its position in the source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What the node is.
    pub kind: ExprKind,
    /// Where it was written ([`Span::NONE`] for built expressions).
    pub span: Span,
}

/// The kinds of expression node.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A column, by name.
    Column(String),
    /// A typed literal (an untyped `NULL` has type [`DataType::Null`]).
    Literal(ScalarValue),
    /// A function call; operators are calls too (`add`, `less_than`, `like`, …).
    Call {
        /// The lower-case function name.
        name: String,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// Kleene AND of two or more children.
    And(Vec<Expr>),
    /// Kleene OR of two or more children.
    Or(Vec<Expr>),
    /// Kleene NOT.
    Not(Box<Expr>),
    /// `CASE [operand] WHEN … THEN … [ELSE …] END` (also `if(c, a, b)`).
    Case {
        /// The operand of a simple `CASE`, compared with each `WHEN` value.
        operand: Option<Box<Expr>>,
        /// `(WHEN, THEN)` pairs, at least one.
        branches: Vec<(Expr, Expr)>,
        /// The `ELSE` value; a missing `ELSE` means `NULL`.
        else_expr: Option<Box<Expr>>,
    },
    /// `expr [NOT] IN (list…)`.
    InList {
        /// The value looked up.
        expr: Box<Expr>,
        /// The list, at least one item.
        list: Vec<Expr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// The value tested.
        expr: Box<Expr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `expr [NOT] BETWEEN low AND high` with a computed `expr` (written once: a
    /// nested `BETWEEN` would otherwise double in size at every level).
    Between {
        /// The value tested.
        expr: Box<Expr>,
        /// The lower bound (inclusive).
        low: Box<Expr>,
        /// The upper bound (inclusive).
        high: Box<Expr>,
        /// `NOT BETWEEN`.
        negated: bool,
        /// `BETWEEN SYMMETRIC`: the bounds may come in either order.
        symmetric: bool,
    },
    /// `CAST(expr AS type)`.
    Cast {
        /// The value converted.
        expr: Box<Expr>,
        /// The target type.
        to: DataType,
    },
    /// `TRY_CAST(expr AS type)`: a cast whose errors become `NULL`.
    TryCast {
        /// The value converted.
        expr: Box<Expr>,
        /// The target type.
        to: DataType,
    },
    /// A field of a STRUCT: `s.f`, `s['f']`, `struct_extract(s, 'f')`.
    Field {
        /// The STRUCT (a column, or a field of one).
        expr: Box<Expr>,
        /// The field's name.
        name: String,
    },
}

impl Expr {
    /// A node with no source position.
    pub fn new(kind: ExprKind) -> Expr {
        Expr {
            kind,
            span: Span::NONE,
        }
    }

    /// The same node with a source position.
    pub fn with_span(mut self, span: Span) -> Expr {
        self.span = span;
        self
    }

    /// A call of a registry function by name.
    pub fn call(name: impl Into<String>, args: Vec<Expr>) -> Expr {
        Expr::new(ExprKind::Call {
            name: name.into(),
            args,
        })
    }

    fn binary(self, name: &str, other: Expr) -> Expr {
        let span = self.span.union(other.span);
        Expr::call(name, vec![self, other]).with_span(span)
    }

    /// `self = other`
    pub fn eq(self, other: Expr) -> Expr {
        self.binary("equal", other)
    }
    /// `self <> other`
    pub fn not_eq(self, other: Expr) -> Expr {
        self.binary("not_equal", other)
    }
    /// `self < other`
    pub fn lt(self, other: Expr) -> Expr {
        self.binary("less_than", other)
    }
    /// `self <= other`
    pub fn lt_eq(self, other: Expr) -> Expr {
        self.binary("less_than_or_equal_to", other)
    }
    /// `self > other`
    pub fn gt(self, other: Expr) -> Expr {
        self.binary("greater_than", other)
    }
    /// `self >= other`
    pub fn gt_eq(self, other: Expr) -> Expr {
        self.binary("greater_than_or_equal_to", other)
    }
    /// `self + other`
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, other: Expr) -> Expr {
        self.binary("add", other)
    }
    /// `self - other`
    #[allow(clippy::should_implement_trait)]
    pub fn sub(self, other: Expr) -> Expr {
        self.binary("subtract", other)
    }
    /// `self * other`
    #[allow(clippy::should_implement_trait)]
    pub fn mul(self, other: Expr) -> Expr {
        self.binary("multiply", other)
    }
    /// `self / other`
    #[allow(clippy::should_implement_trait)]
    pub fn div(self, other: Expr) -> Expr {
        self.binary("divide", other)
    }
    /// `self % other`
    #[allow(clippy::should_implement_trait)]
    pub fn rem(self, other: Expr) -> Expr {
        self.binary("modulo", other)
    }
    /// `-self`
    #[allow(clippy::should_implement_trait)]
    pub fn neg(self) -> Expr {
        let span = self.span;
        Expr::call("negate", vec![self]).with_span(span)
    }
    /// `self LIKE pattern`
    pub fn like(self, pattern: Expr) -> Expr {
        self.binary("like", pattern)
    }
    /// `self ILIKE pattern`
    pub fn ilike(self, pattern: Expr) -> Expr {
        self.binary("ilike", pattern)
    }
    /// `self IS DISTINCT FROM other`
    pub fn is_distinct_from(self, other: Expr) -> Expr {
        self.binary("is_distinct_from", other)
    }
    /// `self IS NOT DISTINCT FROM other`
    pub fn is_not_distinct_from(self, other: Expr) -> Expr {
        self.binary("is_not_distinct_from", other)
    }

    /// `self AND other` (flattened: `a AND b AND c` is one node with three children).
    pub fn and(self, other: Expr) -> Expr {
        and(vec![self, other])
    }
    /// `self OR other` (flattened).
    pub fn or(self, other: Expr) -> Expr {
        or(vec![self, other])
    }
    /// `NOT self`
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Expr {
        let span = self.span;
        Expr::new(ExprKind::Not(Box::new(self))).with_span(span)
    }
    /// `self.name`: a field of a STRUCT.
    pub fn field(self, name: impl Into<String>) -> Expr {
        let span = self.span;
        Expr::new(ExprKind::Field {
            expr: Box::new(self),
            name: name.into(),
        })
        .with_span(span)
    }
    /// `self IS NULL`
    pub fn is_null(self) -> Expr {
        let span = self.span;
        Expr::new(ExprKind::IsNull {
            expr: Box::new(self),
            negated: false,
        })
        .with_span(span)
    }
    /// `self IS NOT NULL`
    pub fn is_not_null(self) -> Expr {
        let span = self.span;
        Expr::new(ExprKind::IsNull {
            expr: Box::new(self),
            negated: true,
        })
        .with_span(span)
    }
    /// `self IN (list…)`
    pub fn in_list(self, list: Vec<Expr>) -> Expr {
        let span = self.span;
        Expr::new(ExprKind::InList {
            expr: Box::new(self),
            list,
            negated: false,
        })
        .with_span(span)
    }
    /// `self NOT IN (list…)`
    pub fn not_in_list(self, list: Vec<Expr>) -> Expr {
        let span = self.span;
        Expr::new(ExprKind::InList {
            expr: Box::new(self),
            list,
            negated: true,
        })
        .with_span(span)
    }
    /// `self BETWEEN low AND high`: `self >= low AND self <= high` when `self` is a
    /// column or a literal, else an [`ExprKind::Between`] node (so `self` is not copied).
    pub fn between(self, low: Expr, high: Expr) -> Expr {
        between(self, low, high, false, false)
    }

    /// `self NOT BETWEEN low AND high`: `self < low OR self > high`, or a node as for
    /// [`Expr::between`].
    pub fn not_between(self, low: Expr, high: Expr) -> Expr {
        between(self, low, high, true, false)
    }

    /// `self [NOT] BETWEEN SYMMETRIC low AND high`: PostgreSQL's
    /// `(self BETWEEN low AND high) OR (self BETWEEN high AND low)`, always an
    /// [`ExprKind::Between`] node (every operand is used twice, and computed once).
    pub fn between_symmetric(self, low: Expr, high: Expr, negated: bool) -> Expr {
        between(self, low, high, negated, true)
    }

    /// The number of nodes and the depth of the tree (a leaf has depth 1), computed
    /// without recursion.
    pub fn size(&self) -> (usize, usize) {
        let mut nodes = 0;
        let mut depth = 0;
        let mut stack = vec![(self, 1usize)];
        while let Some((e, d)) = stack.pop() {
            nodes += 1;
            depth = depth.max(d);
            e.for_each_child(|c| stack.push((c, d + 1)));
        }
        (nodes, depth)
    }

    /// Checks the limits on the size of a tree: at most [`MAX_NODES`] nodes and
    /// [`MAX_DEPTH`] levels. The message says which limit and by how much.
    pub fn check_size(&self) -> Result<(), String> {
        let (nodes, depth) = self.size();
        if nodes > MAX_NODES {
            return Err(format!(
                "expression too large: {nodes} nodes (limit {MAX_NODES})"
            ));
        }
        if depth > MAX_DEPTH {
            return Err(format!(
                "expression too deeply nested: {depth} levels (limit {MAX_DEPTH})"
            ));
        }
        Ok(())
    }

    /// Calls `f` on each direct child, in order.
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Column(_) | ExprKind::Literal(_) => {}
            ExprKind::Call { args: c, .. } | ExprKind::And(c) | ExprKind::Or(c) => {
                c.iter().for_each(f)
            }
            ExprKind::Not(x)
            | ExprKind::IsNull { expr: x, .. }
            | ExprKind::Cast { expr: x, .. }
            | ExprKind::TryCast { expr: x, .. }
            | ExprKind::Field { expr: x, .. } => f(x),
            ExprKind::Case {
                operand,
                branches,
                else_expr,
            } => {
                if let Some(o) = operand {
                    f(o);
                }
                for (w, t) in branches {
                    f(w);
                    f(t);
                }
                if let Some(e) = else_expr {
                    f(e);
                }
            }
            ExprKind::InList { expr, list, .. } => {
                f(expr);
                list.iter().for_each(f);
            }
            ExprKind::Between {
                expr, low, high, ..
            } => {
                f(expr);
                f(low);
                f(high);
            }
        }
    }
    /// `CAST(self AS to)`; a cast of an untyped `NULL` is a typed `NULL` literal.
    pub fn cast(self, to: DataType) -> Expr {
        self.conversion(to, |expr, to| ExprKind::Cast { expr, to })
    }

    /// `TRY_CAST(self AS to)`: the cast, with `NULL` for values that do not convert;
    /// of an untyped `NULL`, a typed `NULL` literal.
    pub fn try_cast(self, to: DataType) -> Expr {
        self.conversion(to, |expr, to| ExprKind::TryCast { expr, to })
    }

    fn conversion(self, to: DataType, node: fn(Box<Expr>, DataType) -> ExprKind) -> Expr {
        let span = self.span;
        if let ExprKind::Literal(ScalarValue::Null(DataType::Null)) = self.kind {
            return Expr::new(ExprKind::Literal(ScalarValue::Null(to))).with_span(span);
        }
        Expr::new(node(Box::new(self), to)).with_span(span)
    }

    /// `self || other` (`concat_op`: NULL if either side is NULL, as in PostgreSQL).
    pub fn concat(self, other: Expr) -> Expr {
        self.binary("concat_op", other)
    }
}

/// The most nodes an expression may have (a 10,000-item `IN` list has 10,002).
///
/// Every stage is linear in the size of the tree; the limit bounds the memory and
/// time one expression can take.
pub const MAX_NODES: usize = 100_000;

/// The deepest an expression may nest (`AND`/`OR` chains are flat and count once).
/// Binding, compiling and printing recurse; this keeps them well within a thread's stack.
pub const MAX_DEPTH: usize = 256;

fn between(x: Expr, low: Expr, high: Expr, negated: bool, symmetric: bool) -> Expr {
    if !symmetric && matches!(x.kind, ExprKind::Column(_) | ExprKind::Literal(_)) {
        return if negated {
            or(vec![x.clone().lt(low), x.gt(high)])
        } else {
            and(vec![x.clone().gt_eq(low), x.lt_eq(high)])
        };
    }
    let span = x.span.union(low.span).union(high.span);
    Expr::new(ExprKind::Between {
        expr: Box::new(x),
        low: Box::new(low),
        high: Box::new(high),
        negated,
        symmetric,
    })
    .with_span(span)
}

/// A column reference.
pub fn col(name: impl Into<String>) -> Expr {
    Expr::new(ExprKind::Column(name.into()))
}

/// A literal: `lit(2.0)`, `lit(5i32)`, `lit("AIR")`, `lit(true)`.
pub fn lit(value: impl Into<ScalarValue>) -> Expr {
    Expr::new(ExprKind::Literal(value.into()))
}

/// An untyped SQL `NULL`.
pub fn null() -> Expr {
    lit(ScalarValue::Null(DataType::Null))
}

/// A function call by registry name: `call("abs", vec![col("x")])`.
pub fn call(name: impl Into<String>, args: Vec<Expr>) -> Expr {
    Expr::call(name, args)
}

fn flatten(children: Vec<Expr>, is_same: fn(&ExprKind) -> bool) -> Vec<Expr> {
    let mut out = Vec::with_capacity(children.len());
    for child in children {
        if is_same(&child.kind) {
            match child.kind {
                ExprKind::And(inner) | ExprKind::Or(inner) => out.extend(inner),
                _ => unreachable!("is_same matched an AND or OR"),
            }
        } else {
            out.push(child);
        }
    }
    out
}

fn span_of(children: &[Expr]) -> Span {
    children.iter().fold(Span::NONE, |s, c| s.union(c.span))
}

/// Kleene AND of any number of children, flattened; one child is returned as is.
///
/// An empty list is `TRUE`.
pub fn and(children: Vec<Expr>) -> Expr {
    let mut children = flatten(children, |k| matches!(k, ExprKind::And(_)));
    match children.len() {
        0 => lit(true),
        1 => children.pop().expect("one child"),
        _ => {
            let span = span_of(&children);
            Expr::new(ExprKind::And(children)).with_span(span)
        }
    }
}

/// Kleene OR of any number of children, flattened; one child is returned as is.
///
/// An empty list is `FALSE`.
pub fn or(children: Vec<Expr>) -> Expr {
    let mut children = flatten(children, |k| matches!(k, ExprKind::Or(_)));
    match children.len() {
        0 => lit(false),
        1 => children.pop().expect("one child"),
        _ => {
            let span = span_of(&children);
            Expr::new(ExprKind::Or(children)).with_span(span)
        }
    }
}

/// A searched `CASE WHEN c1 THEN v1 … ELSE e END`.
pub fn case(branches: Vec<(Expr, Expr)>, else_expr: Option<Expr>) -> Expr {
    Expr::new(ExprKind::Case {
        operand: None,
        branches,
        else_expr: else_expr.map(Box::new),
    })
}
