//! TPC-H Q1's charge, `l_extendedprice * (1 - l_discount) * (1 + l_tax)`, projected
//! over DECIMAL(15,2) columns (computed in 64 bits) and DECIMAL(20,2) ones (128 bits):
//! the time to bind and compile each, and the time per row on an 8,192-row batch.
//! With `--asm P` it prints the kernel's assembly for precision `P` instead.
//!
//! ```text
//! cargo run --release --example decimal_charge_cost
//! cargo run --release --example decimal_charge_cost -- --asm 20 | grep -c movq
//! ```
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{ArrayRef, Decimal128Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::explain::Backend;
use broadhead::Projector;

const CHARGE: &str = "l_extendedprice * (1 - l_discount) * (1 + l_tax)";
const ROWS: usize = 8_192;
const CALLS: usize = 2_000;

fn batch(precision: u8) -> RecordBatch {
    let column = |f: &dyn Fn(i128) -> i128| -> ArrayRef {
        Arc::new(
            Decimal128Array::from_iter_values((0..ROWS as i128).map(f))
                .with_precision_and_scale(precision, 2)
                .expect("a valid decimal type"),
        )
    };
    let fields = ["l_extendedprice", "l_discount", "l_tax"]
        .map(|n| Field::new(n, DataType::Decimal128(precision, 2), false));
    RecordBatch::try_new(
        Arc::new(Schema::new(fields.to_vec())),
        vec![
            column(&|i| 90_000 + i * 7_919 % 10_000_000),
            column(&|i| i % 11),
            column(&|i| i % 9),
        ],
    )
    .expect("columns of the schema")
}

fn main() -> broadhead::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, p] = args.as_slice() {
        if flag == "--asm" {
            let precision = p.parse().unwrap_or(20);
            let projector = Projector::new(&batch(precision).schema(), &[CHARGE])?;
            if let Backend::Jit(compiled) = projector.explain()?.backend {
                println!("{}", compiled.assembly);
            }
            return Ok(());
        }
    }
    for precision in [15, 20] {
        let batch = batch(precision);
        let start = Instant::now();
        let projector = Projector::new(&batch.schema(), &[CHARGE])?;
        let compile = start.elapsed();
        let start = Instant::now();
        for _ in 0..CALLS {
            std::hint::black_box(projector.evaluate(&batch)?);
        }
        let per_row = start.elapsed().as_nanos() as f64 / (CALLS * ROWS) as f64;
        println!(
            "DECIMAL({precision},2): bind + compile {:.1} ms, {per_row:.2} ns per row",
            compile.as_secs_f64() * 1e3
        );
    }
    Ok(())
}
