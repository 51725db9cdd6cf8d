//! Helpers for the parser's unit tests.

use super::parse_expr;
use crate::expr::{Expr, ExprKind};
use crate::scalar::ScalarValue;

pub(super) fn p(text: &str) -> Expr {
    match parse_expr(text) {
        Ok(e) => e,
        Err(e) => panic!("{text:?} did not parse: {e}"),
    }
}

/// The message and the (column, end column) of the error `text` gives.
pub(super) fn err(text: &str) -> (String, (u32, u32)) {
    match parse_expr(text) {
        Ok(e) => panic!("{text:?} parsed as {e:?}"),
        Err(e) => (e.message, (e.span.column, e.span.end_column)),
    }
}

pub(super) fn message(text: &str) -> String {
    err(text).0
}

pub(super) fn scalar(text: &str) -> ScalarValue {
    match p(text).kind {
        ExprKind::Literal(v) => v,
        other => panic!("{text:?} is not a literal: {other:?}"),
    }
}
