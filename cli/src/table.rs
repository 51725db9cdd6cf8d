//! The `table` output format, after DuckDB's: a box with the column names and their SQL
//! types, NULL written as `NULL`, numbers right-aligned, columns left out (`…`) when the
//! table is wider than the terminal, and a footer with the row and column counts.

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Schema};
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use console::measure_text_width;

use super::schema::sql_name;

/// The widest a cell is shown when the table must fit a width.
const MAX_CELL: usize = 40;

/// Whether values of this type are numbers (right-aligned).
fn is_numeric(t: &DataType) -> bool {
    t.is_numeric() || matches!(t, DataType::Dictionary(_, v) if v.is_numeric())
}

/// A cell's text on one line: control characters escaped.
fn one_line(s: &str) -> String {
    broadhead::escape::escape(s).into_owned()
}

/// `s` cut to at most `max` display columns, with `…` where it was cut.
fn truncate(s: &str, max: usize) -> String {
    if measure_text_width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    for c in s.chars() {
        let mut next = out.clone();
        next.push(c);
        if measure_text_width(&next) + 1 > max {
            break;
        }
        out = next;
    }
    out.push('…');
    out
}

/// Text padded to `width` display columns: right-aligned, centered or left-aligned.
fn pad(s: &str, width: usize, align: Align) -> String {
    let fill = width.saturating_sub(measure_text_width(s));
    let (left, right) = match align {
        Align::Left => (0, fill),
        Align::Right => (fill, 0),
        Align::Center => (fill / 2, fill - fill / 2),
    };
    format!("{}{s}{}", " ".repeat(left), " ".repeat(right))
}

#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
    Center,
}

/// One column as shown.
struct Column {
    name: String,
    type_name: String,
    cells: Vec<String>,
    numeric: bool,
    width: usize,
}

