//! CSV text of record batches: byte for byte what `arrow_csv::Writer` writes with its
//! defaults (a header line, `,` between fields, `\n` after each record, NULL as an
//! empty field, quotes only where the `csv` crate puts them), faster.
//!
//! Why not `arrow_csv`: it formats every value through `arrow_cast`'s display
//! formatters (`core::fmt` behind a `dyn Write`), copies it into a `ByteRecord`, then
//! checks it for quotes. `perf record` of the Q6 rows written as CSV (TPC-H SF1, 1
//! thread) put 23 % of the process's time there, on the main thread
//! (docs/performance-notes.md). Here integers, decimals, dates, booleans and text are
//! written straight into the output buffer; any other type goes through the same
//! display formatter `arrow_csv` uses, so its text is the same. The tests compare the
//! two on generated batches of every type.

use arrow::array::{Array, ArrowPrimitiveType, AsArray, BooleanArray, PrimitiveArray, RecordBatch};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Decimal32Type, Decimal64Type, Int16Type, Int32Type,
    Int64Type, Int8Type, Schema, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};

/// Appends the header line: the field names.
pub fn header(schema: &Schema, out: &mut Vec<u8>) {
    let names: Vec<&[u8]> = schema
        .fields()
        .iter()
        .map(|f| f.name().as_bytes())
        .collect();
    let start = out.len();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        field(name, out);
    }
    end_record(out, start);
}

