//! Prints the optimized IR or the assembly of a projection (or, with `--filter`, a
//! filter) over the benchmark's synthetic schema (and a second string column `t`,
//! for shapes such as Q19's on two; and lineitem's `l_extendedprice`, `l_discount`
//! and `l_tax` as DECIMAL(15,2), for Q1's charge), to read what a kernel compiles to.
//!
//! ```text
//! cargo run --release --example kernel_asm -- "i * 3 + j" [--ir]
//! cargo run --release --example kernel_asm -- "(a < 10 OR b < 10) AND c > 90" --filter
//! ```
//!
//! It prints the first tier's code (`Pipeline::Quick`) unless `--o3` asks for the
//! code hot kernels are upgraded to.

use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

use broadhead::sql::parse_expr;
use broadhead::{Backend, Filter, KernelCache, Pipeline, Projector};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(sql) = args.first() else {
        eprintln!("usage: kernel_asm <expression> [--ir] [--filter] [--o3]");
        std::process::exit(2);
    };
    let schema = Schema::new(vec![
        Field::new("a", DataType::Float64, false),
        Field::new("b", DataType::Float64, false),
        Field::new("c", DataType::Float64, false),
        Field::new("i", DataType::Int64, true),
        Field::new("j", DataType::Int64, false),
        Field::new("k", DataType::Int32, false),
        Field::new("s", DataType::Utf8, false),
        Field::new("t", DataType::Utf8, false),
        Field::new("l_extendedprice", DataType::Decimal128(15, 2), false),
        Field::new("l_discount", DataType::Decimal128(15, 2), false),
        Field::new("l_tax", DataType::Decimal128(15, 2), false),
    ]);
    let pipeline = if args.iter().any(|a| a == "--o3") {
        Pipeline::O3
    } else {
        Pipeline::Quick
    };
    let cache = Arc::new(KernelCache::new(16, 64 << 20).with_pipeline(pipeline));
    let explained = match parse_expr(sql) {
        Ok(expr) if args.iter().any(|a| a == "--filter") => {
            Filter::with_cache(&schema, &expr, &cache).and_then(|f| f.explain())
        }
        Ok(expr) => Projector::with_cache(&schema, &[expr], &cache).and_then(|p| p.explain()),
        Err(e) => Err(e.into()),
    };
    match explained {
        Ok(e) => match e.backend {
            Backend::Jit(c) if args.iter().any(|a| a == "--ir") => println!("{}", c.optimized_ir),
            Backend::Jit(c) => println!("{}", c.assembly),
            Backend::Interpreted(reason) => println!("interpreted: {reason}"),
        },
        Err(e) => {
            eprintln!("{}", e.render(sql));
            std::process::exit(2);
        }
    }
}
