//! The main job on built-in data: compile two predicates and run them over generated
//! batches, with the JIT and with the interpreter.
//!
//! ```text
//! cargo run --release --example demo
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{Array, ArrayRef, AsArray, Date32Array, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::util::pretty::pretty_format_batches;
use broadhead::bind::bind_predicate;
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::sql::parse_expr;
use broadhead::{Filter, SelectionMode, SelectionVector};

const ROWS: usize = 6_000_000;
const BATCH: usize = 8_192;

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (self.next() >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo)
    }
}

/// Lineitem-like columns with TPC-H's value ranges: quantity 1–50, discount 0–0.10 in
/// cents, ship dates 1992-01-02 … 1998-12-01; plus `x` uniform in [0, 10).
fn generate() -> (SchemaRef, Vec<RecordBatch>) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Float64, false),
        Field::new("l_quantity", DataType::Float64, false),
        Field::new("l_extendedprice", DataType::Float64, false),
        Field::new("l_discount", DataType::Float64, false),
        Field::new("l_shipdate", DataType::Date32, false),
    ]));
    let mut rng = Rng(42);
    let mut batches = Vec::new();
    for start in (0..ROWS).step_by(BATCH) {
        let n = BATCH.min(ROWS - start);
        let mut col = |f: &mut dyn FnMut(&mut Rng) -> f64| -> ArrayRef {
            Arc::new(Float64Array::from_iter_values((0..n).map(|_| f(&mut rng))))
        };
        let x = col(&mut |r| r.uniform(0.0, 10.0));
        let quantity = col(&mut |r| (r.next() % 50 + 1) as f64);
        let price = col(&mut |r| (r.uniform(900.0, 105_000.0) * 100.0).round() / 100.0);
        let discount = col(&mut |r| (r.next() % 11) as f64 / 100.0);
        let shipdate: ArrayRef = Arc::new(Date32Array::from_iter_values(
            (0..n).map(|_| 8036 + (rng.next() % 2525) as i32),
        ));
        batches.push(
            RecordBatch::try_new(schema.clone(), vec![x, quantity, price, discount, shipdate])
                .expect("schema"),
        );
    }
    (schema, batches)
}

fn run(name: &str, sql: &str, schema: &Schema, batches: &[RecordBatch]) -> broadhead::Result<()> {
    let start = Instant::now();
    let filter = Filter::new(schema, sql)?;
    let compile = start.elapsed();

    // JIT: one reused selection vector for the whole stream.
    let mut selection = SelectionVector::new(SelectionMode::UInt32);
    let mut jit_count = 0;
    let mut jit_time = Duration::ZERO;
    for batch in batches {
        let t = Instant::now();
        filter.evaluate_into(batch, &mut selection)?;
        jit_time += t.elapsed();
        jit_count += selection.len();
    }

    // Interpreter: the same typed, optimized expression on arrow kernels.
    let typed = optimize(bind_predicate(&parse_expr(sql)?, schema)?);
    let mut interpreted_count = 0;
    let mut interpreted_time = Duration::ZERO;
    for batch in batches {
        let t = Instant::now();
        let mask = interpret(&typed, batch)?;
        let mask = mask.as_boolean();
        interpreted_count += (0..mask.len())
            .filter(|&i| mask.is_valid(i) && mask.value(i))
            .count();
        interpreted_time += t.elapsed();
    }
    assert_eq!(
        jit_count, interpreted_count,
        "the JIT and the interpreter must agree"
    );

    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    println!("== {name}: {sql}");
    println!("   rows scanned:  {rows}");
    println!("   rows selected: {jit_count} (interpreter: {interpreted_count})");
    println!("   compile:       {:.2} ms", compile.as_secs_f64() * 1e3);
    println!(
        "   jit:           {:.1} ms ({:.2} ns/row)",
        jit_time.as_secs_f64() * 1e3,
        jit_time.as_secs_f64() * 1e9 / rows as f64
    );
    println!(
        "   interpreter:   {:.1} ms ({:.2} ns/row), {:.1}x the JIT's time",
        interpreted_time.as_secs_f64() * 1e3,
        interpreted_time.as_secs_f64() * 1e9 / rows as f64,
        interpreted_time.as_secs_f64() / jit_time.as_secs_f64().max(1e-12)
    );
    let first = filter.filter_record_batch(&batches[0])?;
    let shown = first.slice(0, first.num_rows().min(5));
    println!(
        "   first selected rows:\n{}\n",
        pretty_format_batches(&[shown]).map_err(broadhead::Error::Arrow)?
    );
    Ok(())
}

fn main() {
    let (schema, batches) = generate();
    let jobs = [
        ("seed predicate", "x > 2.0 AND x < 6.0"),
        (
            "TPC-H Q6",
            "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
             AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
        ),
    ];
    for (name, sql) in jobs {
        if let Err(e) = run(name, sql, &schema, &batches) {
            eprintln!("{name}: {}", e.render(sql));
            std::process::exit(1);
        }
    }
}
