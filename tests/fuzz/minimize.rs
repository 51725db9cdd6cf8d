//! Minimizing a failing case while it still fails the same way: SQL text by removing
//! runs of tokens, then of characters (delta debugging, greedy); Parquet cases by
//! dropping mutations.

use super::{Case, ParquetFile};

/// Splits text into tokens: runs of word characters, runs of spaces, single others.
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    for c in text.chars() {
        match out.last_mut() {
            Some(last) if class(c) != 2 && last.chars().last().map(class) == Some(class(c)) => {
                last.push(c)
            }
            _ => out.push(c.to_string()),
        }
    }
    out
}

/// Removes runs of `units` (halving the run length down to 1) while `fails` holds;
/// `budget` counts the checks left.
fn reduce(
    units: Vec<String>,
    budget: &mut usize,
    fails: &mut dyn FnMut(&str) -> bool,
) -> Vec<String> {
    let mut units = units;
    let mut size = units.len() / 2;
    while size >= 1 {
        let mut i = 0;
        let mut changed = false;
        while i < units.len() && *budget > 0 {
            let end = (i + size).min(units.len());
            let candidate: String = units[..i].concat() + &units[end..].concat();
            *budget -= 1;
            if fails(&candidate) {
                units.drain(i..end);
                changed = true;
            } else {
                i += size;
            }
        }
        if *budget == 0 {
            break;
        }
        if !changed {
            size /= 2;
        }
    }
    units
}

/// The smallest case found (within `budget` checks) for which `fails` still holds.
pub fn minimize(case: &Case, budget: usize, fails: &mut dyn FnMut(&Case) -> bool) -> Case {
    let mut budget = budget;
    match case {
        Case::Sql {
            jit,
            text,
            batch_seed,
            predicate,
        } => {
            let with = |t: &str| Case::Sql {
                jit: *jit,
                text: t.to_string(),
                batch_seed: *batch_seed,
                predicate: *predicate,
            };
            let mut check = |t: &str| fails(&with(t));
            let by_token = reduce(tokens(text), &mut budget, &mut check).concat();
            let chars = by_token.chars().map(String::from).collect();
            let by_char = reduce(chars, &mut budget, &mut check).concat();
            with(&by_char)
        }
        Case::Parquet {
            file: ParquetFile::Mutated { base, mutations },
            predicate,
            interpret,
            pushdown,
        } => {
            let mut mutations = mutations.clone();
            let mut predicate = predicate.clone();
            let with = |m: &[super::pq::Mutation], p: &Option<String>| Case::Parquet {
                file: ParquetFile::Mutated {
                    base: *base,
                    mutations: m.to_vec(),
                },
                predicate: p.clone(),
                interpret: *interpret,
                pushdown: *pushdown,
            };
            // Without the predicate, if it still fails.
            if predicate.is_some() && budget > 0 {
                budget -= 1;
                if fails(&with(&mutations, &None)) {
                    predicate = None;
                }
            }
            let mut i = 0;
            while i < mutations.len() && budget > 0 {
                let mut fewer = mutations.clone();
                fewer.remove(i);
                budget -= 1;
                if fails(&with(&fewer, &predicate)) {
                    mutations = fewer;
                } else {
                    i += 1;
                }
            }
            with(&mutations, &predicate)
        }
        Case::Parquet { .. } => case.clone(),
    }
}
