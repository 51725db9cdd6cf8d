//! Prints the optimized IR or the assembly of a projection over the benchmark's
//! synthetic schema, to read what a kernel compiles to.
//!
//! ```text
//! cargo run --release --example kernel_asm -- "i * 3 + j" [--ir]
//! ```

use arrow::datatypes::{DataType, Field, Schema};
use broadhead::{Backend, Projector};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(sql) = args.first() else {
        eprintln!("usage: kernel_asm <expression> [--ir]");
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
    ]);
    let explained = Projector::new(&schema, &[sql.as_str()]).and_then(|p| p.explain());
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
