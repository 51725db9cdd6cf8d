//! A pushed-down predicate split into the reader's predicates, cheapest first.
//!
//! The parquet crate's `RowFilter` runs its predicates in order, each on the rows the
//! earlier ones kept, decoding each predicate's columns for those rows only. A
//! conjunction (`a AND b AND …`) can therefore be given as several predicates:
//!
//! 0. the conjuncts on columns whose pages are all dictionary-encoded (and of a type
//!    read bit for bit, [`super::keys`]) are not the reader's: the scan decides them
//!    before the reader runs and gives the reader the rows they keep as its
//!    selection. Those on several such fixed-width columns (`a < b`), with the
//!    conjuncts on one of those columns, form one group, evaluated on the columns'
//!    values decoded from their keys; those on one other column, one group a column,
//!    evaluated once per dictionary value (unless a conjunct left to the reader reads
//!    that column too: the reader decodes it anyway). The conjuncts on one column of
//!    the group on several also form an *optional* group of their own, which runs
//!    before that group when it can leave so few rows that the group is read at those
//!    rows only ([`super::keys::row_group_mask`]);
//! 1. the other conjuncts that read only fixed-width columns (numbers, dates: cheap to
//!    decode and compare), together, first;
//! 2. each conjunct that reads a single VARCHAR column whose pages are all
//!    dictionary-encoded, alone, with that column read as `Dictionary(Int32, Utf8)`:
//!    the reader hands over the dictionary and the keys instead of copying every
//!    row's string, and the filter computes the conjunct once per dictionary value
//!    ([`crate::dictionary`]), so it costs about one lookup per row;
//! 3. the other conjuncts, together, last.
//!
//! It splits only a predicate that cannot raise an error: a row an earlier predicate
//! drops (FALSE or NULL there) is never shown to a later one, which would hide the
//! error a later conjunct raises on a row where an earlier one is NULL (SQL's `NULL
//! AND error` uses the error's operand). Without errors, the rows kept are those
//! where every conjunct is TRUE, in any order. A predicate that can raise one is
//! decided on the keys whole when its columns allow (`l_quantity * l_discount >
//! 2.5`), every row's value seen; when it does raise one, the row group is read by
//! the reader, which names the row.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};

use super::keys::keyed_layout;
use super::pages::Layout;
use super::{dictionary_encoded, single_leaf, Dataset};
use crate::prepare::{Prepared, Purpose};
use crate::typed::{TypedExpr, TypedKind};

/// The predicate as the reader's predicates, in the order they run, and the
/// conjuncts decided on dictionary keys before them.
pub(crate) struct Split {
    /// Each bound to the dataset's schema, dictionary columns read as dictionaries
    /// (may be empty: every conjunct is keyed).
    pub parts: Vec<Prepared>,
    /// The conjuncts decided on dictionary keys ([`super::keys`]), each bound to the
    /// dataset's schema: one group a column for the conjuncts on one column, then
    /// the optional ones (a column each), then one group for those on several
    /// fixed-width columns.
    pub keyed: Vec<Prepared>,
    /// For each group of `keyed`, whether it is optional: its conjuncts are also in
    /// the group on several columns, so skipping it changes no row.
    pub optional: Vec<bool>,
    /// Per file of the dataset, its footer with the dictionary columns' Arrow type
    /// changed to `Dictionary(Int32, Utf8)` (what the reader then produces); `None`
    /// when no column is read as a dictionary.
    pub reader_metadata: Option<Vec<ArrowReaderMetadata>>,
}

/// `schema` with the type of `columns` changed to `Dictionary(Int32, Utf8)`, the
/// type a dictionary-encoded VARCHAR column is read as.
fn with_dictionaries(schema: &Schema, columns: &[usize]) -> Schema {
    let dictionary = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    let fields = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| match columns.contains(&i) {
            true => Arc::new(Field::clone(f).with_data_type(dictionary.clone())),
            false => f.clone(),
        })
        .collect::<Vec<_>>();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// `prepared` (a predicate bound to `dataset`'s schema) split as the module says, or
