//! Functions about the engine itself.

use arrow::datatypes::{
    ArrowPrimitiveType, Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_schema::DataType;

use super::row::{map1, Bool, Slice, Utf8};
use super::{Lowering, Registry, RowImpl};

/// The identity over one primitive type.
fn same<T: ArrowPrimitiveType>() -> RowImpl {
    map1::<T, T, _>(|x: T::Native| Ok(Some(x)))
}

pub(super) fn register(r: &mut Registry) {
    const DOC: &str = "x itself, computed by the interpreter: the JIT never compiles this \
                       call, so the kernel reads its value as an input (to compare the back \
                       ends, or to test the fallback)";
    let ts = |u| DataType::Timestamp(u, None);
    use arrow_schema::TimeUnit::*;
    let f = r.function("interpreted");
    f.example("interpreted(1 + 1)", "2");
    let sigs: Vec<(DataType, RowImpl)> = vec![
        (DataType::Int8, same::<Int8Type>()),
        (DataType::Int16, same::<Int16Type>()),
        (DataType::Int32, same::<Int32Type>()),
        (DataType::Int64, same::<Int64Type>()),
        (DataType::UInt8, same::<UInt8Type>()),
        (DataType::UInt16, same::<UInt16Type>()),
        (DataType::UInt32, same::<UInt32Type>()),
        (DataType::UInt64, same::<UInt64Type>()),
        (DataType::Float32, same::<Float32Type>()),
        (DataType::Float64, same::<Float64Type>()),
        (DataType::Date32, same::<Date32Type>()),
        (ts(Second), same::<TimestampSecondType>()),
        (ts(Millisecond), same::<TimestampMillisecondType>()),
        (ts(Microsecond), same::<TimestampMicrosecondType>()),
        (ts(Nanosecond), same::<TimestampNanosecondType>()),
        (
            DataType::Boolean,
            map1::<Bool, Bool, _>(|x: bool| Ok(Some(x))),
        ),
        (
            DataType::Utf8,
            map1::<Utf8, Slice, _>(|s: &str| Ok(Some(0..s.len()))),
        ),
    ];
    for (t, imp) in sigs {
        f.lowered_sig(
            std::slice::from_ref(&t),
            t.clone(),
            DOC,
            imp,
            Lowering::Interpreted("interpreted() is computed by the interpreter"),
        );
    }
}
