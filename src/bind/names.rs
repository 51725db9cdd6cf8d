//! Column names: a name resolves to one column (exactly, else case-insensitively),
//! and an unknown name gets the closest names as a suggestion.

use super::{err, Binder, Result};
use crate::decode::bound_type;
use crate::expr::Span;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::is_supported;

impl Binder<'_> {
    pub(super) fn column(&self, name: &str, span: Span) -> Result<TypedExpr> {
        let fields = self.schema.fields();
        // Columns are kept by position: a name two columns share is ambiguous.
        let exact: Vec<usize> = (0..fields.len())
            .filter(|&i| fields[i].name() == name)
            .collect();
        let index = match exact.as_slice() {
            [i] => *i,
            [_, _, ..] => {
                let positions: Vec<String> = exact.iter().map(|i| (i + 1).to_string()).collect();
                let (last, rest) = positions.split_last().expect("two or more");
                return err(
                    span,
                    format!(
                        "column reference \"{name}\" is ambiguous: it names columns {} and {last}",
                        rest.join(", ")
                    ),
                );
            }
            [] => {
                let folded: Vec<usize> = (0..fields.len())
                    .filter(|&i| fields[i].name().eq_ignore_ascii_case(name))
                    .collect();
                match folded.as_slice() {
                    [i] => *i,
                    [] => {
                        let names = fields.iter().map(|f| f.name().as_str());
                        let close = suggestions(name, names);
                        let hint = if !close.is_empty() {
                            format!(" (did you mean {}?)", quote_list(&close))
                        } else if fields.len() <= 12 {
                            let all: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
                            format!(" (columns: {})", quote_list(&all))
                        } else {
                            String::new()
                        };
                        return err(span, format!("unknown column '{name}'{hint}"));
                    }
                    several => {
                        let names: Vec<&str> =
                            several.iter().map(|&i| fields[i].name().as_str()).collect();
                        return err(
                            span,
                            format!(
                                "column name '{name}' is ambiguous: it matches {} when case is ignored; quote the exact name",
                                quote_list(&names)
                            ),
                        );
                    }
                }
            }
        };
        let field = &fields[index];
        if let Some(to) = crate::types::read_as(field.data_type()) {
            // DATE64 is read as DATE (its days, rounded toward the past: Arrow's DATE64
            // holds whole days), intervals and durations as INTERVAL.
            let column = TypedExpr::new(TypedKind::Column(index), field.data_type().clone(), span);
            return Ok(TypedExpr::new(TypedKind::Cast(Box::new(column)), to, span));
        }
        // VARCHAR and BLOB are one type each whatever their layout: the back ends
        // read `LargeUtf8`, `Utf8View`, `LargeBinary` and `BinaryView` columns in
        // place (crate::layout); dictionaries and `FixedSizeBinary` are decoded
        // (crate::decode).
        let ty = bound_type(field.data_type());
        if !is_supported(&ty) {
            return err(
                span,
                format!(
                    "column '{}' has type {}, which Broadhead does not support",
                    field.name(),
                    field.data_type()
                ),
            );
        }
        Ok(TypedExpr::new(TypedKind::Column(index), ty, span))
    }
}

/// Up to three candidates closest to `name`, closest first.
pub(super) fn suggestions<'n>(
    name: &str,
    candidates: impl Iterator<Item = &'n str>,
) -> Vec<&'n str> {
    let limit = (name.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .map(|c| {
            (
                strsim::levenshtein(&name.to_lowercase(), &c.to_lowercase()),
                c,
            )
        })
        .filter(|(d, c)| *d <= limit || c.to_lowercase().contains(&name.to_lowercase()))
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

pub(super) fn quote_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
