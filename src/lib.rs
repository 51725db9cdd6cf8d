//! Broadhead: an LLVM JIT expression engine for Apache Arrow.

pub mod error;
pub mod expr;
pub mod scalar;
pub mod sql;
pub mod types;

pub use error::{BindError, Error, EvalError, ParseError, Result};
pub use expr::{and, call, case, col, lit, null, or, Expr, ExprKind, Span};
pub use scalar::ScalarValue;
