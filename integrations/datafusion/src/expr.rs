//! [`BroadheadExpr`]: a DataFusion [`PhysicalExpr`] computed by a compiled Broadhead
//! kernel.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, FieldRef, Float32Type, Float64Type, Schema, SchemaRef};
use broadhead::sql::parse_expr;
use broadhead::{Expr, Filter, Projector};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{plan_err, DataFusionError, Result};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::PhysicalExpr;

use crate::translate::{translate, Translation};
use crate::Semantics;

/// What a [`BroadheadExpr`] is used for, which decides the kernel it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// The whole predicate of a filter: computed as a mask that is TRUE where the
    /// predicate is TRUE and FALSE elsewhere (NULL is FALSE, as a filter reads it).
    Predicate,
    /// Any other value: computed as DataFusion computes it, NULLs included.
    Value,
}

/// A DataFusion expression computed by a Broadhead kernel.
///
/// Its children are its *inputs*: the columns and the sub-expressions DataFusion
/// computes first (the parts Broadhead does not translate), which the kernel reads as
/// the columns of its input batch. The kernel is compiled once, when the expression is
/// made; cloning, and replacing the inputs by expressions of the same types, reuse it.
#[derive(Clone)]
pub struct BroadheadExpr {
    compiled: Arc<Compiled>,
    inputs: Vec<Arc<dyn PhysicalExpr>>,
}

struct Compiled {
    /// The Broadhead expression's SQL text, over the input batch's columns.
    sql: String,
    /// The schema of the input batch.
    input_schema: SchemaRef,
    /// DataFusion's expression over the input batch: what a batch the kernel cannot
    /// answer with DataFusion's semantics is evaluated by.
    fallback: Arc<dyn PhysicalExpr>,
    kernel: Kernel,
    /// DataFusion's field of the expression (its type, nullability and metadata).
    field: FieldRef,
    /// Float inputs whose values are checked (no NaN, no `-0.0`) before the kernel
    /// runs, with DataFusion semantics.
    guarded: Vec<usize>,
    semantics: Semantics,
    purpose: Purpose,
    operators: usize,
}

enum Kernel {
    Filter(Filter),
    Projector(Projector),
}

impl Kernel {
    /// Compiles `expr` (over `input_schema`) through the process's kernel cache.
    fn compile(
        input_schema: &SchemaRef,
        expr: &Expr,
        purpose: Purpose,
    ) -> broadhead::Result<Kernel> {
        Ok(match purpose {
            Purpose::Predicate => Kernel::Filter(Filter::from_expr(input_schema, expr)?),
            Purpose::Value => Kernel::Projector(Projector::from_exprs(
                input_schema,
                std::slice::from_ref(expr),
            )?),
        })
    }

    /// The type of the array the kernel returns.
    fn data_type(&self) -> DataType {
        match self {
            Kernel::Filter(_) => DataType::Boolean,
            Kernel::Projector(p) => p.output_fields()[0].data_type().clone(),
        }
    }
}

/// Everything a [`BroadheadExpr`] is made of but its compiled kernel: what a codec
/// sends to another process (a Ballista executor), where
/// [`BroadheadExpr::from_parts`] compiles the kernel again.
#[derive(Debug, Clone)]
pub struct BroadheadExprParts {
    /// The Broadhead expression's SQL text, over the columns of `input_schema`.
    pub sql: String,
    /// The schema of the batch of inputs the kernel reads (one column per input).
    pub input_schema: SchemaRef,
    /// DataFusion's field of the expression (its type, nullability and metadata).
    pub field: FieldRef,
    /// The type of the array the kernel returns (`field`'s type, or the same values
    /// in another string layout): the recompiled kernel must return it too.
    pub kernel_type: DataType,
    /// The float inputs whose values are checked (no NaN, no `-0.0`) before the
    /// kernel runs, with DataFusion semantics.
    pub guarded: Vec<usize>,
    /// Whose semantics the expression follows.
    pub semantics: Semantics,
    /// What the expression is used for (the kernel it runs).
    pub purpose: Purpose,
    /// How many of DataFusion's operators the kernel computes.
    pub operators: usize,
    /// DataFusion's expression the kernel computes, over the plan node's input (its
    /// sub-trees that are the inputs as they are): with DataFusion semantics, a batch
    /// the kernel cannot answer alike is evaluated by it.
    pub datafusion_expr: Arc<dyn PhysicalExpr>,
}

