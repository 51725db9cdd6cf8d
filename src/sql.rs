//! SQL text to [`Expr`](crate::expr::Expr), with sqlparser.
