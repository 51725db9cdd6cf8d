//! Compile time of wide expressions: `a IN (0, …, k-1)` and `a = 0 OR … OR a = k-1`
//! through `Filter` (parse, bind, optimize, lower, compile), and, for comparison,
//! the comparison-chain program an `IN` list compiled to before lookups (k ≤ 1,000:
//! the chain takes minutes beyond that). Pass `--chain` to include it, and
//! `--nodes` for the compile time of ORs of distinct comparisons by kernel size
//! (what `lower::MAX_JIT_NODES` is set from).
//!
//! ```text
//! cargo run --example wide_compile [-- --chain --nodes]
//! ```

use std::sync::Arc;
use std::time::Instant;

use arrow::datatypes::{DataType, Field, Schema};
use broadhead::sql::parse_expr;
use broadhead::{Filter, KernelCache, Pipeline};
use broadhead_codegen::{
    compile, ByteLayout, CmpOp, CompileOptions, InputSpec, Mode, Node, PType, Program,
};

fn main() -> broadhead::Result<()> {
    let schema = Schema::new(vec![Field::new("a", DataType::Int64, true)]);
    let chain = std::env::args().any(|a| a == "--chain");
    for k in [10usize, 100, 1_000, 10_000] {
        let items: Vec<String> = (0..k).map(|i| i.to_string()).collect();
        let in_list = format!("a IN ({})", items.join(", "));
        let ors: Vec<String> = (0..k).map(|i| format!("a = {i}")).collect();
        let ors = ors.join(" OR ");
        for (what, text) in [("IN", &in_list), ("OR", &ors)] {
            let e = parse_expr(text)?;
            let cache = Arc::new(KernelCache::new(4, 1 << 30).with_pipeline(Pipeline::O3));
            let t = Instant::now();
            let f = Filter::with_cache(&schema, &e, &cache)?;
            println!(
                "{what:>2} {k:>6} items: {:>9.3} s ({})",
                t.elapsed().as_secs_f64(),
                if f.is_jit() {
                    "compiled"
                } else {
                    "interpreted"
                }
            );
        }
        if chain && k <= 1_000 {
            let mut nodes = vec![Node::Input(0)];
            nodes.extend((0..k).map(Node::Param));
            nodes.push(Node::InList {
                x: 0,
                values: (1..=k).collect(),
                has_null: false,
                negated: false,
            });
            let seconds = compile_seconds(nodes, k)?;
            println!("   {k:>6} items as a comparison chain (before): {seconds:>9.3} s");
        }
    }
    if std::env::args().any(|a| a == "--nodes") {
        // What the node limit is measured on: an OR of k comparisons with different
        // parameters (2k + 2 nodes), compiled directly.
        for k in [250usize, 500, 1_000, 2_000] {
            let mut nodes = vec![Node::Input(0)];
            let mut ors = Vec::new();
            for i in 0..k {
                nodes.push(Node::Param(i));
                nodes.push(Node::Cmp(CmpOp::Gt, 0, nodes.len() - 1));
                ors.push(nodes.len() - 1);
            }
            nodes.push(Node::Or(ors));
            let n = nodes.len();
            let seconds = compile_seconds(nodes, k)?;
            println!("OR of {k:>5} comparisons ({n:>5} nodes): {seconds:>9.3} s");
        }
    }
    Ok(())
}

/// Seconds to compile a filter program of `nodes` over one nullable BIGINT input with
/// `params` BIGINT parameters (its last node is the predicate).
fn compile_seconds(nodes: Vec<Node>, params: usize) -> broadhead::Result<f64> {
    let program = Program {
        outputs: vec![nodes.len() - 1],
        nodes,
        inputs: vec![InputSpec {
            ty: PType::I64,
            nullable: true,
            layout: ByteLayout::Offsets32,
            stored_as_i128: false,
        }],
        params: vec![PType::I64; params],
        mode: Mode::Filter,
    };
    let t = Instant::now();
    compile(
        &program,
        CompileOptions {
            explain: false,
            pipeline: Pipeline::O3,
        },
    )
    .map_err(|e| broadhead::Error::Compile(e.to_string()))?;
    Ok(t.elapsed().as_secs_f64())
}
