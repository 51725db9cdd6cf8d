//! Positions in the expression text, carried by the tree and its errors.

use std::fmt;

/// A position in the expression text (1-based line and column); `0` means unknown.
///
/// Spans are carried for error messages only: two spans always compare equal,
/// so trees compare by structure.
#[derive(Debug, Clone, Copy, Default)]
pub struct Span {
    /// Line of the first character (1-based), 0 if unknown.
    pub line: u32,
    /// Column of the first character (1-based), 0 if unknown.
    pub column: u32,
    /// Column one past the last character on the same line, 0 if unknown.
    pub end_column: u32,
}

impl Span {
    /// An unknown position (used by the builder API).
    pub const NONE: Span = Span {
        line: 0,
        column: 0,
        end_column: 0,
    };

    /// Whether this span points at a real position.
    pub fn is_known(&self) -> bool {
        self.line > 0 && self.column > 0
    }

    /// The smallest span covering both (on one line), or whichever is known.
    pub fn union(self, other: Span) -> Span {
        match (self.is_known(), other.is_known()) {
            (false, _) => other,
            (_, false) => self,
            _ if self.line != other.line => self,
            _ => Span {
                line: self.line,
                column: self.column.min(other.column),
                end_column: self.end_column.max(other.end_column),
            },
        }
    }
}

impl PartialEq for Span {
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_known() {
            write!(f, "line {}, column {}", self.line, self.column)
        } else {
            write!(f, "unknown position")
        }
    }
}
