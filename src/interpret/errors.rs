//! The rows that raised errors, by kind: what each node returns beside its values,
//! so that a row raises an error only if its value is used.

use std::sync::Arc;

use arrow::buffer::BooleanBuffer;
use arrow::datatypes::DataType;

use crate::error::EvalError;
use crate::types::sql_type_name;

/// What kind of error a row raised.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ErrorKind {
    DivisionByZero,
    Overflow(String),
    /// A function's failures: the rows, ascending, and why (for a function of
    /// literals, one entry for row 0 that stands for every row).
    Function(Arc<Vec<(usize, String)>>),
}

/// The rows that raised errors, by kind (usually none).
#[derive(Debug, Clone, Default)]
pub(super) struct Errors(pub(super) Vec<(ErrorKind, BooleanBuffer)>);

impl Errors {
    pub(super) fn none() -> Errors {
        Errors(Vec::new())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn of(kind: ErrorKind, rows: BooleanBuffer) -> Errors {
        if rows.count_set_bits() == 0 {
            Errors::none()
        } else {
            Errors(vec![(kind, rows)])
        }
    }

    pub(super) fn union(mut self, other: Errors) -> Errors {
        self.0.extend(other.0);
        self
    }

    /// All error rows, whatever their kind.
    pub(super) fn any(&self, len: usize) -> BooleanBuffer {
        self.0
            .iter()
            .fold(BooleanBuffer::new_unset(len), |acc, (_, m)| &acc | m)
    }

    /// Keeps only the errors of rows in `keep`.
    pub(super) fn restrict(self, keep: &BooleanBuffer) -> Errors {
        Errors(
            self.0
                .into_iter()
                .map(|(k, m)| (k, &m & keep))
                .filter(|(_, m)| m.count_set_bits() > 0)
                .collect(),
        )
    }

    pub(super) fn first_row(&self) -> Option<EvalError> {
        self.0
            .iter()
            .filter_map(|(k, m)| m.set_indices().next().map(|row| (row, k)))
            .min_by_key(|(row, _)| *row)
            .map(|(row, kind)| match kind {
                ErrorKind::DivisionByZero => EvalError::DivisionByZero { row },
                ErrorKind::Overflow(what) => EvalError::Overflow {
                    what: what.clone(),
                    row,
                },
                ErrorKind::Function(failed) => {
                    // The entry of the row, or (for a function of literals, which
                    // fails on every row) the one entry before it.
                    let i = failed.partition_point(|(r, _)| *r <= row);
                    EvalError::Function {
                        message: failed
                            .get(i.saturating_sub(1))
                            .map_or_else(String::new, |(_, m)| m.clone()),
                        row,
                    }
                }
            })
    }
}

pub(super) fn overflow(what: &str, t: &DataType) -> ErrorKind {
    ErrorKind::Overflow(format!("{} {what}", sql_type_name(t)))
}