impl BroadheadExpr {
    /// Translates and compiles `expr` (over `schema`) when its root can be translated;
    /// `None` otherwise (then nothing of `expr` is compiled by this call). The inputs
    /// are `expr`'s sub-expressions as they are: see [`crate::BroadheadRule`] for
    /// the rewrite that also compiles sub-expressions of inputs.
    pub fn try_new(
        expr: &Arc<dyn PhysicalExpr>,
        schema: &Schema,
        semantics: Semantics,
        purpose: Purpose,
    ) -> Option<BroadheadExpr> {
        let t = translate(expr, schema, semantics)?;
        Self::compile(expr, schema, t, semantics, purpose)
    }

    fn compile(
        expr: &Arc<dyn PhysicalExpr>,
        schema: &Schema,
        t: Translation,
        semantics: Semantics,
        purpose: Purpose,
    ) -> Option<BroadheadExpr> {
        let input_schema = Arc::new(Schema::new(t.fields));
        let kernel = Kernel::compile(&input_schema, &t.expr, purpose).ok()?;
        let fallback = over_inputs(expr, &t.inputs, &input_schema).ok()?;
        Some(BroadheadExpr {
            compiled: Arc::new(Compiled {
                sql: t.expr.to_string(),
                input_schema,
                fallback,
                kernel,
                field: expr.return_field(schema).ok()?,
                guarded: t.guarded,
                semantics,
                purpose,
                operators: t.operators,
            }),
            inputs: t.inputs,
        })
    }

    /// What the expression is rebuilt from elsewhere (see [`BroadheadExprParts`]).
    pub fn parts(&self) -> Result<BroadheadExprParts> {
        let c = &self.compiled;
        let datafusion_expr = Arc::clone(&c.fallback)
            .transform_down(|node| match node.downcast_ref::<Column>() {
                Some(column) => Ok(Transformed::new(
                    Arc::clone(&self.inputs[column.index()]),
                    true,
                    TreeNodeRecursion::Jump,
                )),
                None => Ok(Transformed::no(node)),
            })?
            .data;
        Ok(BroadheadExprParts {
            sql: c.sql.clone(),
            input_schema: Arc::clone(&c.input_schema),
            field: Arc::clone(&c.field),
            kernel_type: c.kernel.data_type(),
            guarded: c.guarded.clone(),
            semantics: c.semantics,
            purpose: c.purpose,
            operators: c.operators,
            datafusion_expr,
        })
    }

