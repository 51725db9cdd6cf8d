//! [`BroadheadCodec`]: a `PhysicalExtensionCodec` that sends a [`BroadheadExpr`] as
//! its SQL text and recompiles it where it is received.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use arrow::datatypes::{DataType, Field, Schema};
use ballista_core::serde::BallistaPhysicalExtensionCodec;
use broadhead_datafusion::{BroadheadExpr, BroadheadExprParts, Purpose, Semantics};
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, HigherOrderUDF, ScalarUDF, WindowUDF};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_common::physical_expr::proto_decode::PhysicalExprDecodeCtx;
use datafusion::physical_expr_common::physical_expr::proto_encode::PhysicalExprEncodeCtx;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use datafusion_proto::protobuf::{
    ArrowType, Field as FieldProto, PhysicalExprNode, Schema as SchemaProto,
};
use prost::Message;

/// What a Broadhead payload starts with: a name no other codec's payload starts with,
/// and the version of the format after it.
const MAGIC: &[u8] = b"broadhead-expr\x01";

/// A `PhysicalExtensionCodec` for plans with [`BroadheadExpr`]s.
///
/// A `BroadheadExpr` is encoded as its SQL text, the schema of its inputs, its field,
/// the type its kernel returns, DataFusion's own expression (what a batch the kernel
/// cannot answer with DataFusion's semantics is evaluated by), its semantics and its
/// purpose, after a name, a format version and a CRC-32 of the rest. Its inputs (the
/// sub-expressions DataFusion computes) are the extension node's children, encoded
/// by DataFusion as usual (through this codec: they may hold `BroadheadExpr`s
/// themselves). Decoding parses the SQL and compiles it again through Broadhead's
/// kernel cache, and checks what it rebuilt against what was sent
/// ([`BroadheadExpr::from_parts`]): a payload that is damaged, from another format
/// version or does not compile to the same types is an error, not a different plan.
///
/// Every other node and expression, and every payload that is not Broadhead's, goes
/// to the wrapped codec: Ballista's by default ([`BroadheadCodec::default`]).
#[derive(Debug)]
pub struct BroadheadCodec {
    inner: Arc<dyn PhysicalExtensionCodec>,
}

impl Default for BroadheadCodec {
    /// Wraps Ballista's own codec (its shuffle readers and writers, and DataFusion's
    /// nodes).
    fn default() -> Self {
        BroadheadCodec::new(Arc::new(BallistaPhysicalExtensionCodec::default()))
    }
}

impl BroadheadCodec {
    /// A codec for `BroadheadExpr`s that passes everything else to `inner`.
    pub fn new(inner: Arc<dyn PhysicalExtensionCodec>) -> BroadheadCodec {
        BroadheadCodec { inner }
    }

    /// The Broadhead expressions decoded by any `BroadheadCodec` of this process so
    /// far (on an executor: the compiled expressions it was sent).
    pub fn decoded() -> DecodedExpressions {
        DECODED.lock().map(|d| d.clone()).unwrap_or_default()
    }
}

/// The Broadhead expressions this process has decoded (on a Ballista executor: the
/// ones it received), by SQL text, with how many times each was decoded.
pub type DecodedExpressions = BTreeMap<String, usize>;

static DECODED: Mutex<DecodedExpressions> = Mutex::new(BTreeMap::new());

/// The wire form of a [`BroadheadExpr`] (after [`MAGIC`] and a CRC-32).
#[derive(Clone, PartialEq, Message)]
struct BroadheadExprNode {
    #[prost(string, tag = "1")]
    sql: String,
    #[prost(message, optional, tag = "2")]
    input_schema: Option<SchemaProto>,
    #[prost(message, optional, tag = "3")]
    field: Option<FieldProto>,
    #[prost(message, optional, tag = "4")]
    kernel_type: Option<ArrowType>,
    #[prost(uint64, repeated, tag = "5")]
    guarded: Vec<u64>,
    /// 0: DataFusion's, 1: Broadhead's.
    #[prost(uint32, tag = "6")]
    semantics: u32,
    /// 0: a predicate, 1: a value.
    #[prost(uint32, tag = "7")]
    purpose: u32,
    #[prost(uint64, tag = "8")]
    operators: u64,
    /// DataFusion's expression, over the plan node's input.
    #[prost(message, optional, tag = "9")]
    datafusion_expr: Option<PhysicalExprNode>,
}

fn damaged(what: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Plan(format!("damaged Broadhead expression payload: {what}"))
}

