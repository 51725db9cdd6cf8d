//! `broadhead._native`: the extension module under the Python package `broadhead`
//! (python/broadhead). It compiles and runs filters and projections over Arrow data
//! that crosses from Python through the Arrow PyCapsule interface, without copying
//! it; the package's Python code turns pandas and polars frames into Arrow and the
//! results back into the caller's kind of object.
//!
//! The GIL is released while compiling, evaluating and scanning; Ctrl-C is checked
//! between batches.

use pyo3::prelude::*;

/// The allocator of the extension's Rust code (see python/Cargo.toml): a 10 M-row
/// result column allocated per call is then reused memory, not 20,000 page faults.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod catalog;
mod data;
mod errors;
mod filter;
mod scan;
mod select;

/// The module's contents: the classes, functions and exceptions `broadhead`
/// re-exports.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<filter::Filter>()?;
    m.add_class::<select::Select>()?;
    m.add_class::<scan::Scanner>()?;
    m.add_function(wrap_pyfunction!(scan::scan_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::functions, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::columns_used, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
