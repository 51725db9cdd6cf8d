//! TPC-H Q1, Q6, Q12, Q14 and Q19 over generated Parquet (scale 0.01), with
//! DECIMAL(15,2) and with DOUBLE prices: the same answers with and without the rule,
//! and the share of expressions compiled.

mod common;

use broadhead_datafusion::Semantics;
use broadhead_tpch::{register_tables, write_tables, Decimals, QUERIES};
use common::{plain_context, plan_coverage, rows, with_rule};

async fn same_answers(decimals: Decimals) {
    let dir = tempfile::tempdir().unwrap();
    write_tables(dir.path(), 0.01, decimals).unwrap();
    let plain = plain_context();
    register_tables(&plain, dir.path()).await.unwrap();
    let compiled = with_rule(&plain, Semantics::DataFusion);
    for (name, sql) in QUERIES {
        let want = rows(&plain, sql).await.unwrap();
        assert!(!want.is_empty(), "{name}");
        let got = rows(&compiled, sql).await.unwrap();
        assert_eq!(want, got, "{name} ({decimals:?})");
        let c = plan_coverage(&compiled, sql).await;
        assert!(c.compiled_operators > 0, "{name} ({decimals:?}): {c}");
    }
}

#[tokio::test]
async fn tpch_with_decimals() {
    same_answers(Decimals::Decimal).await;
}

#[tokio::test]
async fn tpch_with_doubles() {
    same_answers(Decimals::Double).await;
}
