//! Selection vectors: the row indices a filter keeps, in one of three widths.

use std::sync::Arc;

use arrow::array::{ArrayRef, UInt16Array, UInt32Array, UInt64Array};
use arrow::buffer::BooleanBuffer;

/// The width of the indices in a [`SelectionVector`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SelectionMode {
    /// `u16` indices: batches of at most 65,536 rows.
    UInt16,
    /// `u32` indices.
    UInt32,
    /// `u64` indices.
    UInt64,
}

impl SelectionMode {
    /// The largest batch this mode can index.
    pub fn max_rows(self) -> usize {
        match self {
            SelectionMode::UInt16 => 1 << 16,
            SelectionMode::UInt32 => u32::MAX as usize + 1,
            SelectionMode::UInt64 => usize::MAX,
        }
    }

    /// The mode's name, as in error messages.
    pub fn name(self) -> &'static str {
        match self {
            SelectionMode::UInt16 => "UInt16",
            SelectionMode::UInt32 => "UInt32",
            SelectionMode::UInt64 => "UInt64",
        }
    }
}

/// The indices of the selected rows of a batch, in increasing order.
///
/// Reuse one vector across batches with [`Filter::evaluate_into`](crate::Filter::evaluate_into):
/// its allocation is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectionVector {
    /// `u16` indices.
    UInt16(Vec<u16>),
    /// `u32` indices.
    UInt32(Vec<u32>),
    /// `u64` indices.
    UInt64(Vec<u64>),
}

impl SelectionVector {
    /// An empty vector of the given width.
    pub fn new(mode: SelectionMode) -> SelectionVector {
        match mode {
            SelectionMode::UInt16 => SelectionVector::UInt16(Vec::new()),
            SelectionMode::UInt32 => SelectionVector::UInt32(Vec::new()),
            SelectionMode::UInt64 => SelectionVector::UInt64(Vec::new()),
        }
    }

    /// The index width.
    pub fn mode(&self) -> SelectionMode {
        match self {
            SelectionVector::UInt16(_) => SelectionMode::UInt16,
            SelectionVector::UInt32(_) => SelectionMode::UInt32,
            SelectionVector::UInt64(_) => SelectionMode::UInt64,
        }
    }

    /// The number of selected rows.
    pub fn len(&self) -> usize {
        match self {
            SelectionVector::UInt16(v) => v.len(),
            SelectionVector::UInt32(v) => v.len(),
            SelectionVector::UInt64(v) => v.len(),
        }
    }

    /// Whether no row is selected.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th selected row.
    pub fn get(&self, i: usize) -> Option<usize> {
        match self {
            SelectionVector::UInt16(v) => v.get(i).map(|&x| x as usize),
            SelectionVector::UInt32(v) => v.get(i).map(|&x| x as usize),
            SelectionVector::UInt64(v) => v.get(i).map(|&x| x as usize),
        }
    }

    /// The selected rows.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// The indices as an Arrow array of their own width, without copying: the
    /// vector's buffer becomes the array's.
    ///
    /// ```
    /// use arrow::array::{Array, AsArray};
    /// use arrow::datatypes::UInt16Type;
    /// use broadhead::SelectionVector;
    ///
    /// let rows = SelectionVector::UInt16(vec![1, 5, 7]);
    /// let array = rows.into_array();
    /// assert_eq!(array.as_primitive::<UInt16Type>().values().to_vec(), vec![1, 5, 7]);
    /// ```
    pub fn into_array(self) -> ArrayRef {
        match self {
            SelectionVector::UInt16(v) => Arc::new(UInt16Array::new(v.into(), None)),
            SelectionVector::UInt32(v) => Arc::new(UInt32Array::new(v.into(), None)),
            SelectionVector::UInt64(v) => Arc::new(UInt64Array::new(v.into(), None)),
        }
    }