    /// Rebuilds an expression from its [`parts`](Self::parts), with `inputs` (over
    /// `schema`, the input of the plan node) as its inputs: parses the SQL text and
    /// compiles it again (through Broadhead's kernel cache, so an executor compiles
    /// each shape once).
    ///
    /// What is rebuilt is checked against what the parts say: the number and types
    /// of the inputs, the type of the recompiled kernel, that DataFusion's
    /// expression reads only the inputs and has the expression's type. A mismatch
    /// (parts from another version, say) is an error. A SQL text that computes
    /// something else with the same types cannot be told apart here: a codec guards
    /// its bytes with a checksum.
    pub fn from_parts(
        parts: BroadheadExprParts,
        inputs: Vec<Arc<dyn PhysicalExpr>>,
        schema: &Schema,
    ) -> Result<BroadheadExpr> {
        let fields = parts.input_schema.fields();
        if inputs.len() != fields.len() {
            return plan_err!(
                "Broadhead expression {}: {} inputs given, its input schema has {} columns",
                parts.sql,
                inputs.len(),
                fields.len()
            );
        }
        for (i, (input, field)) in inputs.iter().zip(fields).enumerate() {
            let t = input.data_type(schema)?;
            if &t != field.data_type() {
                return plan_err!(
                    "Broadhead expression {}: input {i} ({input}) is {t}, the kernel reads {}",
                    parts.sql,
                    field.data_type()
                );
            }
        }
        if let Some(g) = parts.guarded.iter().find(|&&g| g >= fields.len()) {
            return plan_err!(
                "Broadhead expression {}: guarded input {g} does not exist",
                parts.sql
            );
        }
        let fallback = over_inputs(&parts.datafusion_expr, &inputs, &parts.input_schema)?;
        let mut foreign = None;
        fallback.apply(|node| {
            if let Some(c) = node.downcast_ref::<Column>() {
                if fields.get(c.index()).is_none_or(|f| f.name() != c.name()) {
                    foreign = Some(c.clone());
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        if let Some(c) = foreign {
            return plan_err!(
                "Broadhead expression {}: DataFusion's expression reads {c}, which is not one of its inputs",
                parts.sql
            );
        }
        let fallback_type = fallback.data_type(&parts.input_schema)?;
        if &fallback_type != parts.field.data_type() {
            return plan_err!(
                "Broadhead expression {}: DataFusion's expression is {fallback_type}, the expression's field {}",
                parts.sql,
                parts.field.data_type()
            );
        }
        let failed = |e: broadhead::Error| {
            DataFusionError::Plan(format!(
                "Broadhead expression {} does not compile: {e}",
                parts.sql
            ))
        };
        let expr = parse_expr(&parts.sql).map_err(|e| failed(e.into()))?;
        let kernel = Kernel::compile(&parts.input_schema, &expr, parts.purpose).map_err(failed)?;
        if kernel.data_type() != parts.kernel_type {
            return plan_err!(
                "Broadhead expression {} compiles to {}, where it was {}",
                parts.sql,
                kernel.data_type(),
                parts.kernel_type
            );
        }
        Ok(BroadheadExpr {
            compiled: Arc::new(Compiled {
                sql: parts.sql,
                input_schema: parts.input_schema,
                fallback,
                kernel,
                field: parts.field,
                guarded: parts.guarded,
                semantics: parts.semantics,
                purpose: parts.purpose,
                operators: parts.operators,
            }),
            inputs,
        })
    }

    /// With `inputs` in place of the inputs.
    pub(crate) fn with_inputs(&self, inputs: Vec<Arc<dyn PhysicalExpr>>) -> BroadheadExpr {
        BroadheadExpr {
            compiled: Arc::clone(&self.compiled),
            inputs,
        }
    }

    /// The Broadhead expression, as SQL over the input columns.
    pub fn sql(&self) -> &str {
        &self.compiled.sql
    }

    /// The schema of the batch of inputs the kernel reads.
    pub fn input_schema(&self) -> &SchemaRef {
        &self.compiled.input_schema
    }

    /// The inputs: DataFusion expressions the kernel reads as columns.
    pub fn inputs(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.inputs
    }

    /// How many operators (nodes other than columns and literals) of DataFusion's
    /// expression the kernel computes.
    pub fn operators(&self) -> usize {
        self.compiled.operators
    }

    /// Whether Broadhead runs the expression as machine code (else its interpreter,
    /// for constructs its JIT does not compile).
    pub fn is_jit(&self) -> bool {
        match &self.compiled.kernel {
            Kernel::Filter(f) => f.is_jit(),
            Kernel::Projector(p) => p.is_jit(0),
        }
    }

    /// The batch of inputs for `batch`.
    fn input_batch(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let rows = batch.num_rows();
        let columns = self
            .inputs
            .iter()
            .map(|e| e.evaluate(batch)?.into_array(rows))
            .collect::<Result<Vec<_>>>()?;
        Ok(RecordBatch::try_new_with_options(
            Arc::clone(&self.compiled.input_schema),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )?)
    }

    /// The kernel's answer for a batch of inputs.
    fn run(&self, input: &RecordBatch) -> broadhead::Result<ArrayRef> {
        Ok(match &self.compiled.kernel {
            Kernel::Filter(f) => Arc::new(f.evaluate_mask(input)?),
            Kernel::Projector(p) => p.evaluate(input)?.swap_remove(0),
        })
    }

    /// Whether a guarded float input holds a NaN or a negative zero, where Arrow's
    /// total order (DataFusion's comparisons) and Broadhead's SQL order differ.
    fn guard_fails(&self, input: &RecordBatch) -> bool {
        self.compiled.guarded.iter().any(|&i| {
            let a = input.column(i);
            match a.data_type() {
                DataType::Float64 => a
                    .as_primitive::<Float64Type>()
                    .values()
                    .iter()
                    .any(|v| v.is_nan() || (v.to_bits() == (-0.0f64).to_bits())),
                DataType::Float32 => a
                    .as_primitive::<Float32Type>()
                    .values()
                    .iter()
                    .any(|v| v.is_nan() || (v.to_bits() == (-0.0f32).to_bits())),
                // Other float layouts (half floats) are not compared by the kernel.
                _ => true,
            }
        })
    }
}

impl PartialEq for BroadheadExprParts {
    fn eq(&self, other: &Self) -> bool {
        self.sql == other.sql
            && self.input_schema == other.input_schema
            && self.field == other.field
            && self.kernel_type == other.kernel_type
            && self.guarded == other.guarded
            && self.semantics == other.semantics
            && self.purpose == other.purpose
            && self.operators == other.operators
            && self.datafusion_expr.as_ref() == other.datafusion_expr.as_ref()
    }
}

static BY_KERNEL: AtomicU64 = AtomicU64::new(0);
static BY_DATAFUSION: AtomicU64 = AtomicU64::new(0);

/// How many batches the [`BroadheadExpr`]s of this process have evaluated, since it
/// started: on a Ballista executor, the proof that it ran compiled expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Evaluations {
    /// Batches the compiled kernels answered.
    pub by_kernel: u64,
    /// Batches DataFusion's own expression answered instead (DataFusion semantics:
    /// a NaN or `-0.0` in a compared float input, or an error from the kernel).
    pub by_datafusion: u64,
}

/// The [`Evaluations`] of this process so far.
pub fn evaluations() -> Evaluations {
    Evaluations {
        by_kernel: BY_KERNEL.load(Ordering::Relaxed),
        by_datafusion: BY_DATAFUSION.load(Ordering::Relaxed),
    }
}

/// `expr` with each of `inputs` (nodes of its tree) replaced by the column of the
/// input batch that holds it.
fn over_inputs(
    expr: &Arc<dyn PhysicalExpr>,
    inputs: &[Arc<dyn PhysicalExpr>],
    input_schema: &Schema,
) -> Result<Arc<dyn PhysicalExpr>> {
    Arc::clone(expr)
        .transform_down(
            |node| match inputs.iter().position(|i| i.as_ref() == node.as_ref()) {
                Some(i) => {
                    let column = Column::new(input_schema.field(i).name(), i);
                    Ok(Transformed::new(
                        Arc::new(column) as Arc<dyn PhysicalExpr>,
                        true,
                        TreeNodeRecursion::Jump,
                    ))
                }
                None => Ok(Transformed::no(node)),
            },
        )
        .map(|t| t.data)
}

impl PhysicalExpr for BroadheadExpr {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(Arc::clone(&self.compiled.field))
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let input = self.input_batch(batch)?;
        let c = &self.compiled;
        if c.semantics == Semantics::DataFusion && self.guard_fails(&input) {
            BY_DATAFUSION.fetch_add(1, Ordering::Relaxed);
            return c.fallback.evaluate(&input);
        }
        let result = self.run(&input);
        let counter = match &result {
            Err(_) if c.semantics == Semantics::DataFusion => &BY_DATAFUSION,
            _ => &BY_KERNEL,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        match result {
            Ok(array) if array.data_type() == c.field.data_type() => {
                Ok(ColumnarValue::Array(array))
            }
            // The same values in another layout (a string the kernel wrote as Utf8
            // where DataFusion's is a view, say).
            Ok(array) => Ok(ColumnarValue::Array(arrow::compute::cast(
                &array,
                c.field.data_type(),
            )?)),
            Err(_) if c.semantics == Semantics::DataFusion => c.fallback.evaluate(&input),
            Err(e) => Err(DataFusionError::Execution(e.to_string())),
        }
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        self.inputs.iter().collect()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        if children.len() != self.inputs.len() {
            return Err(DataFusionError::Internal(format!(
                "BroadheadExpr has {} inputs, {} given",
                self.inputs.len(),
                children.len()
            )));
        }
        Ok(Arc::new(self.with_inputs(children)))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "broadhead({})", self.compiled.sql)
    }
}

impl fmt::Display for BroadheadExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "broadhead({}", self.compiled.sql)?;
        let named: Vec<String> = self
            .inputs
            .iter()
            .zip(self.compiled.input_schema.fields())
            .filter(|(e, field)| {
                e.downcast_ref::<Column>()
                    .is_none_or(|c| c.name() != field.name())
            })
            .map(|(e, field)| format!("{} := {e}", field.name()))
            .collect();
        if !named.is_empty() {
            write!(f, "; {}", named.join(", "))?;
        }
        write!(f, ")")
    }
}

impl fmt::Debug for BroadheadExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadheadExpr")
            .field("sql", &self.compiled.sql)
            .field("inputs", &self.inputs)
            .field("semantics", &self.compiled.semantics)
            .field("purpose", &self.compiled.purpose)
            .finish()
    }
}

impl PartialEq for BroadheadExpr {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.compiled, &other.compiled);
        a.sql == b.sql
            && a.input_schema == b.input_schema
            && a.semantics == b.semantics
            && a.purpose == b.purpose
            && a.field == b.field
            && self.inputs.len() == other.inputs.len()
            && self
                .inputs
                .iter()
                .zip(&other.inputs)
                .all(|(x, y)| x.as_ref() == y.as_ref())
    }
}

impl Eq for BroadheadExpr {}

impl Hash for BroadheadExpr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.compiled.sql.hash(state);
        self.compiled.semantics.hash(state);
        self.compiled.purpose.hash(state);
        for i in &self.inputs {
            i.hash(state);
        }
    }
}
