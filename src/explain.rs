//! What `explain` shows: every stage's view of an expression.

use std::fmt;

pub use broadhead_codegen::Explain as Compiled;

/// How an expression is evaluated.
#[derive(Debug, Clone)]
pub enum Backend {
    /// Compiled: the IR before and after optimization, and the native assembly.
    Jit(Compiled),
    /// Interpreted, with the reason the JIT did not take it.
    Interpreted(String),
}

/// One expression through the front end.
#[derive(Debug, Clone)]
pub struct Stages {
    /// The text as written, when it came from SQL.
    pub source: Option<String>,
    /// The parsed tree, printed as SQL.
    pub parsed: String,
    /// The typed tree (casts explicit).
    pub typed: String,
    /// The optimized tree.
    pub optimized: String,
}

/// The interpreted subtrees of `jit`'s expressions over `schema`.
pub(crate) fn interpreted_nodes(
    jit: &crate::kernel::Jit,
    schema: &arrow::datatypes::Schema,
) -> Vec<InterpretedNode> {
    jit.interpreted()
        .iter()
        .map(|i| InterpretedNode {
            node: i.expr.display(schema).to_string(),
            reason: i.reason.clone(),
        })
        .collect()
}

impl Stages {
    /// The stages of a prepared expression.
    pub(crate) fn of(p: &crate::prepare::Prepared) -> Stages {
        Stages {
            source: p.source().map(str::to_string),
            parsed: p.expr().to_string(),
            typed: p.typed().display(p.schema()).to_string(),
            optimized: p.optimized().display(p.schema()).to_string(),
        }
    }
}

/// A subtree of a compiled expression that the JIT does not compile: the interpreter
/// evaluates it over the batch and the kernel reads its value as an input.
#[derive(Debug, Clone, PartialEq)]
pub struct InterpretedNode {
    /// The subtree, as the typed tree prints it.
    pub node: String,
    /// Why the JIT does not compile it.
    pub reason: String,
}

impl fmt::Display for InterpretedNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "interpreted: {} — {}", self.node, self.reason)
    }
}

/// Every stage's view of a filter or projection.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The expressions (one for a filter).
    pub stages: Vec<Stages>,
    /// How they are evaluated (one kernel for all JIT-compiled expressions).
    pub backend: Backend,
    /// The subtrees of the compiled expressions that the interpreter evaluates for the
    /// kernel (empty when everything compiles, or when the interpreter runs the whole).
    pub interpreted: Vec<InterpretedNode>,
    /// Which tier evaluated the batches so far and when the kernel arrived, as
    /// [`Filter::tier_stats`](crate::Filter::tier_stats) says.
    pub tiers: crate::tier::TierStats,
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.stages.iter().enumerate() {
            if self.stages.len() > 1 {
                writeln!(f, "== expression {} ==", i + 1)?;
            }
            if let Some(src) = &s.source {
                writeln!(f, "source:    {src}")?;
            }
            writeln!(f, "parsed:    {}", s.parsed)?;
            writeln!(f, "typed:     {}", s.typed)?;
            writeln!(f, "optimized: {}", s.optimized)?;
        }
        for node in &self.interpreted {
            writeln!(f, "{node}")?;
        }
        writeln!(f, "tiers:     {}", self.tiers)?;
        match &self.backend {
            Backend::Jit(c) => {
                writeln!(f, "\n== LLVM IR ==\n{}", c.ir)?;
                writeln!(f, "== LLVM IR (optimized) ==\n{}", c.optimized_ir)?;
                writeln!(f, "== assembly ==\n{}", c.assembly)
            }
            Backend::Interpreted(reason) => writeln!(f, "backend:   interpreter ({reason})"),
        }
    }
}