fn encode(b: &BroadheadExpr, buf: &mut Vec<u8>, ctx: &PhysicalExprEncodeCtx<'_>) -> Result<()> {
    let p = b.parts()?;
    let node = BroadheadExprNode {
        sql: p.sql,
        input_schema: Some(SchemaProto::try_from(p.input_schema.as_ref())?),
        field: Some(FieldProto::try_from(p.field.as_ref())?),
        kernel_type: Some(ArrowType::try_from(&p.kernel_type)?),
        guarded: p.guarded.iter().map(|&g| g as u64).collect(),
        semantics: match p.semantics {
            Semantics::DataFusion => 0,
            Semantics::Broadhead => 1,
        },
        purpose: match p.purpose {
            Purpose::Predicate => 0,
            Purpose::Value => 1,
        },
        operators: p.operators as u64,
        datafusion_expr: Some(ctx.encode_child(&p.datafusion_expr)?),
    };
    let body = node.encode_to_vec();
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    buf.extend_from_slice(&body);
    Ok(())
}

fn decode(
    payload: &[u8],
    inputs: &[Arc<dyn PhysicalExpr>],
    ctx: &PhysicalExprDecodeCtx<'_>,
) -> Result<BroadheadExpr> {
    let (crc, body) = payload
        .split_first_chunk::<4>()
        .ok_or_else(|| damaged("it ends before its checksum"))?;
    if u32::from_le_bytes(*crc) != crc32fast::hash(body) {
        return Err(damaged("its checksum does not match"));
    }
    let node = BroadheadExprNode::decode(body).map_err(damaged)?;
    let required = |field: &str| damaged(format_args!("{field} is missing"));
    let input_schema: Schema = node
        .input_schema
        .as_ref()
        .ok_or_else(|| required("the input schema"))?
        .try_into()
        .map_err(damaged)?;
    let field: Field = node
        .field
        .as_ref()
        .ok_or_else(|| required("the field"))?
        .try_into()
        .map_err(damaged)?;
    let kernel_type: DataType = node
        .kernel_type
        .as_ref()
        .ok_or_else(|| required("the kernel's type"))?
        .try_into()
        .map_err(damaged)?;
    let datafusion_expr = ctx.decode(
        node.datafusion_expr
            .as_ref()
            .ok_or_else(|| required("DataFusion's expression"))?,
    )?;
    let parts = BroadheadExprParts {
        sql: node.sql,
        input_schema: Arc::new(input_schema),
        field: Arc::new(field),
        kernel_type,
        guarded: node
            .guarded
            .iter()
            .map(|&g| usize::try_from(g).map_err(damaged))
            .collect::<Result<_>>()?,
        semantics: match node.semantics {
            0 => Semantics::DataFusion,
            1 => Semantics::Broadhead,
            s => return Err(damaged(format_args!("unknown semantics {s}"))),
        },
        purpose: match node.purpose {
            0 => Purpose::Predicate,
            1 => Purpose::Value,
            p => return Err(damaged(format_args!("unknown purpose {p}"))),
        },
        operators: usize::try_from(node.operators).map_err(damaged)?,
        datafusion_expr,
    };
    BroadheadExpr::from_parts(parts, inputs.to_vec(), ctx.schema())
}

impl PhysicalExtensionCodec for BroadheadCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.inner.try_decode(buf, inputs, ctx, proto_converter)
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        self.inner.try_encode(node, buf, proto_converter)
    }

    fn try_decode_expr(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn PhysicalExpr>],
        ctx: &PhysicalExprDecodeCtx<'_>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let Some(payload) = buf.strip_prefix(MAGIC) else {
            return self.inner.try_decode_expr(buf, inputs, ctx);
        };
        let expr = decode(payload, inputs, ctx)?;
        if let Ok(mut decoded) = DECODED.lock() {
            *decoded.entry(expr.sql().to_string()).or_default() += 1;
        }
        Ok(Arc::new(expr))
    }

    fn try_encode_expr(
        &self,
        node: &Arc<dyn PhysicalExpr>,
        buf: &mut Vec<u8>,
        ctx: &PhysicalExprEncodeCtx<'_>,
    ) -> Result<()> {
        match node.downcast_ref::<BroadheadExpr>() {
            Some(b) => encode(b, buf, ctx),
            None => self.inner.try_encode_expr(node, buf, ctx),
        }
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.inner.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_higher_order_function(
        &self,
        name: &str,
        buf: &[u8],
    ) -> Result<Arc<HigherOrderUDF>> {
        self.inner.try_decode_higher_order_function(name, buf)
    }

    fn try_encode_higher_order_function(
        &self,
        node: &HigherOrderUDF,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.inner.try_encode_higher_order_function(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}
