//! Column names: a name resolves to one column (exactly, else case-insensitively),
//! and an unknown name gets the closest names as a suggestion.

use super::{err, Binder, Result};
use arrow_schema::{DataType, Field};

use crate::decode::bound_type;
use crate::expr::{Expr, ExprKind, Span};
use crate::struct_fields::field_column;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::{is_supported, sql_type_name};

impl Binder<'_> {
    pub(super) fn column(&self, name: &str, span: Span) -> Result<TypedExpr> {
        let index = self.column_index(name, span)?;
        self.column_at(index, self.schema.field(index), span)
    }

    /// `base.name`: a field of a STRUCT column (at any depth), bound as the extended
    /// column that [`crate::struct_fields`] gives it.
    pub(super) fn field(&self, base: &Expr, name: &str, span: Span) -> Result<TypedExpr> {
        if let ExprKind::Column(table) = &base.kind {
            if self.column_index(table, base.span).is_err() && self.column_index(name, span).is_ok()
            {
                return err(
                    span,
                    format!(
                        "{base}.{name}: table names are not supported (an expression reads one table, and a qualified name reads a field of a STRUCT column): write {name}"
                    ),
                );
            }
        }
        let (root, mut path, ty) = self.struct_path(base)?;
        let (child, child_type) = child_of(&ty, base, name, span)?;
        path.push(child);
        let index = field_column(self.schema, root, &path).expect("a field of the schema");
        let field = Field::new(format!("{base}.{name}"), child_type, true);
        self.column_at(index, &field, span)
    }

    /// The column, child path and type of what `base` (a column or a field of a
    /// STRUCT) names.
    fn struct_path(&self, base: &Expr) -> Result<(usize, Vec<usize>, DataType)> {
        match &base.kind {
            ExprKind::Column(name) => {
                let index = self.column_index(name, base.span)?;
                Ok((index, Vec::new(), self.schema.field(index).data_type().clone()))
            }
            ExprKind::Field { expr, name } => {
                let (root, mut path, ty) = self.struct_path(expr)?;
                let (child, child_type) = child_of(&ty, expr, name, base.span)?;
                path.push(child);
                Ok((root, path, child_type))
            }
            _ => err(
                base.span,
                format!(
                    "cannot read a field of {base}: fields are read from STRUCT columns (s.f, s['f'])"
                ),
            ),
        }
    }

    /// The position of the column called `name`.
    fn column_index(&self, name: &str, span: Span) -> Result<usize> {
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
        Ok(index)
    }

    /// Column `index` (of the extended columns), which is `field`, as the back ends
    /// read it.
    fn column_at(&self, index: usize, field: &Field, span: Span) -> Result<TypedExpr> {
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
        if let DataType::Struct(children) = &ty {
            let name = field.name();
            let example = children.first().map_or("f", |f| f.name().as_str());
            return err(
                span,
                format!("column '{name}' is a STRUCT: read its fields ({name}.{example}, {name}['{example}'])"),
            );
        }
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

/// The position and type of the field `name` of `ty` (the type of `base`): the field
/// with that exact name, else the one name that matches when case is ignored.
fn child_of(ty: &DataType, base: &Expr, name: &str, span: Span) -> Result<(usize, DataType)> {
    let DataType::Struct(children) = ty else {
        return err(
            span,
            format!(
                "cannot read field '{name}' of {base}, which has type {}: only a STRUCT has fields",
                sql_type_name(ty)
            ),
        );
    };
    let exact = children.iter().position(|f| f.name() == name);
    let folded: Vec<usize> = (0..children.len())
        .filter(|&i| children[i].name().eq_ignore_ascii_case(name))
        .collect();
    let index = match (exact, folded.as_slice()) {
        (Some(i), _) | (None, &[i]) => i,
        (None, []) => {
            let names: Vec<&str> = children.iter().map(|f| f.name().as_str()).collect();
            let close = suggestions(name, names.iter().copied());
            let hint = if close.is_empty() {
                format!("its fields: {}", quote_list(&names))
            } else {
                format!("did you mean {}?", quote_list(&close))
            };
            return err(span, format!("{base} has no field '{name}' ({hint})"));
        }
        (None, several) => {
            let names: Vec<&str> = several
                .iter()
                .map(|&i| children[i].name().as_str())
                .collect();
            return err(
                span,
                format!(
                    "field name '{name}' of {base} is ambiguous: it matches {} when case is ignored; quote the exact name",
                    quote_list(&names)
                ),
            );
        }
    };
    Ok((index, children[index].data_type().clone()))
}
