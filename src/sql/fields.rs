//! STRUCT field access: `s.f` (and `s.a.b`), `s['f']`, `(expr).f`. A qualified name
//! is always a field path: Broadhead's expressions read one table, so `t.col` has no
//! table to name. List element access (`l[1]`, `l[1:2]`) is not supported yet.

use sqlparser::ast::{self, AccessExpr, Ident, Subscript, Value};

use super::errors::{error, shallow_span, span};
use super::{convert, Cx};
use crate::error::ParseError;
use crate::expr::{Expr, ExprKind};

/// `a.b.c`: column `a`, its field `b`, that one's field `c`.
pub(super) fn compound_identifier(idents: &[Ident]) -> Result<Expr, ParseError> {
    let mut parts = idents.iter();
    let first = parts.next().expect("a compound identifier has parts");
    let mut e = Expr::new(ExprKind::Column(first.value.clone())).with_span(span(first.span));
    for ident in parts {
        let at = e.span.union(span(ident.span));
        e = e.field(ident.value.clone()).with_span(at);
    }
    Ok(e)
}

/// `root` followed by `.f` and `['f']` accesses.
pub(super) fn field_access(
    e: &ast::Expr,
    root: &ast::Expr,
    chain: &[AccessExpr],
    cx: Cx,
) -> Result<Expr, ParseError> {
    let d = cx.deeper();
    let mut out = convert(root, d)?;
    let whole = shallow_span(e, d);
    for access in chain {
        let name = match access {
            AccessExpr::Dot(ast::Expr::Identifier(ident)) => ident.value.clone(),
            AccessExpr::Subscript(Subscript::Index {
                index: ast::Expr::Value(v),
            }) if matches!(v.value, Value::SingleQuotedString(_)) => match &v.value {
                Value::SingleQuotedString(s) => s.clone(),
                _ => unreachable!("matched above"),
            },
            AccessExpr::Subscript(_) => {
                return Err(error(
                    "list element access (x[i], x[a:b]) is not supported yet: a subscript must be a quoted field name, as s['f']",
                    whole,
                ))
            }
            AccessExpr::Dot(other) => {
                return Err(error(
                    format!("unsupported field access: .{other}"),
                    whole,
                ))
            }
        };
        let at = out.span.union(whole);
        out = out.field(name).with_span(at);
    }
    Ok(out)
}
