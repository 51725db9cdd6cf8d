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

use std::fmt;

use arrow_schema::DataType;

use crate::scalar::ScalarValue;
pub use crate::span::Span;
use crate::types::sql_type_name;

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
            | ExprKind::TryCast { expr: x, .. } => f(x),
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

/// The SQL spelling of an operator-named call, if it is one.
pub(crate) fn binary_operator(name: &str) -> Option<&'static str> {
    Some(match name {
        "add" => "+",
        "subtract" => "-",
        "multiply" => "*",
        "divide" => "/",
        "modulo" => "%",
        "equal" => "=",
        "not_equal" => "<>",
        "less_than" => "<",
        "less_than_or_equal_to" => "<=",
        "greater_than" => ">",
        "greater_than_or_equal_to" => ">=",
        "like" => "LIKE",
        "ilike" => "ILIKE",
        "is_distinct_from" => "IS DISTINCT FROM",
        "is_not_distinct_from" => "IS NOT DISTINCT FROM",
        "concat_op" => "||",
        "bitwise_and" => "&",
        "bitwise_or" => "|",
        "bitwise_xor" => "#",
        "shift_left" => "<<",
        "shift_right" => ">>",
        _ => return None,
    })
}

/// The SQL spelling of a postfix `IS …` test, if `name` is one.
pub(crate) fn postfix_operator(name: &str) -> Option<&'static str> {
    Some(match name {
        "is_true" => "IS TRUE",
        "is_not_true" => "IS NOT TRUE",
        "is_false" => "IS FALSE",
        "is_not_false" => "IS NOT FALSE",
        _ => return None,
    })
}

/// Writes a column name, quoting it when it is not a plain identifier.
pub(crate) fn write_identifier(f: &mut impl fmt::Write, name: &str) -> fmt::Result {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_keyword(name);
    if plain {
        f.write_str(name)
    } else {
        write_quoted(f, name)
    }
}

/// Function names that are SQL keywords but parse as ordinary calls when written bare.
pub(crate) const KEYWORD_FUNCTIONS: &[&str] = &[
    "abs",
    "char_length",
    "character_length",
    "coalesce",
    "day",
    "exp",
    "hour",
    "least",
    "left",
    "ln",
    "log",
    "lower",
    "minute",
    "mod",
    "month",
    "nullif",
    "octet_length",
    "power",
    "replace",
    "right",
    "second",
    "sqrt",
    "upper",
    "year",
];

/// Writes a function name: bare when the parser reads `name(args…)` back as a call
/// of it, quoted otherwise (`"case"(x)`).
///
/// Names the parser treats specially are bare only with the arities it maps back
/// to a plain call of the same name (`ceil(x)`, `substr(s, 1, 2)`,
/// `current_date()`); `substring` and `trim` are always quoted, since the parser
/// reads `substring(…)` as `substr` and `trim(…)` as `btrim`.
pub(crate) fn write_function_name(
    f: &mut impl fmt::Write,
    name: &str,
    arity: usize,
) -> fmt::Result {
    let lower_identifier = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let bare = lower_identifier
        && (!is_keyword(name)
            || KEYWORD_FUNCTIONS.contains(&name)
            || match name {
                "ceil" | "floor" => arity == 1,
                "substr" => (1..=3).contains(&arity),
                "current_date" | "current_timestamp" => arity == 0,
                _ => false,
            });
    if bare {
        f.write_str(name)
    } else {
        write_quoted(f, name)
    }
}

fn write_quoted(f: &mut impl fmt::Write, name: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in name.chars() {
        if c == '"' {
            f.write_str("\"\"")?;
        } else {
            f.write_char(c)?;
        }
    }
    f.write_char('"')
}

fn is_keyword(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    sqlparser::keywords::ALL_KEYWORDS
        .binary_search(&upper.as_str())
        .is_ok()
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Expr], sep: &str) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Column(name) => write_identifier(f, name),
            ExprKind::Literal(value) => write!(f, "{value}"),
            ExprKind::Call { name, args } => {
                if let (Some(op), [l, r]) = (binary_operator(name), args.as_slice()) {
                    write!(f, "({l} {op} {r})")
                } else if let ("like" | "ilike", [s, p, e]) = (name.as_str(), args.as_slice()) {
                    let op = if name == "like" { "LIKE" } else { "ILIKE" };
                    write!(f, "({s} {op} {p} ESCAPE {e})")
                } else if let ("bitwise_not", [x]) = (name.as_str(), args.as_slice()) {
                    write!(f, "(~({x}))")
                } else if let (Some(op), [x]) = (postfix_operator(name), args.as_slice()) {
                    write!(f, "({x} {op})")
                } else if let ("negate", [x]) = (name.as_str(), args.as_slice()) {
                    write!(f, "(-({x}))")
                } else {
                    write_function_name(f, name, args.len())?;
                    f.write_str("(")?;
                    write_list(f, args, ", ")?;
                    f.write_str(")")
                }
            }
            ExprKind::And(children) => {
                f.write_str("(")?;
                write_list(f, children, " AND ")?;
                f.write_str(")")
            }
            ExprKind::Or(children) => {
                f.write_str("(")?;
                write_list(f, children, " OR ")?;
                f.write_str(")")
            }
            ExprKind::Not(x) => write!(f, "(NOT {x})"),
            ExprKind::Case {
                operand,
                branches,
                else_expr,
            } => {
                f.write_str("CASE")?;
                if let Some(op) = operand {
                    write!(f, " {op}")?;
                }
                for (when, then) in branches {
                    write!(f, " WHEN {when} THEN {then}")?;
                }
                if let Some(e) = else_expr {
                    write!(f, " ELSE {e}")?;
                }
                f.write_str(" END")
            }
            ExprKind::InList {
                expr,
                list,
                negated,
            } => {
                write!(f, "({expr} {}IN (", if *negated { "NOT " } else { "" })?;
                write_list(f, list, ", ")?;
                f.write_str("))")
            }
            ExprKind::IsNull { expr, negated } => {
                write!(f, "({expr} IS {}NULL)", if *negated { "NOT " } else { "" })
            }
            ExprKind::Cast { expr, to } => write!(f, "CAST({expr} AS {})", sql_type_name(to)),
            ExprKind::TryCast { expr, to } => {
                write!(f, "TRY_CAST({expr} AS {})", sql_type_name(to))
            }
            ExprKind::Between {
                expr,
                low,
                high,
                negated,
                symmetric,
            } => write!(
                f,
                "({expr} {}BETWEEN {}{low} AND {high})",
                if *negated { "NOT " } else { "" },
                if *symmetric { "SYMMETRIC " } else { "" }
            ),
        }
    }
}
