//! Mathematical functions. Domain errors (`sqrt(-1)`, `ln(0)`) are errors naming
//! the row, as in PostgreSQL, raised only for rows whose value is used.

use arrow::datatypes::Float64Type;
use arrow_schema::DataType;
use broadhead_codegen::CmpOp;

use super::row::map1;
use super::Registry;

const F: DataType = DataType::Float64;

pub(super) fn register(r: &mut Registry) {
    r.function("sqrt")
        .example("sqrt(2.25)", "1.5")
        .intrinsic_sig(
            &[F],
            "the square root; negative x is an error",
            map1::<Float64Type, Float64Type, _>(|x: f64| {
                if x < 0.0 {
                    Err("cannot take square root of a negative number".into())
                } else {
                    Ok(Some(x.sqrt()))
                }
            })
            .fallible(),
            "llvm.sqrt",
            Some((CmpOp::Lt, 0.0)),
        );
    r.function("floor")
        .example("floor(-1.5)", "-2.0")
        .intrinsic_sig(
            &[F],
            "the largest integral value not above x",
            map1::<Float64Type, Float64Type, _>(|x: f64| Ok(Some(x.floor()))),
            "llvm.floor",
            None,
        );
}
