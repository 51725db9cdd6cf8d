//! Errors: one `thiserror` enum per stage, wrapped in [`enum@Error`].

use thiserror::Error;

use crate::span::Span;

/// Any error Broadhead returns.
#[derive(Debug, Error)]
pub enum Error {
    /// The expression text is not valid SQL, or uses an unsupported construct.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The expression does not fit the schema (unknown column, type mismatch, …).
    #[error(transparent)]
    Bind(#[from] BindError),
    /// Evaluation failed on the data (division by zero, overflow, wrong batch, …).
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// The LLVM back end failed; this is a bug in Broadhead, please report it.
    #[error("internal compiler error: {0}")]
    Compile(String),
    /// An Arrow error from a kernel the interpreter called.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The expression text could not be parsed.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{message} at {span}")]
pub struct ParseError {
    /// What is wrong.
    pub message: String,
    /// Where, in the expression text.
    pub span: Span,
}

/// The expression does not fit the schema.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{message} at {span}")]
pub struct BindError {
    /// What is wrong, with suggestions where there are any.
    pub message: String,
    /// Where, in the expression text.
    pub span: Span,
}

/// Evaluation failed on a batch.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum EvalError {
    /// Division or modulo by zero.
    #[error("division by zero at row {row}")]
    DivisionByZero {
        /// The row (0-based, in the batch) whose value raised it.
        row: usize,
    },
    /// A result or conversion out of its type's range.
    #[error("{what} out of range at row {row}")]
    Overflow {
        /// What overflowed, e.g. "BIGINT addition" or "cast to TINYINT".
        what: String,
        /// The row (0-based, in the batch) whose value raised it.
        row: usize,
    },
    /// A function failed on a row (`sqrt` of a negative number, an invalid string
    /// cast to a number).
    #[error("{message} at row {row}")]
    Function {
        /// Why, e.g. "cannot take square root of a negative number".
        message: String,
        /// The row (0-based, in the batch) whose value raised it.
        row: usize,
    },
    /// The batch does not have the schema the expression was compiled for.
    #[error("batch does not match the compiled schema: {0}")]
    SchemaMismatch(String),
    /// The batch is too long for the requested selection vector mode.
    #[error("a batch of {rows} rows does not fit a {mode} selection vector (at most {max} rows)")]
    SelectionTooSmall {
        /// The batch length.
        rows: usize,
        /// The selection vector mode.
        mode: &'static str,
        /// The largest batch the mode can index.
        max: usize,
    },
    /// Another runtime problem, described.
    #[error("{0}")]
    Other(String),
}

impl EvalError {
    /// The same error with its row number moved by `offset` (for errors found in a slice).
    pub fn shifted(self, offset: usize) -> EvalError {
        self.map_row(|row| row + offset)
    }

    /// The same error with its row number replaced by `f(row)`.
    pub fn map_row(self, f: impl FnOnce(usize) -> usize) -> EvalError {
        match self {
            EvalError::DivisionByZero { row } => EvalError::DivisionByZero { row: f(row) },
            EvalError::Overflow { what, row } => EvalError::Overflow { what, row: f(row) },
            EvalError::Function { message, row } => EvalError::Function {
                message,
                row: f(row),
            },
            other => other,
        }
    }

    /// The row (0-based, in the batch) the error is about, if it names one.
    pub fn row(&self) -> Option<usize> {
        match self {
            EvalError::DivisionByZero { row }
            | EvalError::Overflow { row, .. }
            | EvalError::Function { row, .. } => Some(*row),
            _ => None,
        }
    }

    /// The message without its row (for callers that name the row themselves).
    pub fn without_row(&self) -> String {
        match self {
            EvalError::DivisionByZero { .. } => "division by zero".into(),
            EvalError::Overflow { what, .. } => format!("{what} out of range"),
            EvalError::Function { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }
}

impl Error {
    /// The position in the expression text this error points at, if any.
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::Parse(e) => Some(e.span),
            Error::Bind(e) => Some(e.span),
            _ => None,
        }
        .filter(|s| s.is_known())
    }

    /// The message followed by the expression text with a caret under the position,
    /// when the error points into the text:
    ///
    /// ```text
    /// unknown column 'l_quantiy' (did you mean 'l_quantity'?) at line 1, column 1
    ///   l_quantiy < 24
    ///   ^^^^^^^^^
    /// ```
    ///
    /// Control characters in the message and the line are escaped
    /// ([`crate::escape`]), the caret staying under the escaped text.
    pub fn render(&self, source: &str) -> String {
        use crate::escape::{escape, shown_width};
        let mut out = escape(&self.to_string()).into_owned();
        if let Some(span) = self.span() {
            if let Some(line) = source.lines().nth(span.line as usize - 1) {
                let start = span.column as usize - 1;
                let end = (span.end_column as usize).saturating_sub(1).max(start + 1);
                let pad = line.chars().take(start).map(shown_width).sum::<usize>();
                let width = line
                    .chars()
                    .skip(start)
                    .take(end - start)
                    .map(shown_width)
                    .sum::<usize>()
                    .max(1);
                out.push_str(&format!(
                    "\n  {}\n  {}{}",
                    escape(line),
                    " ".repeat(pad),
                    "^".repeat(width)
                ));
            }
        }
        out
    }
}
