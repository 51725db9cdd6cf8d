//! Checks of a Parquet footer that the parquet crate does not make, done before and
//! after it decodes the footer, so that a forged footer is an error rather than an
//! abort (an allocation of what it claims) or a reader that never ends.
//!
//! Before decoding, [`check_footer`] walks the footer's Thrift compact encoding (the
//! `FileMetaData` struct) with a small reader of its own and checks the schema's
//! child counts: the parquet crate reserves a vector of `num_children` entries before
//! checking that the elements exist, so a root claiming 2³¹ children aborts the
//! process. After decoding, [`check_metadata`] checks row groups and column chunks
//! against the file's size.
//!
//! [`decode_footer`] has the parquet crate decode a footer, in pieces when it holds
//! more row groups than the crate decodes at once ([`split_row_groups`]).

use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ParquetMetaData;

/// Structs nested deeper than this in a footer are taken as corruption (the real
/// `FileMetaData` nests a few levels; the schema itself is a flat list).
const MAX_NESTING: usize = 64;

/// Schemas nested deeper than this are refused: the parquet and arrow crates convert
/// them recursively.
const MAX_SCHEMA_DEPTH: usize = 64;

/// A position in a Thrift compact-protocol buffer.
struct Thrift<'a> {
    buf: &'a [u8],
    pos: usize,
    /// What the buffer holds, for messages ("the footer", "a page header").
    what: &'static str,
}

type Check<T = ()> = Result<T, String>;

