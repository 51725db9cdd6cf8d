//! Prints how long compiling a predicate takes, by phase (a quick look; the criterion
//! benchmark `compile` is the measurement of record).
//!
//! ```text
//! cargo run --release --example compile_cost
//! ```

use std::time::Instant;

use arrow::datatypes::{DataType, Field, Schema};
use broadhead::bind::bind_predicate;
use broadhead::optimize::optimize;
use broadhead::sql::parse_expr;
use broadhead::Filter;

fn main() -> broadhead::Result<()> {
    let schema = Schema::new(vec![
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_discount", DataType::Float64, false),
        Field::new("l_quantity", DataType::Float64, false),
    ]);
    let q6 = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
              AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";
    let trivial = Filter::new(&schema, "l_quantity > 1")?;
    let t = trivial.compile_timings();
    println!(
        "trivial: ir {:?} + optimize {:?} + codegen {:?}",
        t.ir, t.optimize, t.codegen
    );
    for i in 0..5 {
        let t = Instant::now();
        let expr = parse_expr(q6)?;
        let parse = t.elapsed();
        let t = Instant::now();
        let _typed = optimize(bind_predicate(&expr, &schema)?);
        let bind = t.elapsed();
        let t = Instant::now();
        let filter = Filter::new(&schema, q6)?;
        let total = t.elapsed();
        let timings = filter.compile_timings();
        println!(
            "run {i}: parse {:?} bind+optimize {:?} | Filter::new {:?} = ir {:?} + optimize {:?} + codegen {:?} + rest",
            parse, bind, total, timings.ir, timings.optimize, timings.codegen
        );
    }
    Ok(())
}