/// Renders `batches` (the rows shown, of `total` rows) as a table at most `max_width`
/// display columns wide (`None`: as wide as it takes).
pub fn render(
    schema: &Schema,
    batches: &[RecordBatch],
    total: usize,
    max_width: Option<usize>,
) -> Result<String, ArrowError> {
    let options = FormatOptions::new().with_null("NULL");
    let mut columns: Vec<Column> = schema
        .fields()
        .iter()
        .map(|f| Column {
            name: one_line(f.name()),
            type_name: sql_name(f.data_type()).to_ascii_lowercase(),
            cells: Vec::new(),
            numeric: is_numeric(f.data_type()),
            width: 0,
        })
        .collect();
    for batch in batches {
        for (c, array) in columns.iter_mut().zip(batch.columns()) {
            let formatter = ArrayFormatter::try_new(array.as_ref(), &options)?;
            for row in 0..array.len() {
                let mut text = one_line(&formatter.value(row).try_to_string()?);
                if max_width.is_some() {
                    text = truncate(&text, MAX_CELL);
                }
                c.cells.push(text);
            }
        }
    }
    for c in &mut columns {
        c.width = c
            .cells
            .iter()
            .map(|s| measure_text_width(s))
            .chain([
                measure_text_width(&c.name),
                measure_text_width(&c.type_name),
            ])
            .max()
            .unwrap_or(1)
            .max(1);
    }

    // The columns that fit: the first, the last, the second, the second to last, …
    // with a `…` column for the ones left out.
    let n = columns.len();
    let mut shown: Vec<bool> = vec![true; n];
    let total_width = |shown: &[bool], gap: bool| {
        1 + columns
            .iter()
            .zip(shown)
            .filter(|(_, s)| **s)
            .map(|(c, _)| c.width + 3)
            .sum::<usize>()
            + if gap { 4 } else { 0 }
    };
    if let Some(max) = max_width {
        if total_width(&shown, false) > max && n > 1 {
            shown = vec![false; n];
            let order = (0..n).map(|k| if k % 2 == 0 { k / 2 } else { n - 1 - k / 2 });
            for (k, i) in order.enumerate() {
                shown[i] = true;
                if k > 0 && total_width(&shown, true) > max {
                    shown[i] = false;
                    break;
                }
            }
        }
    }
    let shown_count = shown.iter().filter(|s| **s).count();
    // Display order, with None for the gap.
    let mut layout: Vec<Option<usize>> = Vec::new();
    for (i, show) in shown.iter().enumerate() {
        if *show {
            layout.push(Some(i));
        } else if layout.last() != Some(&None) {
            layout.push(None);
        }
    }
    let widths: Vec<usize> = layout
        .iter()
        .map(|c| c.map_or(1, |i| columns[i].width))
        .collect();
    let rule = |l: &str, m: &str, r: &str| {
        let parts: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
        format!("{l}{}{r}\n", parts.join(m))
    };
    let line = |cell: &dyn Fn(Option<usize>, usize) -> String| {
        let parts: Vec<String> = layout
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!(" {} ", cell(*c, *w)))
            .collect();
        format!("│{}│\n", parts.join("│"))
    };
    let mut out = String::new();
    if n > 0 {
        out.push_str(&rule("┌", "┬", "┐"));
        out.push_str(&line(&|c, w| match c {
            Some(i) => pad(&columns[i].name, w, Align::Center),
            None => "…".into(),
        }));
        out.push_str(&line(&|c, w| match c {
            Some(i) => pad(&columns[i].type_name, w, Align::Center),
            None => "…".into(),
        }));
        out.push_str(&rule("├", "┼", "┤"));
        let rows = columns.first().map_or(0, |c| c.cells.len());
        for row in 0..rows {
            out.push_str(&line(&|c, w| match c {
                Some(i) => {
                    let c = &columns[i];
                    let align = if c.numeric { Align::Right } else { Align::Left };
                    pad(&c.cells[row], w, align)
                }
                None => "…".into(),
            }));
        }
        out.push_str(&rule("└", "┴", "┘"));
    }
    let rows_shown = columns.first().map_or(0, |c| c.cells.len());
    let mut footer = format!("{total} row{}", if total == 1 { "" } else { "s" });
    if total > rows_shown {
        footer.push_str(&format!(
            " ({rows_shown} shown; use --limit, or --format csv)"
        ));
    }
    if shown_count < n {
        footer.push_str(&format!("  {n} columns ({shown_count} shown)"));
    }
    out.push_str(&footer);
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Float64Array, Int32Array, StringArray};
    use arrow::datatypes::Field;
    use std::sync::Arc;

    fn batch() -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("name", DataType::Utf8, true),
            Field::new("f", DataType::Float64, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None, Some(300)])) as ArrayRef,
                Arc::new(StringArray::from(vec![Some("a\nb"), Some(""), None])),
                Arc::new(Float64Array::from(vec![1.5, f64::NAN, -2.0])),
            ],
        )
        .unwrap()
    }

    #[test]
    fn nulls_types_alignment_and_footer() {
        let b = batch();
        let text = render(&b.schema(), std::slice::from_ref(&b), 3, None).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "│    i    │  name   │   f    │");
        assert_eq!(lines[2], "│ integer │ varchar │ double │");
        assert_eq!(lines[4], "│       1 │ a\\nb    │    1.5 │");
        assert_eq!(lines[5], "│    NULL │         │    NaN │");
        assert_eq!(lines[6], "│     300 │ NULL    │   -2.0 │");
        assert_eq!(*lines.last().unwrap(), "3 rows");
    }

    #[test]
    fn narrow_terminals_leave_out_middle_columns() {
        let b = batch();
        let text = render(&b.schema(), std::slice::from_ref(&b), 10, Some(24)).unwrap();
        assert!(text.contains('…'), "{text}");
        assert!(text
            .lines()
            .all(|l| measure_text_width(l) <= 24 || !l.starts_with('│')));
        assert!(
            text.ends_with(
                "10 rows (3 shown; use --limit, or --format csv)  3 columns (2 shown)\n"
            ),
            "{text}"
        );
    }
}
