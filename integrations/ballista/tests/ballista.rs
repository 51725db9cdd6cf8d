//! `BroadheadCodec` without a cluster: physical plans with `BroadheadExpr`s encoded
//! to bytes and decoded again give the original plan (its text and its compiled
//! expressions) and the original's answers, which are plain DataFusion's; a damaged
//! or foreign payload is an error, never a panic or another plan. And on a
//! standalone Ballista cluster: TPC-H Q1 and Q6 give plain DataFusion's answers, and
//! the executor ran Broadhead kernels.
//!
//! (One test binary: each links DataFusion, Ballista and LLVM.)

use std::sync::Arc;

use arrow::array::{
    ArrayRef, Decimal128Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Schema};
use broadhead_ballista::BroadheadCodec;
use broadhead_datafusion::{coverage, evaluations, BroadheadExpr, BroadheadOptions, Semantics};
use broadhead_tpch::text_rows;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{plan_err, Result};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_common::physical_expr::proto_decode::{
    PhysicalExprDecode, PhysicalExprDecodeCtx,
};
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_proto::protobuf::PhysicalExprNode;

/// A table with NULLs in every column, integers that overflow when multiplied,
/// NaN and -0.0, Unicode strings and decimals.
fn table() -> RecordBatch {
    let a: ArrayRef = Arc::new(Int64Array::from(vec![
        Some(1),
        None,
        Some(3),
        Some(-7),
        Some(10_000_000),
        Some(i64::MAX),
        Some(42),
        Some(0),
    ]));
    let b: ArrayRef = Arc::new(Int32Array::from(vec![
        Some(2),
        Some(0),
        None,
        Some(255),
        Some(-3),
        Some(1),
        Some(16),
        Some(0),
    ]));
    let f: ArrayRef = Arc::new(Float64Array::from(vec![
        Some(1.0),
        Some(f64::NAN),
        Some(-0.0),
        None,
        Some(2.5),
        Some(f64::INFINITY),
        Some(-1.5),
        Some(0.0),
    ]));
    let s: ArrayRef = Arc::new(StringArray::from(vec![
        Some("apple"),
        Some("Ärger"),
        None,
        Some("x"),
        Some("日本語"),
        Some(""),
        Some("xylophone"),
        Some("APPLE"),
    ]));
    let d: ArrayRef = Arc::new(
        Decimal128Array::from(vec![
            Some(1234),
            Some(-50),
            None,
            Some(999_999_999_999_999),
            Some(0),
            Some(1001),
            Some(-999_999_999_999_999),
            Some(7),
        ])
        .with_precision_and_scale(15, 2)
        .unwrap(),
    );
    RecordBatch::try_from_iter([("a", a), ("b", b), ("f", f), ("s", s), ("d", d)]).unwrap()
}

/// A context with `t` (the table) and `ts` (the table without its first row: a
/// slice at a non-zero offset), one partition.
fn plain() -> SessionContext {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    let t = table();
    ctx.register_batch("t", t.clone()).unwrap();
    ctx.register_batch("ts", t.slice(1, t.num_rows() - 1))
        .unwrap();
    ctx
}

fn with_rule(ctx: &SessionContext, semantics: Semantics) -> SessionContext {
    broadhead_datafusion::register_with(ctx, BroadheadOptions { semantics })
}

/// Each row of `batches` as text, sorted.
fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = text_rows(batches).unwrap();
    out.sort();
    out
}

/// `sql`'s physical plan in `ctx`.
async fn physical_plan(ctx: &SessionContext, sql: &str) -> Arc<dyn ExecutionPlan> {
    let df = ctx.sql(sql).await.unwrap();
    df.create_physical_plan().await.unwrap()
}

