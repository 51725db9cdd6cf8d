//! String functions. Lengths and positions count characters (Unicode code points),
//! not bytes; case mapping is Unicode's. Regular expressions use the `regex` crate
//! with PostgreSQL's defaults (`.` matches a newline) and flags; each pattern is
//! compiled once per thread ([`regexp::with_regex`]).
//!
//! One file per kind of function; [`register`] calls them in a fixed order, which
//! is the order of the registry (the binder tries signatures in that order).

mod build;
mod case;
mod cut;
mod encode;
mod measure;
mod regexp;
mod search;

use arrow_schema::DataType;

use super::Registry;

pub(crate) use build::joined;

const S: DataType = DataType::Utf8;
const I: DataType = DataType::Int64;
const INT: DataType = DataType::Int32;
const B: DataType = DataType::Boolean;

pub(super) fn register(r: &mut Registry) {
    case::case(r);
    measure::measure(r);
    cut::cut(r);
    build::build(r);
    search::search(r);
    regexp::regular_expressions(r);
    encode::encode(r);
    measure::similarity(r);
}
