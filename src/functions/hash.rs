//! Hash functions: `md5` and `sha256` (hexadecimal digests of a string's UTF-8
//! bytes), `crc32`, and `hash`, a 64-bit hash of any value.
//!
//! `hash(x)` is xxHash64 (XXH64) with seed 0 over the value's canonical bytes, and
//! so stable across Broadhead versions and platforms:
//!
//! | type | bytes hashed |
//! | --- | --- |
//! | signed integers, `DATE` (days since 1970-01-01) | the value as a 64-bit signed integer, little-endian |
//! | unsigned integers | the value as a 64-bit unsigned integer, little-endian |
//! | `REAL`, `DOUBLE` | the value as a `DOUBLE`, its IEEE 754 bits little-endian; -0.0 as 0.0 and every NaN as `0x7FF8000000000000` |
//! | `BOOLEAN` | one byte, 0 or 1 |
//! | `VARCHAR` | its UTF-8 bytes |
//! | `TIMESTAMP` | the stored 64-bit count of its unit (seconds, …, nanoseconds) since 1970-01-01 00:00:00 UTC, little-endian |
//!
//! So equal integers hash equally whatever their type (`hash(1) = hash(CAST(1 AS
//! SMALLINT))`), as do equal floats.

use arrow::datatypes::{
    Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_schema::{DataType, TimeUnit};
use md5::Digest as _;
use twox_hash::XxHash64;

use super::operators::comparable_types;
use super::row::{map1, Blob, Bool, RowImpl, Utf8};
use super::Registry;

/// Lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// XXH64 with seed 0: the documented algorithm of `hash(x)`.
fn xx(bytes: &[u8]) -> u64 {
    XxHash64::oneshot(0, bytes)
}

/// The canonical bytes of a float: as a DOUBLE, -0.0 as 0.0, one NaN.
fn float_bits(x: f64) -> [u8; 8] {
    let x = if x == 0.0 {
        0.0
    } else if x.is_nan() {
        f64::NAN
    } else {
        x
    };
    x.to_bits().to_le_bytes()
}

/// `hash(x)` over values of type `t`.
fn hash_of(t: &DataType) -> Option<RowImpl> {
    use DataType::*;
    use TimeUnit::*;
    macro_rules! signed {
        ($ty:ty) => {
            map1::<$ty, UInt64Type, _>(|v| Ok(Some(xx(&i64::from(v).to_le_bytes()))))
        };
    }
    macro_rules! unsigned {
        ($ty:ty) => {
            map1::<$ty, UInt64Type, _>(|v| Ok(Some(xx(&u64::from(v).to_le_bytes()))))
        };
    }
    Some(match t {
        Int8 => signed!(Int8Type),
        Int16 => signed!(Int16Type),
        Int32 => signed!(Int32Type),
        Int64 => signed!(Int64Type),
        Date32 => signed!(Date32Type),
        Timestamp(Second, _) => signed!(TimestampSecondType),
        Timestamp(Millisecond, _) => signed!(TimestampMillisecondType),
        Timestamp(Microsecond, _) => signed!(TimestampMicrosecondType),
        Timestamp(Nanosecond, _) => signed!(TimestampNanosecondType),
        UInt8 => unsigned!(UInt8Type),
        UInt16 => unsigned!(UInt16Type),
        UInt32 => unsigned!(UInt32Type),
        UInt64 => unsigned!(UInt64Type),
        Float32 => map1::<Float32Type, UInt64Type, _>(|v: f32| Ok(Some(xx(&float_bits(v.into()))))),
        Float64 => map1::<Float64Type, UInt64Type, _>(|v: f64| Ok(Some(xx(&float_bits(v))))),
        Boolean => map1::<Bool, UInt64Type, _>(|v: bool| Ok(Some(xx(&[u8::from(v)])))),
        Utf8 => map1::<self::Utf8, UInt64Type, _>(|s: &str| Ok(Some(xx(s.as_bytes())))),
        Binary => map1::<Blob, UInt64Type, _>(|b: &[u8]| Ok(Some(xx(b)))),
        _ => return None,
    })
}

pub(super) fn register(r: &mut Registry) {
    let s = || DataType::Utf8;
    r.function("md5")
        .example("md5('abc')", "900150983cd24fb0d6963f7d28e17f72")
        .sig(
            &[s()],
            s(),
            "the MD5 digest of the string's UTF-8 bytes, in lower-case hexadecimal",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(hex(&md5::Md5::digest(s.as_bytes()))))),
        )
        .sig(
            &[DataType::Binary],
            s(),
            "the MD5 digest of a BLOB's bytes, in lower-case hexadecimal",
            map1::<Blob, Utf8, _>(|b: &[u8]| Ok(Some(hex(&md5::Md5::digest(b))))),
        );
    r.function("sha256")
        .example(
            "sha256('abc')",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        )
        .sig(
            &[s()],
            s(),
            "the SHA-256 digest of the string's UTF-8 bytes, in lower-case hexadecimal",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(hex(&sha2::Sha256::digest(s.as_bytes()))))),
        )
        .sig(
            &[DataType::Binary],
            s(),
            "the SHA-256 digest of a BLOB's bytes, in lower-case hexadecimal",
            map1::<Blob, Utf8, _>(|b: &[u8]| Ok(Some(hex(&sha2::Sha256::digest(b))))),
        );
    r.function("sha512")
        .example(
            "sha512('abc')",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        )
        .sig(
            &[s()],
            s(),
            "the SHA-512 digest of the string's UTF-8 bytes, in lower-case hexadecimal",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(hex(&sha2::Sha512::digest(s.as_bytes()))))),
        )
        .sig(
            &[DataType::Binary],
            s(),
            "the SHA-512 digest of a BLOB's bytes, in lower-case hexadecimal",
            map1::<Blob, Utf8, _>(|b: &[u8]| Ok(Some(hex(&sha2::Sha512::digest(b))))),
        );
    r.function("crc32")
        .example(
            "crc32('The quick brown fox jumps over the lazy dog')",
            "1095738169",
        )
        .sig(
            &[s()],
            DataType::Int64,
            "the CRC-32 (ISO-HDLC, as zlib's crc32) of the string's UTF-8 bytes, 0 to 4294967295",
            map1::<Utf8, Int64Type, _>(|s: &str| {
                Ok(Some(i64::from(crc32fast::hash(s.as_bytes()))))
            }),
        );
    for t in comparable_types() {
        if let Some(imp) = hash_of(&t) {
            r.function("hash").sig(
                &[t],
                DataType::UInt64,
                "a 64-bit hash of x: xxHash64, seed 0, over the value's canonical bytes (stable across versions)",
                imp,
            );
        }
    }
    r.function("hash")
        .example("hash('')", "17241709254077376921")
        .example("hash(1) = hash(CAST(1 AS SMALLINT))", "true");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_digests_and_canonical_floats() {
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
        assert_eq!(float_bits(-0.0), float_bits(0.0));
        assert_eq!(float_bits(-f64::NAN), float_bits(f64::NAN));
        // XXH64 of the empty input with seed 0 (the reference value).
        assert_eq!(xx(b""), 0xEF46DB3751D8E999);
    }
}
