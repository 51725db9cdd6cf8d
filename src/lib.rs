//! Broadhead: an LLVM JIT expression engine for Apache Arrow.

pub mod bind;
pub mod error;
pub mod expr;
pub mod interpret;
pub mod registry;
pub mod scalar;
pub mod sql;
pub mod typed;
pub mod types;

pub use error::{BindError, Error, EvalError, ParseError, Result};
pub use expr::{and, call, case, col, lit, null, or, Expr, ExprKind, Span};
pub use scalar::ScalarValue;