/// The `BroadheadExpr`s of `plan`'s filters and projections, with the schema of
/// the node they are evaluated on.
fn broadhead_exprs(plan: &Arc<dyn ExecutionPlan>) -> Vec<(BroadheadExpr, Arc<Schema>)> {
    let mut out = vec![];
    plan.apply(|node| {
        let mut exprs: Vec<Arc<dyn PhysicalExpr>> = vec![];
        if let Some(f) = node.downcast_ref::<FilterExec>() {
            exprs.push(Arc::clone(f.predicate()));
        }
        if let Some(p) = node.downcast_ref::<ProjectionExec>() {
            exprs.extend(p.expr().iter().map(|e| Arc::clone(&e.expr)));
        }
        let schema = node.children().first().map(|c| c.schema());
        for e in exprs {
            e.apply(|x| {
                if let Some(b) = x.downcast_ref::<BroadheadExpr>() {
                    out.push((b.clone(), schema.clone().unwrap()));
                }
                Ok(TreeNodeRecursion::Continue)
            })?;
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .unwrap();
    out
}

/// `plan` encoded with a `BroadheadCodec` and decoded again.
fn round_trip(
    plan: &Arc<dyn ExecutionPlan>,
    ctx: &SessionContext,
) -> Result<Arc<dyn ExecutionPlan>> {
    let codec = BroadheadCodec::default();
    let bytes = physical_plan_to_bytes_with_extension_codec(Arc::clone(plan), &codec)?;
    physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)
}

/// Runs `sql` without the rule, with it, and with it after a round trip through the
/// codec; checks the three answers are equal and the decoded plan is the original.
/// Returns the decoded plan.
async fn check(sql: &str, semantics: Semantics) -> Arc<dyn ExecutionPlan> {
    let plain = plain();
    let compiled = with_rule(&plain, semantics);
    let want = rows(&plain.sql(sql).await.unwrap().collect().await.unwrap());
    assert!(!want.is_empty(), "{sql}");
    let plan = physical_plan(&compiled, sql).await;
    let c = coverage(&plan);
    assert!(c.compiled_operators > 0, "{sql}: nothing compiled ({c})");
    let decoded = round_trip(&plan, &compiled).unwrap();
    assert_eq!(
        displayable(plan.as_ref()).indent(true).to_string(),
        displayable(decoded.as_ref()).indent(true).to_string(),
        "{sql}"
    );
    assert_eq!(coverage(&decoded), c, "{sql}");
    let (before, after) = (broadhead_exprs(&plan), broadhead_exprs(&decoded));
    assert_eq!(before.len(), after.len(), "{sql}");
    for ((x, _), (y, _)) in before.iter().zip(&after) {
        assert_eq!(x, y, "{sql}");
        assert_eq!(x.parts().unwrap(), y.parts().unwrap(), "{sql}");
    }
    let original = rows(&collect(plan, compiled.task_ctx()).await.unwrap());
    assert_eq!(want, original, "{sql}: with the rule");
    let got = rows(
        &collect(Arc::clone(&decoded), compiled.task_ctx())
            .await
            .unwrap(),
    );
    assert_eq!(want, got, "{sql}: after the codec");
    decoded
}

#[tokio::test]
async fn filters_and_projections_round_trip() {
    for table in ["t", "ts"] {
        for sql in [
            "SELECT a + 1 AS x, upper(s) AS u FROM {t} WHERE a > 2 AND s IS NOT NULL",
            "SELECT a * 2 - b AS x, s || '!' AS y, d + d AS z FROM {t}",
            "SELECT a, s FROM {t} WHERE s LIKE 'x%' OR s IS NULL OR b IN (0, 16)",
            "SELECT CASE WHEN d > 10 THEN d * 2 ELSE d END AS c, coalesce(s, 'none') AS s FROM {t}",
            "SELECT CAST(b AS BIGINT) + a AS x FROM {t} WHERE NOT (b IS NULL)",
        ] {
            check(&sql.replace("{t}", table), Semantics::DataFusion).await;
        }
    }
}

/// An input DataFusion computes (`to_hex`, which Broadhead does not translate) is the
/// extension node's child, encoded by DataFusion, and stays DataFusion's.
#[tokio::test]
async fn a_datafusion_child_round_trips() {
    let sql = "SELECT character_length(to_hex(a)) * 2 AS n FROM t WHERE to_hex(b) <> 'ff'";
    let decoded = check(sql, Semantics::DataFusion).await;
    let exprs = broadhead_exprs(&decoded);
    let datafusion_inputs: Vec<String> = exprs
        .iter()
        .flat_map(|(b, _)| {
            b.inputs()
                .iter()
                .filter(|i| !i.is::<Column>())
                .map(|i| i.to_string())
        })
        .collect();
    assert!(
        datafusion_inputs.iter().any(|i| i.contains("to_hex")),
        "{datafusion_inputs:?}"
    );
}

/// With DataFusion's semantics, batches the kernel cannot answer alike (an overflow,
/// a NaN or -0.0 in a float comparison) are evaluated by DataFusion's expression,
/// which the codec carries: after a round trip it still answers them.
#[tokio::test]
async fn datafusion_fallback_round_trips() {
    let before = evaluations().by_datafusion;
    check(
        "SELECT a * 1000000000000 AS x FROM t",
        Semantics::DataFusion,
    )
    .await;
    check("SELECT a FROM t WHERE f < 1.5", Semantics::DataFusion).await;
    assert!(evaluations().by_datafusion > before);
}

#[tokio::test]
async fn broadhead_semantics_round_trip() {
    check(
        "SELECT a / b AS q FROM t WHERE b <> 0 AND b IS NOT NULL",
        Semantics::Broadhead,
    )
    .await;
    check(
        "SELECT a FROM t WHERE f < 1.5 OR f = 'NaN'::double",
        Semantics::Broadhead,
    )
    .await;
}

/// A decoder for nested expressions that has none to give (payloads under test
/// carry no valid nested expression).
struct NoNested;

impl PhysicalExprDecode for NoNested {
    fn decode(&self, _: &PhysicalExprNode, _: &Schema) -> Result<Arc<dyn PhysicalExpr>> {
        plan_err!("no nested expression")
    }
}

#[test]
fn damaged_payloads_are_errors() {
    let codec = BroadheadCodec::default();
    let schema = Schema::empty();
    let ctx = PhysicalExprDecodeCtx::new(&schema, &NoNested);
    let magic = b"broadhead-expr\x01".to_vec();
    let with_crc = |body: &[u8]| {
        let mut buf = magic.clone();
        buf.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
        buf.extend_from_slice(body);
        buf
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty (not Broadhead's)", vec![]),
        ("foreign", b"\x0a\x03abc".to_vec()),
        ("another version", b"broadhead-expr\x02\0\0\0\0".to_vec()),
        ("no checksum", magic.clone()),
        ("half a checksum", [magic.as_slice(), &[1, 2]].concat()),
        (
            "wrong checksum",
            [magic.as_slice(), &[0, 0, 0, 0], b"\x0a\x01x"].concat(),
        ),
        ("not protobuf", with_crc(&[0xff; 16])),
        ("no fields", with_crc(&[])),
        ("only the SQL", with_crc(b"\x0a\x05a > 1")),
    ];
    for (what, buf) in cases {
        let err = codec.try_decode_expr(&buf, &[], &ctx).unwrap_err();
        assert!(!err.to_string().is_empty(), "{what}");
    }
}

/// Every single-byte change of an encoded plan's Broadhead payloads (their name,
/// version, checksum and the start of their body) is an error: never a panic, never
/// another plan.
#[tokio::test]
async fn every_byte_of_a_payload_is_checked() {
    let ctx = with_rule(&plain(), Semantics::DataFusion);
    let sql = "SELECT a + 1 AS x FROM t WHERE a > 2";
    let plan = physical_plan(&ctx, sql).await;
    let codec = BroadheadCodec::default();
    let bytes = physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), &codec).unwrap();
    let magic = b"broadhead-expr\x01";
    let starts: Vec<usize> = bytes
        .windows(magic.len())
        .enumerate()
        .filter(|(_, w)| *w == magic)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(starts.len(), 2, "a filter and a projection");
    for &start in &starts {
        for i in start..(start + magic.len() + 4 + 24).min(bytes.len()) {
            let mut damaged = bytes.to_vec();
            damaged[i] ^= 0x20;
            match physical_plan_from_bytes_with_extension_codec(&damaged, &ctx.task_ctx(), &codec) {
                Err(_) => {}
                Ok(p) => panic!(
                    "byte {i} changed, decoded anyway:\n{}",
                    displayable(p.as_ref()).indent(true)
                ),
            }
        }
    }
}

/// `from_parts` checks what it rebuilds against what the parts say.
#[tokio::test]
async fn parts_that_do_not_match_are_errors() {
    let ctx = with_rule(&plain(), Semantics::DataFusion);
    let sql = "SELECT a + 1 AS x, upper(s) AS u FROM t WHERE a > 2";
    let plan = physical_plan(&ctx, sql).await;
    let exprs = broadhead_exprs(&plan);
    assert!(!exprs.is_empty());
    for (b, schema) in exprs {
        let parts = b.parts().unwrap();
        let inputs = b.inputs().to_vec();
        let again = BroadheadExpr::from_parts(parts.clone(), inputs.clone(), &schema).unwrap();
        assert_eq!(again, b);

        let mut p = parts.clone();
        p.sql = "1.5e0".into(); // another type
        assert!(BroadheadExpr::from_parts(p, inputs.clone(), &schema).is_err());
        let mut p = parts.clone();
        p.sql = "no_such_column + 1".into();
        assert!(BroadheadExpr::from_parts(p, inputs.clone(), &schema).is_err());
        let mut p = parts.clone();
        p.sql = format!("{} +", p.sql);
        assert!(BroadheadExpr::from_parts(p, inputs.clone(), &schema).is_err());
        let mut p = parts.clone();
        p.kernel_type = DataType::Float16;
        assert!(BroadheadExpr::from_parts(p, inputs.clone(), &schema).is_err());
        let mut p = parts.clone();
        p.guarded = vec![99];
        assert!(BroadheadExpr::from_parts(p, inputs.clone(), &schema).is_err());
        assert!(BroadheadExpr::from_parts(parts.clone(), vec![], &schema).is_err());
        let mut more = inputs.clone();
        more.push(Arc::clone(&inputs[0]));
        assert!(BroadheadExpr::from_parts(parts.clone(), more, &schema).is_err());
        let other_type: Arc<dyn PhysicalExpr> = Arc::new(Column::new("f", 2));
        let wrong = vec![other_type; inputs.len()];
        assert!(BroadheadExpr::from_parts(parts, wrong, &schema).is_err());
    }
}

/// TPC-H Q1 and Q6 (scale 0.01) on a standalone Ballista cluster (a scheduler and an
/// executor in this process, over gRPC) with Broadhead: plain DataFusion's answers,
/// and the executor received Broadhead expressions and ran their kernels.
#[tokio::test(flavor = "multi_thread")]
async fn tpch_on_a_standalone_cluster() {
    use ballista::prelude::SessionContextExt;
    use broadhead_ballista::ballista_state;
    use broadhead_tpch::{query, register_tables, write_tables, Decimals};

    let dir = tempfile::tempdir().unwrap();
    write_tables(dir.path(), 0.01, Decimals::Decimal).unwrap();
    let plain = plain();
    register_tables(&plain, dir.path()).await.unwrap();
    let state = ballista_state(SessionConfig::new(), BroadheadOptions::default());
    let cluster = SessionContext::standalone_with_state(state).await.unwrap();
    register_tables(&cluster, dir.path()).await.unwrap();
    let kernel_batches = evaluations().by_kernel;
    for name in ["q1", "q6"] {
        let sql = query(name).unwrap();
        let want = rows(&plain.sql(sql).await.unwrap().collect().await.unwrap());
        assert!(!want.is_empty(), "{name}");
        let got = rows(&cluster.sql(sql).await.unwrap().collect().await.unwrap());
        assert_eq!(want, got, "{name}");
    }
    let decoded = BroadheadCodec::decoded();
    assert!(
        decoded.keys().any(|sql| sql.contains("l_shipdate")),
        "{decoded:?}"
    );
    assert!(evaluations().by_kernel > kernel_batches);
}