/// `None` when there is nothing to gain: it can raise an error and its columns are
/// not all read by their keys ([`whole_on_keys`]), or it has no keyed conjunct and is not a conjunction of at least two groups (or, which a valid footer
/// never makes, the reader refuses to read a column as a dictionary: then the
/// predicate stays whole).
pub(crate) fn split(prepared: &Prepared, dataset: &Dataset) -> Option<Split> {
    let optimized = prepared.optimized();
    // A predicate on STRUCT fields runs whole, as one reader predicate (the parts
    // and keys below read top-level columns).
    let width = dataset.schema().fields().len();
    if optimized.columns().iter().any(|&c| c >= width) {
        return None;
    }
    if optimized.can_error() {
        return whole_on_keys(prepared, dataset);
    }
    let conjuncts = match &optimized.kind {
        TypedKind::And(conjuncts) => &conjuncts[..],
        _ => std::slice::from_ref(optimized),
    };
    let schema = dataset.schema();
    let mut keyed: Vec<(usize, Vec<TypedExpr>)> = Vec::new();
    let mut optional: Vec<(usize, Vec<TypedExpr>)> = Vec::new();
    let mut decoded = Vec::new();
    let mut fixed = Vec::new();
    let mut dictionary: Vec<(usize, Vec<TypedExpr>)> = Vec::new();
    let mut rest = Vec::new();
    let mut layouts: Vec<(usize, Option<Layout>)> = Vec::new();
    let mut layout = |column: usize| match layouts.iter().find(|(c, _)| *c == column) {
        Some((_, layout)) => *layout,
        None => {
            let layout = keyed_layout(dataset, column);
            layouts.push((column, layout));
            layout
        }
    };
    // The conjuncts on several columns, all fixed-width and keyed, are decided on
    // their values decoded from the keys, with the conjuncts on one of those columns.
    let multi: Vec<&TypedExpr> = conjuncts.iter().filter(|c| c.columns().len() > 1).collect();
    let mut decoded_columns = Vec::new();
    for c in &multi {
        let columns = c.columns();
        if columns
            .iter()
            .all(|&i| layout(i).is_some_and(|l| l.width().is_some()))
        {
            decoded_columns.extend(columns);
        }
    }
    // A column the reader reads for another conjunct is decoded by it anyway:
    // deciding its own conjuncts on its keys would only read it twice.
    let shared: Vec<usize> = multi.iter().flat_map(|c| c.columns()).collect();
    for c in conjuncts {
        let columns = c.columns();
        if !columns.is_empty() && columns.iter().all(|i| decoded_columns.contains(i)) {
            decoded.push(c.clone());
            if let [column] = columns[..] {
                add_to_group(&mut optional, column, c);
            }
            continue;
        }
        if let [column] = columns[..] {
            if !shared.contains(&column) && layout(column).is_some() {
                add_to_group(&mut keyed, column, c);
                continue;
            }
        }
        if columns
            .iter()
            .all(|&i| is_fixed_width(schema.field(i).data_type()))
        {
            fixed.push(c.clone());
        } else if let [column] = columns[..] {
            if dictionary_encoded_strings(dataset, column) {
                add_to_group(&mut dictionary, column, c);
                continue;
            }
            rest.push(c.clone());
        } else {
            rest.push(c.clone());
        }
    }
    let groups = usize::from(!fixed.is_empty()) + dictionary.len() + usize::from(!rest.is_empty());
    if keyed.is_empty() && decoded.is_empty() && groups < 2 {
        return None;
    }
    let columns: Vec<usize> = dictionary.iter().map(|(c, _)| *c).collect();
    let read_schema = with_dictionaries(schema, &columns);
    let part = |group: Vec<TypedExpr>| {
        let typed = match <[TypedExpr; 1]>::try_from(group) {
            Ok([one]) => one,
            Err(group) => TypedExpr::new(TypedKind::And(group), DataType::Boolean, optimized.span),
        };
        Prepared::from_typed(
            &read_schema,
            Purpose::Predicate,
            prepared.expr().clone(),
            prepared.source().map(str::to_string),
            typed,
        )
    };
    let mut parts = Vec::new();
    if !fixed.is_empty() {
        parts.push(part(fixed));
    }
    parts.extend(dictionary.into_iter().map(|(_, group)| part(group)));
    if !rest.is_empty() {
        parts.push(part(rest));
    }
    let mut keyed: Vec<Prepared> = keyed.into_iter().map(|(_, group)| part(group)).collect();
    let mut is_optional = vec![false; keyed.len()];
    if !decoded.is_empty() {
        is_optional.resize(keyed.len() + optional.len(), true);
        keyed.extend(optional.into_iter().map(|(_, group)| part(group)));
        keyed.push(part(decoded));
        is_optional.push(false);
    }
    let reader_metadata = match columns.is_empty() {
        true => None,
        false => Some(
            dataset
                .files()
                .iter()
                .map(|f| read_as_dictionaries(&f.metadata, &columns))
                .collect::<Result<_, _>>()
                .ok()?,
        ),
    };
    Some(Split {
        parts,
        keyed,
        optional: is_optional,
        reader_metadata,
    })
}