    /// The indices as a `UInt32Array` (what arrow's `take` and most consumers want).
    ///
    /// `u32` indices are moved into the array without copying. `u16` indices are
    /// widened into a new buffer (a copy of 4 bytes per selected row); `u64`
    /// indices are narrowed into a new buffer, or the vector is given back
    /// unchanged (`Err`) if an index does not fit 32 bits.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow::array::{Float64Array, RecordBatch};
    /// use arrow::datatypes::{DataType, Field, Schema};
    /// use broadhead::{Filter, SelectionVector};
    ///
    /// let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
    /// let batch = RecordBatch::try_new(
    ///     schema.clone(),
    ///     vec![Arc::new(Float64Array::from(vec![1.0, 3.0, 5.0, 7.0]))],
    /// )?;
    /// let selected = Filter::new(&schema, "x > 2")?.evaluate(&batch)?;
    /// let SelectionVector::UInt32(ref v) = selected else { unreachable!() };
    /// let buffer = v.as_ptr();
    /// let indices = selected.into_uint32_array().expect("u32 indices");
    /// assert_eq!(indices.values().as_ptr(), buffer, "moved, not copied");
    /// assert_eq!(indices.values().to_vec(), vec![1, 2, 3]);
    /// let taken = arrow::compute::take_record_batch(&batch, &indices)?;
    /// assert_eq!(taken.num_rows(), 3);
    ///
    /// let wide = SelectionVector::UInt64(vec![2, u64::MAX]);
    /// assert!(wide.into_uint32_array().is_err(), "does not fit");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_uint32_array(self) -> Result<UInt32Array, SelectionVector> {
        match self {
            SelectionVector::UInt32(v) => Ok(UInt32Array::new(v.into(), None)),
            SelectionVector::UInt16(v) => {
                Ok(v.into_iter().map(u32::from).collect::<Vec<_>>().into())
            }
            SelectionVector::UInt64(v) => match v
                .iter()
                .map(|&i| u32::try_from(i))
                .collect::<Result<Vec<u32>, _>>()
            {
                Ok(narrow) => Ok(UInt32Array::new(narrow.into(), None)),
                Err(_) => Err(SelectionVector::UInt64(v)),
            },
        }
    }

    /// The indices as an Arrow array (for `take`), copied; see
    /// [`SelectionVector::into_array`] for the version that moves them.
    pub fn to_array(&self) -> ArrayRef {
        match self {
            SelectionVector::UInt16(v) => Arc::new(UInt16Array::from(v.clone())),
            SelectionVector::UInt32(v) => Arc::new(UInt32Array::from(v.clone())),
            SelectionVector::UInt64(v) => Arc::new(UInt64Array::from(v.clone())),
        }
    }

    /// Empties the vector, keeping its allocation, and makes room for `rows` indices.
    pub(crate) fn reset(&mut self, rows: usize) {
        match self {
            SelectionVector::UInt16(v) => prepare(v, rows),
            SelectionVector::UInt32(v) => prepare(v, rows),
            SelectionVector::UInt64(v) => prepare(v, rows),
        }
    }

    /// Appends the rows whose bit is set in `rows` (for the paths that build a
    /// bitmap: the interpreter, dictionary columns), in order; the caller checked
    /// that they fit the index width.
    pub(crate) fn extend_from_bits(&mut self, rows: &BooleanBuffer) {
        match self {
            SelectionVector::UInt16(v) => v.extend(rows.set_indices().map(|r| r as u16)),
            SelectionVector::UInt32(v) => v.extend(rows.set_indices().map(|r| r as u32)),
            SelectionVector::UInt64(v) => v.extend(rows.set_indices().map(|r| r as u64)),
        }
    }

    /// The spare capacity's start and the index width in bytes, for the kernel.
    pub(crate) fn raw_parts(&mut self) -> (*mut u8, u64) {
        match self {
            SelectionVector::UInt16(v) => (v.as_mut_ptr() as *mut u8, 2),
            SelectionVector::UInt32(v) => (v.as_mut_ptr() as *mut u8, 4),
            SelectionVector::UInt64(v) => (v.as_mut_ptr() as *mut u8, 8),
        }
    }

    /// Sets the length after the kernel wrote `n` indices.
    ///
    /// # Safety
    /// The first `n` entries must have been written, and `n` ≤ the capacity.
    pub(crate) unsafe fn set_len(&mut self, n: usize) {
        // SAFETY: forwarded from the caller.
        unsafe {
            match self {
                SelectionVector::UInt16(v) => v.set_len(n),
                SelectionVector::UInt32(v) => v.set_len(n),
                SelectionVector::UInt64(v) => v.set_len(n),
            }
        }
    }
}

/// Moves the indices into an array of their width (see [`SelectionVector::into_array`]).
impl From<SelectionVector> for ArrayRef {
    fn from(v: SelectionVector) -> ArrayRef {
        v.into_array()
    }
}

fn prepare<T>(v: &mut Vec<T>, rows: usize) {
    v.clear();
    v.reserve(rows);
}