/// Appends the rows of `batch`, one line each.
pub fn rows(batch: &RecordBatch, out: &mut Vec<u8>) -> Result<(), ArrowError> {
    let options = FormatOptions::default().with_null("");
    let cells = batch
        .columns()
        .iter()
        .map(|a| Cells::new(a.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()?;
    let mut text = String::new();
    for row in 0..batch.num_rows() {
        let start = out.len();
        for (col, cells) in cells.iter().enumerate() {
            if col > 0 {
                out.push(b',');
            }
            cells.write(row, out, &mut text).map_err(|e| {
                ArrowError::CsvError(format!(
                    "Error processing row {}, col {}: {e}",
                    row + 1,
                    col + 1
                ))
            })?;
        }
        end_record(out, start);
    }
    Ok(())
}

/// Ends the record that began at byte `start` of `out`: a record of one empty field
/// is written `""` (an empty line would read as no record), as the `csv` crate does.
fn end_record(out: &mut Vec<u8>, start: usize) {
    if out.len() == start {
        out.extend_from_slice(b"\"\"");
    }
    out.push(b'\n');
}

/// Appends a text field, in quotes (doubled inside) when it holds a `,`, a quote, or
/// a line break, as the `csv` crate's `QuoteStyle::Necessary` does.
fn field(bytes: &[u8], out: &mut Vec<u8>) {
    if !bytes
        .iter()
        .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
    {
        out.extend_from_slice(bytes);
        return;
    }
    out.push(b'"');
    for &b in bytes {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// How one column's values are written.
enum Cells<'a> {
    Int(&'a dyn Array, fn(&dyn Array, usize) -> i128),
    Decimal(&'a dyn Array, Decimal<'a>),
    Date(&'a PrimitiveArray<Date32Type>, ArrayFormatter<'a>),
    Bool(&'a BooleanArray),
    Text(&'a dyn Array),
    /// Through `arrow_cast`'s display formatter, as `arrow_csv` does.
    Other(ArrayFormatter<'a>),
}

/// A decimal column: the value at a row, its precision and scale, and the formatter
/// for values with more digits than the precision (which `arrow_cast` cuts).
struct Decimal<'a> {
    value: fn(&dyn Array, usize) -> i128,
    precision: usize,
    scale: i8,
    formatter: ArrayFormatter<'a>,
}

impl<'a> Cells<'a> {
    fn new(array: &'a dyn Array, options: &FormatOptions<'a>) -> Result<Cells<'a>, ArrowError> {
        if array.data_type().is_nested() {
            return Err(ArrowError::CsvError(format!(
                "Nested type {} is not supported in CSV",
                array.data_type()
            )));
        }
        fn int<T: ArrowPrimitiveType>(a: &dyn Array, i: usize) -> i128
        where
            T::Native: Into<i128>,
        {
            a.as_primitive::<T>().value(i).into()
        }
        let formatter = || ArrayFormatter::try_new(array, options);
        let decimal = |value, precision: u8, scale| -> Result<Cells<'a>, ArrowError> {
            Ok(Cells::Decimal(
                array,
                Decimal {
                    value,
                    precision: precision.into(),
                    scale,
                    formatter: formatter()?,
                },
            ))
        };
        Ok(match array.data_type() {
            DataType::Int8 => Cells::Int(array, int::<Int8Type>),
            DataType::Int16 => Cells::Int(array, int::<Int16Type>),
            DataType::Int32 => Cells::Int(array, int::<Int32Type>),
            DataType::Int64 => Cells::Int(array, int::<Int64Type>),
            DataType::UInt8 => Cells::Int(array, int::<UInt8Type>),
            DataType::UInt16 => Cells::Int(array, int::<UInt16Type>),
            DataType::UInt32 => Cells::Int(array, int::<UInt32Type>),
            DataType::UInt64 => Cells::Int(array, int::<UInt64Type>),
            DataType::Decimal32(p, s) => decimal(int::<Decimal32Type>, *p, *s)?,
            DataType::Decimal64(p, s) => decimal(int::<Decimal64Type>, *p, *s)?,
            DataType::Decimal128(p, s) => decimal(int::<Decimal128Type>, *p, *s)?,
            DataType::Date32 => Cells::Date(array.as_primitive::<Date32Type>(), formatter()?),
            DataType::Boolean => Cells::Bool(array.as_boolean()),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Cells::Text(array),
            _ => Cells::Other(formatter()?),
        })
    }

    /// Appends the field of row `row`; `text` is scratch space.
    fn write(&self, row: usize, out: &mut Vec<u8>, text: &mut String) -> Result<(), ArrowError> {
        let array: &dyn Array = match self {
            Cells::Int(a, _) | Cells::Decimal(a, _) | Cells::Text(a) => *a,
            Cells::Date(a, _) => *a,
            Cells::Bool(a) => *a,
            Cells::Other(_) => {
                return self.formatted(row, out, text);
            }
        };
        if array.is_null(row) {
            return Ok(());
        }
        match self {
            Cells::Int(a, value) => {
                out.extend_from_slice(itoa::Buffer::new().format(value(*a, row)).as_bytes())
            }
            Cells::Decimal(a, d) => {
                let mut digits = itoa::Buffer::new();
                let digits = digits.format((d.value)(*a, row)).as_bytes();
                let (sign, rest) = match digits.split_first() {
                    Some((b'-', rest)) => (&digits[..1], rest),
                    _ => (&digits[..0], digits),
                };
                let scale = d.scale;
                if rest.len() > d.precision {
                    // More digits than the precision: `arrow_cast` cuts them.
                    return self.formatted(row, out, text);
                } else if scale <= 0 {
                    out.extend_from_slice(digits);
                    out.resize(out.len() + usize::from(scale.unsigned_abs()), b'0');
                } else if rest.len() > scale as usize {
                    let (whole, fraction) = digits.split_at(digits.len() - scale as usize);
                    out.extend_from_slice(whole);
                    out.push(b'.');
                    out.extend_from_slice(fraction);
                } else {
                    out.extend_from_slice(sign);
                    out.extend_from_slice(b"0.");
                    out.resize(out.len() + scale as usize - rest.len(), b'0');
                    out.extend_from_slice(rest);
                }
            }
            Cells::Date(a, _) => match civil(a.value(row)) {
                Some((y, m, d)) => {
                    let digit = |v: u32| b'0' + (v % 10) as u8;
                    out.extend_from_slice(&[
                        digit(y / 1000),
                        digit(y / 100),
                        digit(y / 10),
                        digit(y),
                        b'-',
                        digit(m / 10),
                        digit(m),
                        b'-',
                        digit(d / 10),
                        digit(d),
                    ]);
                }
                // Years before 1 or after 9999: chrono's text (`+10000-01-01`).
                None => return self.formatted(row, out, text),
            },
            Cells::Bool(a) => out.extend_from_slice(match a.value(row) {
                true => b"true",
                false => b"false",
            }),
            Cells::Text(a) => {
                let bytes = match a.data_type() {
                    DataType::Utf8 => a.as_string::<i32>().value(row),
                    DataType::LargeUtf8 => a.as_string::<i64>().value(row),
                    _ => a.as_string_view().value(row),
                };
                field(bytes.as_bytes(), out);
            }
            Cells::Other(_) => unreachable!("formatted above"),
        }
        Ok(())
    }

    /// Appends the field of row `row` as `arrow_cast`'s display formatter writes it.
    fn formatted(
        &self,
        row: usize,
        out: &mut Vec<u8>,
        text: &mut String,
    ) -> Result<(), ArrowError> {
        let formatter = match self {
            Cells::Decimal(_, d) => &d.formatter,
            Cells::Date(_, f) | Cells::Other(f) => f,
            _ => unreachable!("only decimals, dates and others are formatted"),
        };
        text.clear();
        formatter.value(row).write(text)?;
        field(text.as_bytes(), out);
        Ok(())
    }
}

/// The year (1 to 9999), month and day of a DATE (days since 1970-01-01); `None`
/// for other years. Howard Hinnant's `civil_from_days`.
fn civil(days: i32) -> Option<(u32, u32, u32)> {
    let z = i64::from(days) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (1..=9999)
        .contains(&year)
        .then_some((year as u32, month as u32, day as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{
        ArrayRef, BinaryArray, Date32Array, Decimal128Array, Decimal32Array, Decimal64Array,
        Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array,
        LargeStringArray, StringArray, StringViewArray, Time64MicrosecondArray,
        TimestampMicrosecondArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
    };
    use arrow::datatypes::Field;
    use std::sync::Arc;

    /// What `arrow_csv` writes for `batches` (with the header).
    fn arrow_csv(batches: &[RecordBatch]) -> String {
        let mut out = Vec::new();
        {
            let mut writer = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut out);
            for b in batches {
                writer.write(b).unwrap();
            }
        }
        String::from_utf8(out).unwrap()
    }

    /// What this module writes for `batches` (with the header).
    fn ours(batches: &[RecordBatch]) -> String {
        let mut out = Vec::new();
        header(&batches[0].schema(), &mut out);
        for b in batches {
            rows(b, &mut out).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    /// A pseudo-random sequence (the same every run).
    fn sequence(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(columns).unwrap()
    }

    #[test]
    fn every_type_as_arrow_csv_writes_it() {
        let mut next = sequence(0x5eed);
        let rows = 2_000;
        // Extremes first, then values of every size.
        let mut ints = vec![i64::MIN, i64::MAX, 0, -1, 1];
        ints.extend((0..rows - 5).map(|_| (next() as i64) >> (next() % 64)));
        let null = |next: &mut dyn FnMut() -> u64| next() % 7 == 0;
        let mut with_nulls = |f: &dyn Fn(i64) -> i64| -> Vec<Option<i64>> {
            ints.iter()
                .map(|&v| (!null(&mut next)).then(|| f(v)))
                .collect()
        };
        let i64s = with_nulls(&|v| v);
        let mut narrow = |bits: u32| with_nulls(&|v| v >> (64 - bits));
        let i8s: Vec<Option<i8>> = narrow(8).iter().map(|v| v.map(|v| v as i8)).collect();
        let i16s: Vec<Option<i16>> = narrow(16).iter().map(|v| v.map(|v| v as i16)).collect();
        let i32s: Vec<Option<i32>> = narrow(32).iter().map(|v| v.map(|v| v as i32)).collect();
        let days: Vec<Option<i32>> = narrow(32)
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.map(|v| match i % 4 {
                    // Years 1 to 9999 and around them, and the whole range.
                    0 => (v % 3_700_000) as i32,
                    1 => -719_162 - (v % 400) as i32,
                    2 => 2_932_896 + (v % 400) as i32,
                    _ => v as i32 / 1000,
                })
            })
            .collect();
        let mut text_next = sequence(7);
        let words = [
            "",
            "a,b",
            "say \"hi\"",
            "line\nbreak",
            "cr\rhere",
            "日本語",
            "plain",
            " ",
        ];
        let texts: Vec<Option<String>> = (0..rows)
            .map(|_| {
                (text_next() % 9 != 0).then(|| {
                    (0..text_next() % 3)
                        .map(|_| words[(text_next() % 8) as usize])
                        .collect::<String>()
                })
            })
            .collect();
        let decimal128 = |p: u8, s: i8| -> ArrayRef {
            let bound = 10i128.pow(u32::from(p));
            let values = i64s.iter().map(|v| v.map(|v| i128::from(v) * 977 % bound));
            Arc::new(
                Decimal128Array::from_iter(values)
                    .with_precision_and_scale(p, s)
                    .unwrap(),
            )
        };
        let b = batch(vec![
            ("i8", Arc::new(Int8Array::from(i8s.clone()))),
            ("i16", Arc::new(Int16Array::from(i16s.clone()))),
            ("i32", Arc::new(Int32Array::from(i32s.clone()))),
            ("i64", Arc::new(Int64Array::from(i64s.clone()))),
            (
                "u8",
                Arc::new(UInt8Array::from_iter(
                    i8s.iter().map(|v| v.map(|v| v as u8)),
                )),
            ),
            (
                "u16",
                Arc::new(UInt16Array::from_iter(
                    i16s.iter().map(|v| v.map(|v| v as u16)),
                )),
            ),
            (
                "u32",
                Arc::new(UInt32Array::from_iter(
                    i32s.iter().map(|v| v.map(|v| v as u32)),
                )),
            ),
            (
                "u64",
                Arc::new(UInt64Array::from_iter(
                    i64s.iter().map(|v| v.map(|v| v as u64)),
                )),
            ),
            (
                "d32",
                Arc::new(
                    Decimal32Array::from_iter(i32s.iter().map(|v| v.map(|v| v % 1_000_000)))
                        .with_precision_and_scale(6, 3)
                        .unwrap(),
                ),
            ),
            (
                "d64",
                Arc::new(
                    Decimal64Array::from(i64s.clone())
                        .with_precision_and_scale(18, 2)
                        .unwrap(),
                ),
            ),
            ("d128", decimal128(38, 10)),
            ("d128_scale0", decimal128(20, 0)),
            ("d128_negative_scale", decimal128(10, -3)),
            ("d128_all_fraction", decimal128(5, 5)),
            ("date", Arc::new(Date32Array::from(days))),
            (
                "bool",
                Arc::new(arrow::array::BooleanArray::from_iter(
                    i8s.iter().map(|v| v.map(|v| v % 2 == 0)),
                )),
            ),
            ("text", Arc::new(StringArray::from(texts.clone()))),
            ("large", Arc::new(LargeStringArray::from(texts.clone()))),
            ("view", Arc::new(StringViewArray::from(texts.clone()))),
            (
                "f64",
                Arc::new(Float64Array::from_iter(
                    i64s.iter().map(|v| v.map(|v| v as f64 / 1e5)),
                )),
            ),
            (
                "f32",
                Arc::new(Float32Array::from_iter(
                    i32s.iter().map(|v| v.map(|v| v as f32 / 7.0)),
                )),
            ),
            (
                "ts",
                Arc::new(TimestampMicrosecondArray::from(narrow(52)).with_timezone("+02:00")),
            ),
            (
                "time",
                Arc::new(Time64MicrosecondArray::from(
                    i64s.iter()
                        .map(|v| v.map(|v| v.rem_euclid(86_400_000_000)))
                        .collect::<Vec<_>>(),
                )),
            ),
            (
                "bin",
                Arc::new(BinaryArray::from_iter(
                    texts.iter().map(|t| t.as_ref().map(|t| t.as_bytes())),
                )),
            ),
        ]);
        // Sliced batches, and one of no rows.
        let batches = [b.slice(0, 1_500), b.slice(1_500, 0), b.slice(1_500, 500)];
        let expected = arrow_csv(&batches);
        assert!(expected.contains("\"a,b\"") && expected.contains("+10000-"));
        assert_eq!(ours(&batches), expected);
    }

    #[test]
    fn one_column_records_and_awkward_names() {
        for names in [vec![""], vec!["a,b"], vec!["say \"x\"", ""]] {
            let columns = names
                .iter()
                .map(|&n| {
                    let array: ArrayRef = Arc::new(StringArray::from(vec![
                        Some(""),
                        None,
                        Some("x"),
                        Some("\""),
                    ]));
                    (n, array)
                })
                .collect::<Vec<_>>();
            let batches = [batch(columns)];
            assert_eq!(ours(&batches), arrow_csv(&batches), "{names:?}");
        }
        let empty = RecordBatch::new_empty(Arc::new(Schema::new(vec![Field::new(
            "n",
            DataType::Int64,
            true,
        )])));
        assert_eq!(ours(std::slice::from_ref(&empty)), "n\n");
        assert_eq!(arrow_csv(&[empty]), "n\n");
    }

    #[test]
    fn errors_name_the_row_and_column() {
        // A date beyond chrono's range: arrow_cast refuses to format it.
        let b = batch(vec![
            ("n", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            ("d", Arc::new(Date32Array::from(vec![0, i32::MAX]))),
        ]);
        let mut out = Vec::new();
        let ours = rows(&b, &mut out).unwrap_err().to_string();
        let mut sink = Vec::new();
        let theirs = arrow::csv::Writer::new(&mut sink)
            .write(&b)
            .unwrap_err()
            .to_string();
        assert_eq!(ours, theirs);
        assert!(ours.contains("row 2, col 2"), "{ours}");
    }
}
