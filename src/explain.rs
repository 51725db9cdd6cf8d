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

/// Every stage's view of a filter or projection.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The expressions (one for a filter).
    pub stages: Vec<Stages>,
    /// How they are evaluated (one kernel for all JIT-compiled expressions).
    pub backend: Backend,
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
