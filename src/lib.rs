//! Broadhead: an LLVM JIT expression engine for Apache Arrow.
//!
//! SQL expressions are parsed into a node tree ([`Expr`]), bound to an Arrow schema,
//! optimized, lowered to a vectorized kernel program and compiled to native code with
//! LLVM, all through one path: [`prepare::Prepared`]. A [`Filter`] returns the
//! selected rows of a batch; a [`Projector`] computes new columns. The [`interpret`]
//! module evaluates the same typed expressions with Arrow compute kernels: it is the
//! reference the JIT is tested against and the baseline it is measured against.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Float64Array, RecordBatch};
//! use arrow::datatypes::{DataType, Field, Schema};
//! use broadhead::{Filter, SelectionMode};
//!
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("l_discount", DataType::Float64, false),
//!     Field::new("l_quantity", DataType::Float64, false),
//! ]));
//! let batch = RecordBatch::try_new(schema.clone(), vec![
//!     Arc::new(Float64Array::from(vec![0.06, 0.02, 0.05, 0.07])),
//!     Arc::new(Float64Array::from(vec![10.0, 5.0, 30.0, 23.0])),
//! ])?;
//! let q6 = Filter::new(&schema, "l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24")?;
//! let rows = q6.evaluate_with_mode(&batch, SelectionMode::UInt16)?;
//! assert_eq!(rows.iter().collect::<Vec<_>>(), vec![0, 3]);
//! # Ok::<(), broadhead::Error>(())
//! ```

#![warn(missing_docs)]

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod background;
/// The binder, a stage of [`prepare::Prepared`]: hidden from the documentation, for
/// the crate's own tests and integrations; callers go through `Prepared`.
#[doc(hidden)]
pub mod bind;
pub mod cache;
pub mod decimal;
mod decode;
mod dictionary;
pub mod disk_cache;
pub mod error;
pub mod escape;
pub mod explain;
pub mod expr;
mod filter;
pub mod functions;
mod inputs;
pub mod interpret;
mod kernel;
mod layout;
mod lower;
/// The optimizer, a stage of [`prepare::Prepared`]: hidden from the documentation,
/// for the crate's own tests; callers go through `Prepared`.
#[doc(hidden)]
pub mod optimize;
mod outputs;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod prepare;
mod projector;
pub mod prune;
pub mod scalar;
/// Another name for [`crate::parquet`], where the scan lived first.
#[cfg(feature = "parquet")]
pub use crate::parquet as scan;
mod selection;
mod span;
pub mod sql;
mod strings;
mod struct_fields;
pub mod tier;
mod time;
pub mod typed;
pub mod types;

pub use broadhead_codegen::Pipeline;
pub use cache::{CacheStats, KernelCache, Upgrade};
pub use disk_cache::DiskCache;
pub use error::{BindError, Error, EvalError, ParseError, Result};
pub use explain::{Backend, Explanation, InterpretedNode};
pub use expr::{and, call, case, col, lit, null, or, Expr, ExprKind, Span};
pub use filter::Filter;
pub use projector::Projector;
pub use scalar::ScalarValue;
pub use selection::{SelectionMode, SelectionVector};
pub use tier::{CompilePolicy, TierStats};