/// Reads one field of a struct (given its id and type), or returns its type to have
/// it skipped.
type FieldReader<'f, 'a> = dyn FnMut(&mut Thrift<'a>, i16, u8) -> Check<Option<u8>> + 'f;

impl<'a> Thrift<'a> {
    fn byte(&mut self) -> Check<u8> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| format!("{} ends in the middle of a value", self.what))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Check<u64> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift < 64 {
                value |= u64::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(format!("a varint in {} is too long", self.what))
    }

    fn zigzag(&mut self) -> Check<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn skip(&mut self, n: u64) -> Check {
        let end = (self.pos as u64)
            .checked_add(n)
            .filter(|&e| e <= self.buf.len() as u64)
            .ok_or_else(|| format!("a value in {} runs past its end", self.what))?;
        self.pos = end as usize;
        Ok(())
    }

    /// A list or set header: (element type, size).
    fn list_header(&mut self) -> Check<(u8, u64)> {
        let b = self.byte()?;
        let size = match b >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        // Every element takes at least one byte.
        if size > (self.buf.len() - self.pos) as u64 {
            return Err(format!("a list in {} claims {size} elements", self.what));
        }
        Ok((b & 0x0f, size))
    }

    /// Skips a value of compact type `t`.
    fn skip_value(&mut self, t: u8, depth: usize) -> Check {
        match t {
            1 | 2 => Ok(()), // a boolean field: the value is in the type
            3 => self.skip(1),
            4..=6 => self.varint().map(drop),
            7 => self.skip(8),
            8 => {
                let n = self.varint()?;
                self.skip(n)
            }
            9 | 10 => {
                let (et, n) = self.list_header()?;
                for _ in 0..n {
                    self.skip_element(et, depth + 1)?;
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                // Every key and value takes at least one byte (so the walk is linear
                // in the footer's size whatever the counts claim).
                if n > ((self.buf.len() - self.pos) / 2) as u64 {
                    return Err(format!("a map in {} claims {n} entries", self.what));
                }
                for _ in 0..n {
                    self.skip_element(kv >> 4, depth + 1)?;
                    self.skip_element(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            12 => self.struct_fields(depth + 1, &mut |_, _, t| Ok(Some(t))),
            _ => Err(format!("an unknown Thrift type {t} in {}", self.what)),
        }
    }

    /// Skips an element of a list, set or map of compact type `t` (a boolean there
    /// is a byte of its own, unlike a boolean field).
    fn skip_element(&mut self, t: u8, depth: usize) -> Check {
        if t == 1 || t == 2 {
            self.skip(1)
        } else {
            self.skip_value(t, depth)
        }
    }

    /// Reads a struct's fields up to its end: `field(self, id, type)` reads the value
    /// itself and returns `None`, or returns `Some(type)` to have it skipped.
    fn struct_fields(&mut self, depth: usize, field: &mut FieldReader<'_, 'a>) -> Check {
        if depth > MAX_NESTING {
            return Err(format!("{} nests structs too deeply", self.what));
        }
        let mut last = 0i16;
        loop {
            let b = self.byte()?;
            if b == 0 {
                return Ok(());
            }
            let t = b & 0x0f;
            let id = match b >> 4 {
                0 => i16::try_from(self.zigzag()?)
                    .map_err(|_| format!("a bad field id in {}", self.what))?,
                delta => last.wrapping_add(i16::from(delta)),
            };
            last = id;
            if let Some(t) = field(self, id, t)? {
                self.skip_value(t, depth)?;
            }
        }
    }
}

/// Checks the encoded `FileMetaData` of a footer: well-formed as far as it is read,
/// and its schema's child counts consistent with its number of elements and nesting
/// at most [`MAX_SCHEMA_DEPTH`] deep.
pub(crate) fn check_footer(footer: &[u8]) -> Result<(), String> {
    let mut t = Thrift {
        buf: footer,
        pos: 0,
        what: "the footer",
    };
    let mut children: Vec<Option<i64>> = Vec::new();
    t.struct_fields(0, &mut |t, id, ty| {
        if id != 2 || ty != 9 {
            return Ok(Some(ty));
        }
        // field 2: list<SchemaElement>; SchemaElement field 5 is num_children (i32).
        let (et, n) = t.list_header()?;
        if et != 12 {
            return Err("the schema in the footer is not a list of elements".into());
        }
        for _ in 0..n {
            let mut count = None;
            t.struct_fields(1, &mut |t, id, ty| {
                if id == 5 && ty == 5 {
                    count = Some(t.zigzag()?);
                    Ok(None)
                } else {
                    Ok(Some(ty))
                }
            })?;
            children.push(count);
        }
        Ok(None)
    })?;
    check_schema_tree(&children)
}

/// The parquet crate numbers row groups with an `i16` while it decodes a footer, and
/// refuses a file of more than this many ("Row group ordinal 32768 exceeds i16 max
/// value"), although the format does not limit them and other readers read such
/// files.
pub(crate) const MAX_ROW_GROUPS_PER_DECODE: usize = i16::MAX as usize;

/// For a footer of more than `max` row groups, footers of the same file each holding
/// at most `max` of them (in order) and every other field of the original, for the
/// parquet crate to decode one at a time; `None` when there are at most `max`.
pub(crate) fn split_row_groups(footer: &[u8], max: usize) -> Check<Option<Vec<Vec<u8>>>> {
    let mut t = Thrift {
        buf: footer,
        pos: 0,
        what: "the footer",
    };
    // Each field: id, type, and where its value is; for the row groups (field 4,
    // a list of structs), where each element is.
    let mut fields: Vec<(i16, u8, std::ops::Range<usize>)> = Vec::new();
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    t.struct_fields(0, &mut |t, id, ty| {
        let start = t.pos;
        if id == 4 && ty == 9 {
            let (et, n) = t.list_header()?;
            if et != 12 {
                return Err("the row groups in the footer are not a list of structs".into());
            }
            for _ in 0..n {
                let at = t.pos;
                t.skip_value(12, 1)?;
                groups.push(at..t.pos);
            }
        } else {
            t.skip_value(ty, 0)?;
        }
        fields.push((id, ty, start..t.pos));
        Ok(None)
    })?;
    if groups.len() <= max.max(1) {
        return Ok(None);
    }
    let pieces = groups
        .chunks(max.max(1))
        .map(|chunk| {
            let mut out = Vec::new();
            let mut last = 0i16;
            for (id, ty, value) in &fields {
                // The field header: a delta from the last id where it fits, else the
                // id in full (compact protocol).
                match id.checked_sub(last) {
                    Some(d @ 1..=15) => out.push(((d as u8) << 4) | ty),
                    _ => {
                        out.push(*ty);
                        put_varint(
                            &mut out,
                            ((i64::from(*id) << 1) ^ (i64::from(*id) >> 63)) as u64,
                        );
                    }
                }
                last = *id;
                if *id == 4 && *ty == 9 {
                    if chunk.len() < 15 {
                        out.push(((chunk.len() as u8) << 4) | 12);
                    } else {
                        out.push(0xf0 | 12);
                        put_varint(&mut out, chunk.len() as u64);
                    }
                    for g in chunk {
                        out.extend_from_slice(&footer[g.clone()]);
                    }
                } else {
                    out.extend_from_slice(&footer[value.clone()]);
                }
            }
            out.push(0); // the end of the struct
            out
        })
        .collect();
    Ok(Some(pieces))
}

/// Decodes a footer with the parquet crate: in pieces of at most
/// [`MAX_ROW_GROUPS_PER_DECODE`] row groups when it has more, the row groups of the
/// pieces joined in order. (A row group's `ordinal`, which only decryption uses, then
/// counts from 0 in each piece.)
pub(crate) fn decode_footer(footer: &[u8]) -> Result<ParquetMetaData, String> {
    use parquet::file::metadata::ParquetMetaDataReader;
    let decode = |b: &[u8]| ParquetMetaDataReader::decode_metadata(b).map_err(|e| e.to_string());
    let Some(pieces) = split_row_groups(footer, MAX_ROW_GROUPS_PER_DECODE)? else {
        return decode(footer);
    };
    let mut first = None;
    let mut row_groups = Vec::new();
    for piece in pieces {
        let mut b = decode(&piece)?.into_builder();
        row_groups.extend(b.take_row_groups());
        first.get_or_insert(b);
    }
    let first = first.ok_or("the footer has no row groups")?;
    Ok(first.set_row_groups(row_groups).build())
}

/// Appends an unsigned varint.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Whether child counts describe one tree of exactly these elements (depth first).
fn check_schema_tree(children: &[Option<i64>]) -> Result<(), String> {
    let n = children.len() as i64;
    // Children still expected by each open group, innermost last.
    let mut open: Vec<i64> = Vec::new();
    for (i, c) in children.iter().enumerate() {
        if i > 0 && open.is_empty() {
            return Err(format!(
                "the schema has {} elements but its root's children end at {i}",
                children.len()
            ));
        }
        if let Some(last) = open.last_mut() {
            *last -= 1;
        }
        let c = c.unwrap_or(0);
        if c < 0 || c > n - 1 - i as i64 {
            return Err(format!(
                "schema element {i} claims {c} children, but {} elements follow it",
                n - 1 - i as i64
            ));
        }
        if c > 0 {
            open.push(c);
            if open.len() > MAX_SCHEMA_DEPTH {
                return Err(format!(
                    "the schema nests more than {MAX_SCHEMA_DEPTH} levels deep"
                ));
            }
        }
        while open.last() == Some(&0) {
            open.pop();
        }
    }
    if !open.is_empty() {
        return Err("the schema ends before all its groups' children".into());
    }
    Ok(())
}

/// A page holds at most this many values (its count is an i32)…
const MAX_VALUES_PER_PAGE: u64 = i32::MAX as u64;
/// …and its header takes at least this many bytes, so a column chunk of `n` bytes
/// holds fewer than `n / MIN_PAGE_BYTES × MAX_VALUES_PER_PAGE` values.
const MIN_PAGE_BYTES: u64 = 8;

/// Checks decoded metadata against the file: row counts non-negative and within what
/// the column chunks can hold, column chunks (and their indexes) inside the data part
/// of the file (`data_end`: where the footer begins).
pub(crate) fn check_metadata(meta: &ParquetMetaData, data_end: u64) -> Result<(), String> {
    let file_rows = meta.file_metadata().num_rows();
    if file_rows < 0 {
        return Err(format!("the file claims {file_rows} rows"));
    }
    let within = |what: &str, offset: i64, len: i64| -> Result<(), String> {
        let end = offset.checked_add(len);
        match end {
            Some(end) if offset >= 4 && len >= 0 && end as u64 <= data_end => Ok(()),
            _ => Err(format!(
                "{what} at offset {offset}, {len} bytes, outside the data of a file whose footer begins at {data_end}"
            )),
        }
    };
    for (g, rg) in meta.row_groups().iter().enumerate() {
        let rows = rg.num_rows();
        if rows < 0 {
            return Err(format!("row group {g} claims {rows} rows"));
        }
        for (c, col) in rg.columns().iter().enumerate() {
            let what = format!("row group {g}, column {c}");
            // Some writers store 0 for "no dictionary page".
            let start = col
                .dictionary_page_offset()
                .filter(|&o| o != 0)
                .unwrap_or_else(|| col.data_page_offset());
            within(&format!("{what}: data pages"), col.data_page_offset(), 0)?;
            within(&what, start, col.compressed_size())?;
            if col.data_page_offset() < start {
                return Err(format!("{what}: data pages before the column chunk"));
            }
            if let (Some(o), Some(l)) = (col.column_index_offset(), col.column_index_length()) {
                within(&format!("{what}: column index"), o, l.into())?;
            }
            if let (Some(o), Some(l)) = (col.offset_index_offset(), col.offset_index_length()) {
                within(&format!("{what}: offset index"), o, l.into())?;
            }
            let values = col.num_values();
            // Every row has at least one value (or level) in every column.
            if values < rows {
                return Err(format!("{what} holds {values} values for {rows} rows"));
            }
            let most =
                (col.compressed_size() as u64 / MIN_PAGE_BYTES).saturating_mul(MAX_VALUES_PER_PAGE);
            if values as u64 > most {
                return Err(format!(
                    "{what} claims {values} values in {} bytes",
                    col.compressed_size()
                ));
            }
        }
    }
    Ok(())
}

/// The first bytes of a page read to find its header; more are read when a header
/// is longer (large statistics).
const HEADER_WINDOW: u64 = 256;

/// Walks the page headers of the column chunks of row group `g` whose leaf columns
/// `read` includes (`read_at(offset, buf)` reads the file): each must be well-formed
/// Thrift whose lists and maps fit in their bytes, and each page must end within its
/// chunk. The parquet crate's own header decoder walks a forged header's nested
/// containers element by element, with counts that can run to billions (a 2 KB file
/// took a minute to be refused); this walk is linear in the header's size, so the
/// crate then decodes only headers that are. The scan calls it for each row group it
/// reads, just before reading it, with the columns it reads: the pages of columns and
/// row groups a query does not read are never decoded, so they need no check (checking
/// every page of a file when it is opened took a fifth of a TPC-H Q6 count).
pub(crate) fn check_page_headers(
    meta: &ParquetMetaData,
    g: usize,
    read: &ProjectionMask,
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> std::io::Result<()>,
) -> Result<(), String> {
    let mut buf = Vec::new();
    if let Some(rg) = meta.row_groups().get(g) {
        for (c, col) in rg.columns().iter().enumerate() {
            if !read.leaf_included(c) {
                continue;
            }
            // Offsets and sizes were checked against the file by check_metadata.
            let start = col
                .dictionary_page_offset()
                .filter(|&o| o != 0)
                .unwrap_or_else(|| col.data_page_offset()) as u64;
            let end = start + col.compressed_size() as u64;
            let mut pos = start;
            while pos < end {
                let at = |e: String| format!("row group {g}, column {c}, page at byte {pos}: {e}");
                let mut window = HEADER_WINDOW.min(end - pos);
                let (header_len, page_len) = loop {
                    buf.resize(window as usize, 0);
                    read_at(pos, &mut buf).map_err(|e| at(e.to_string()))?;
                    match page_header(&buf) {
                        Ok(found) => break found,
                        // Cut short by the window: read more of the chunk.
                        Err(_) if window < end - pos => window = (window * 8).min(end - pos),
                        Err(e) => return Err(at(e)),
                    }
                };
                let next = pos + header_len + page_len;
                if next > end {
                    return Err(at(format!(
                        "a page of {page_len} bytes runs past the end of its column chunk"
                    )));
                }
                pos = next;
            }
        }
    }
    Ok(())
}

/// The length of the encoded `PageHeader` at the start of `buf` and the page's
/// compressed size (field 3). A data page (type 0), dictionary page (2) or data page
/// of version 2 (3) must carry the header of its type (field 5, 7 or 8): the parquet
/// crate's page reader unwraps it.
fn page_header(buf: &[u8]) -> Check<(u64, u64)> {
    let mut t = Thrift {
        buf,
        pos: 0,
        what: "a page header",
    };
    let mut size = None;
    let mut page_type = None;
    let mut headers = [false; 9];
    t.struct_fields(0, &mut |t, id, ty| match (id, ty) {
        (1, 5) => {
            page_type = Some(t.zigzag()?);
            Ok(None)
        }
        (3, 5) => {
            size = Some(t.zigzag()?);
            Ok(None)
        }
        (5 | 7 | 8, 12) => {
            headers[id as usize] = true;
            Ok(Some(ty))
        }
        _ => Ok(Some(ty)),
    })?;
    let needs = match page_type {
        Some(0) => Some((5, "a data page")),
        Some(2) => Some((7, "a dictionary page")),
        Some(3) => Some((8, "a data page of version 2")),
        _ => None,
    };
    if let Some((field, what)) = needs {
        if !headers[field] {
            return Err(format!("{what} without its header"));
        }
    }
    match size {
        Some(n) if n >= 0 => Ok((t.pos as u64, n as u64)),
        Some(n) => Err(format!("a page claims {n} bytes")),
        None => Err("a page header without its size".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A footer split in pieces of 2 row groups decodes to the same row groups, in
    /// order, as the whole.
    #[test]
    fn footers_split_into_pieces_decode_to_the_same_row_groups() {
        use arrow::array::{Int64Array, RecordBatch};
        use parquet::arrow::ArrowWriter;
        use parquet::file::metadata::ParquetMetaDataReader;
        use std::sync::Arc;
        let batch = RecordBatch::try_from_iter([(
            "i",
            Arc::new(Int64Array::from((0..5).collect::<Vec<i64>>())) as _,
        )])
        .unwrap();
        let mut bytes = Vec::new();
        let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
        for row in 0..5 {
            w.write(&batch.slice(row, 1)).unwrap();
            w.flush().unwrap();
        }
        w.close().unwrap();
        let n = bytes.len();
        let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
        let footer = &bytes[n - 8 - len..n - 8];
        assert!(split_row_groups(footer, 5).unwrap().is_none());
        let pieces = split_row_groups(footer, 2).unwrap().unwrap();
        assert_eq!(pieces.len(), 3);
        let whole = ParquetMetaDataReader::decode_metadata(footer).unwrap();
        let mut offsets = Vec::new();
        for p in &pieces {
            let m = ParquetMetaDataReader::decode_metadata(p).unwrap();
            assert_eq!(m.file_metadata().num_rows(), 5);
            offsets.extend(
                m.row_groups()
                    .iter()
                    .map(|rg| rg.column(0).data_page_offset()),
            );
        }
        let expected: Vec<i64> = whole
            .row_groups()
            .iter()
            .map(|rg| rg.column(0).data_page_offset())
            .collect();
        assert_eq!(offsets, expected);
    }

    #[test]
    fn schema_trees() {
        assert!(check_schema_tree(&[Some(2), None, None]).is_ok());
        assert!(check_schema_tree(&[Some(2), Some(1), None, None]).is_ok());
        assert!(check_schema_tree(&[Some(0)]).is_ok());
        assert!(check_schema_tree(&[Some(1 << 31), None]).is_err());
        assert!(check_schema_tree(&[Some(-1), None]).is_err());
        assert!(check_schema_tree(&[Some(1), None, None]).is_err());
        assert!(check_schema_tree(&[Some(3), None, None]).is_err());
    }

    #[test]
    fn thrift_walk_refuses_bad_input() {
        // A struct whose field 2 is a list claiming 2^31 elements in 4 bytes.
        assert!(check_footer(&[0x29, 0xfc, 0xff, 0xff, 0xff, 0x07, 0]).is_err());
        // Truncated.
        assert!(check_footer(&[0x15]).is_err());
        // Structs nested deeper than allowed.
        let deep: Vec<u8> = std::iter::repeat_n(0x1c, 100).collect();
        assert!(check_footer(&deep).is_err());
        // Field 1, a map claiming 2^40 boolean -> boolean entries in a few bytes (it
        // used to be walked entry by entry, each taking no bytes: a hang).
        let mut map = vec![0x1b];
        let mut n = 1u64 << 40;
        while n >= 0x80 {
            map.push((n as u8) | 0x80);
            n >>= 7;
        }
        map.extend([n as u8, 0x11, 1, 1, 0]);
        assert!(check_footer(&map).unwrap_err().contains("claims"));
        // Field 1, a list of three booleans with one byte left.
        assert!(check_footer(&[0x19, 0x31, 1]).is_err());
    }
}