/// A predicate that can raise an error, unsplit, as the one group decided on keys
/// when its columns allow it (one column of a layout read by its keys, or several
/// fixed-width ones): evaluated on every dictionary value, or on every row's values
/// decoded from the keys, it raises an error if some row would (and maybe for a
/// dictionary value no row holds); any error gives the row group back to the
/// reader, which evaluates the predicate row by row and reports the row's error.
/// `None`: its columns are not all read so.
fn whole_on_keys(prepared: &Prepared, dataset: &Dataset) -> Option<Split> {
    let columns = prepared.optimized().columns();
    let keyed = match columns[..] {
        [] => false,
        [column] => keyed_layout(dataset, column).is_some(),
        _ => columns
            .iter()
            .all(|&c| keyed_layout(dataset, c).is_some_and(|l| l.width().is_some())),
    };
    keyed.then(|| Split {
        parts: Vec::new(),
        keyed: vec![prepared.clone()],
        optional: vec![false],
        reader_metadata: None,
    })
}

/// Adds conjunct `c` to the group of `column` in `groups` (a new one at the end if
/// there is none).
fn add_to_group(groups: &mut Vec<(usize, Vec<TypedExpr>)>, column: usize, c: &TypedExpr) {
    match groups.iter_mut().find(|(i, _)| *i == column) {
        Some((_, group)) => group.push(c.clone()),
        None => groups.push((column, vec![c.clone()])),
    }
}

/// Whether values of this (engine) type have a fixed width in Arrow.
fn is_fixed_width(t: &DataType) -> bool {
    t.is_primitive() || matches!(t, DataType::Boolean)
}

/// Whether root column `column` is VARCHAR (`Utf8`) in every file of `dataset`, a
/// single leaf, and every page of every chunk of it dictionary-encoded: then the
/// reader can hand over its dictionaries and keys as they are.
fn dictionary_encoded_strings(dataset: &Dataset, column: usize) -> bool {
    dataset.files().iter().all(|f| {
        let meta = f.metadata.metadata();
        single_leaf(meta, column).is_some_and(|leaf| {
            f.metadata.schema().field(column).data_type() == &DataType::Utf8
                && dictionary_encoded(meta, leaf)
        })
    })
}

/// `metadata` with root columns `columns` read as `Dictionary(Int32, Utf8)`.
fn read_as_dictionaries(
    metadata: &ArrowReaderMetadata,
    columns: &[usize],
) -> parquet::errors::Result<ArrowReaderMetadata> {
    let hint = Arc::new(with_dictionaries(metadata.schema(), columns));
    ArrowReaderMetadata::try_new(
        metadata.metadata().clone(),
        ArrowReaderOptions::new().with_schema(hint),
    )
}
