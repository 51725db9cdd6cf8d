//! STRUCT fields read as columns: `s.f` is bound as a column of its own, so both back
//! ends (and the kernel) read a field as they read any column.
//!
//! A schema's *extended* columns are its columns followed by every field of its
//! STRUCT columns, depth first in schema order (`s`, then `s.a`, `s.a.x`, `s.b`, …,
//! then the next STRUCT column's). A bound field is `TypedKind::Column(i)` with `i` at
//! or past the schema's width; [`crate::decode::Decoding`] appends the fields'
//! arrays to each batch, each with its parents' NULLs (a field of a NULL struct is
//! NULL, whatever its child array holds there).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Schema};

/// One field of a STRUCT column (at any depth).
#[derive(Debug, Clone)]
pub(crate) struct StructField {
    /// The top-level column it belongs to.
    pub(crate) root: usize,
    /// The child positions from the root down to it.
    pub(crate) path: Vec<usize>,
    /// The field, named by its path (`s.a.x`).
    pub(crate) field: FieldRef,
    /// The names on the path: the column's, then each field's (`["s", "a", "x"]`).
    pub(crate) names: Vec<String>,
}

/// Every field of `schema`'s STRUCT columns, in the order of the extended columns.
pub(crate) fn struct_fields(schema: &Schema) -> Vec<StructField> {
    fn walk(
        root: usize,
        path: &mut Vec<usize>,
        names: &mut Vec<String>,
        t: &DataType,
        out: &mut Vec<StructField>,
    ) {
        let DataType::Struct(children) = t else {
            return;
        };
        for (i, child) in children.iter().enumerate() {
            path.push(i);
            names.push(child.name().clone());
            out.push(StructField {
                root,
                path: path.clone(),
                field: Arc::new(Field::new(names.join("."), child.data_type().clone(), true)),
                names: names.clone(),
            });
            walk(root, path, names, child.data_type(), out);
            path.pop();
            names.pop();
        }
    }
    let mut out = Vec::new();
    for (root, f) in schema.fields().iter().enumerate() {
        walk(
            root,
            &mut Vec::new(),
            &mut vec![f.name().clone()],
            f.data_type(),
            &mut out,
        );
    }
    out
}

/// The extended column of the field at `path` under column `root`.
pub(crate) fn field_column(schema: &Schema, root: usize, path: &[usize]) -> Option<usize> {
    struct_fields(schema)
        .iter()
        .position(|f| f.root == root && f.path == path)
        .map(|k| schema.fields().len() + k)
}

/// The field behind extended column `i` (`None` for a column of the schema itself
/// or past the end).
pub(crate) fn field_at(schema: &Schema, i: usize) -> Option<StructField> {
    let k = i.checked_sub(schema.fields().len())?;
    struct_fields(schema).into_iter().nth(k)
}

/// The top-level column that extended column `i` reads.
pub(crate) fn root_column(schema: &Schema, i: usize) -> usize {
    field_at(schema, i).map_or(i, |f| f.root)
}

/// The child array of `field` in a batch whose columns are `columns`, as it is
/// (without the NULLs of the structs above it).
pub(crate) fn child_array(columns: &[ArrayRef], field: &StructField) -> ArrayRef {
    field
        .path
        .iter()
        .fold(columns[field.root].clone(), |array, &child| {
            array.as_struct().column(child).clone()
        })
}

/// The array of `field` in a batch whose columns are `columns`: the child array,
/// with the NULLs of every struct on the way down.
pub(crate) fn field_array(columns: &[ArrayRef], field: &StructField) -> ArrayRef {
    let mut array = columns[field.root].clone();
    let mut nulls: Option<NullBuffer> = None;
    for &child in &field.path {
        let parent = array.as_struct();
        nulls = NullBuffer::union(nulls.as_ref(), parent.logical_nulls().as_ref());
        array = parent.column(child).clone();
    }
    if nulls.as_ref().is_none_or(|n| n.null_count() == 0) {
        return array;
    }
    let merged = NullBuffer::union(nulls.as_ref(), array.logical_nulls().as_ref());
    let data = array.to_data().into_builder().nulls(merged);
    // SAFETY: only the validity changes, to a buffer of the array's length (the
    // union of two of them); values under a new NULL are never read as values.
    arrow::array::make_array(unsafe { data.build_unchecked() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray, StructArray};
    use arrow::datatypes::Fields;

    fn point() -> DataType {
        DataType::Struct(Fields::from(vec![
            Field::new("x", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
        ]))
    }

    #[test]
    fn fields_follow_the_columns_depth_first() {
        let inner = DataType::Struct(Fields::from(vec![Field::new("p", point(), true)]));
        let schema = Schema::new(vec![
            Field::new("a", inner, true),
            Field::new("id", DataType::Int64, true),
            Field::new("b", point(), true),
        ]);
        let names: Vec<String> = struct_fields(&schema)
            .iter()
            .map(|f| f.field.name().clone())
            .collect();
        assert_eq!(names, ["a.p", "a.p.x", "a.p.name", "b.x", "b.name"]);
        assert_eq!(field_column(&schema, 0, &[0, 1]), Some(5));
        assert_eq!(field_column(&schema, 2, &[0]), Some(6));
        assert_eq!(field_column(&schema, 1, &[0]), None);
        assert_eq!(root_column(&schema, 6), 2);
        assert_eq!(root_column(&schema, 1), 1);
        assert!(field_at(&schema, 8).is_none());
    }

    #[test]
    fn a_field_of_a_null_struct_is_null() {
        let x = Int64Array::from(vec![Some(1), Some(2), None, Some(4)]);
        let name = StringArray::from(vec!["a", "b", "c", "d"]);
        let s = StructArray::new(
            match point() {
                DataType::Struct(f) => f,
                _ => unreachable!(),
            },
            vec![Arc::new(x), Arc::new(name)],
            Some(NullBuffer::from(vec![true, false, true, true])),
        );
        let columns: Vec<ArrayRef> = vec![Arc::new(s.slice(1, 3))];
        let schema = Schema::new(vec![Field::new("s", point(), true)]);
        let fields = struct_fields(&schema);
        let xs = field_array(&columns, &fields[0]);
        let xs = xs.as_primitive::<arrow::datatypes::Int64Type>();
        assert_eq!(xs.iter().collect::<Vec<_>>(), [None, None, Some(4)]);
        let names = field_array(&columns, &fields[1]);
        assert_eq!(names.len(), 3);
        assert_eq!(names.null_count(), 1);
    }
}
