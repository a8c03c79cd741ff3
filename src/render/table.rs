//! kubectl-looking tables: no borders, upper-case headers, three spaces between columns.
//!
//! Tables fit the output width by wrapping the widest cells between words. comfy-table's own
//! dynamic arrangement also cuts words (a node name split over two lines cannot be copied),
//! so the columns are sized here and comfy-table only draws them.

use comfy_table::presets::NOTHING;
use comfy_table::{ContentArrangement, Table};

use super::control_chars::escape_controls;
use super::style::Style;
use super::wrap::{columns, wrap_to};
use crate::line_cap::{LONGEST_QUOTE, cap_at};

/// Column gap, as kubectl prints it.
const GAP: usize = 3;

pub(super) struct PlainTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// `None` for `-o wide`, which is wide by request and never wraps, like kubectl's.
    width: Option<usize>,
    /// `false` under `--no-headers`.
    headers: bool,
}

/// A table laid out for this run: cells wrap only on a terminal and not for `-o wide`
/// ([`Style::table_width`]); the header is left out under `--no-headers`.
pub(super) fn plain_table(header: &[&str], wide: bool, style: Style) -> PlainTable {
    PlainTable {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows: Vec::new(),
        width: style.table_width(wide),
        headers: !style.no_headers,
    }
}

impl PlainTable {
    /// Cells are text from the cluster: control characters are escaped, so a newline cannot
    /// add a row and an escape sequence cannot reach the terminal, and a cell is cut at
    /// [`LONGEST_QUOTE`] bytes, so one object cannot make a table of megabytes.
    pub(super) fn add_row(&mut self, row: Vec<String>) {
        self.rows.push(
            row.into_iter()
                .map(|cell| cap_at(&escape_controls(&cell), LONGEST_QUOTE).into_owned())
                .collect(),
        );
    }
}

/// The table's lines, at most the width asked for where the words allow; a table that cannot
/// fit without cutting a word stays wider.
pub(super) fn lines(table: PlainTable) -> Vec<String> {
    let PlainTable {
        header,
        mut rows,
        width,
        headers,
    } = table;
    if let Some(width) = width {
        let limits = column_limits(&header, &rows, width);
        for row in &mut rows {
            for (cell, limit) in row.iter_mut().zip(&limits) {
                if let Some(limit) = limit {
                    *cell = wrap_to(cell, "", "", *limit).join("\n");
                }
            }
        }
    }
    let mut drawn = Table::new();
    drawn
        .load_style(NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    for row in rows {
        drawn.add_row(row);
    }
    for column in drawn.column_iter_mut() {
        column.set_padding((0, GAP as u16));
    }
    // comfy-table pads the last column too; kubectl does not. The header is laid out even
    // when left out, so that columns are as wide with and without it (as kubectl's are).
    drawn
        .lines()
        .skip(usize::from(!headers))
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// For each column, the width its cells wrap to (`None`: as wide as its content). The widest
/// column gives way first, never below its longest word.
fn column_limits(header: &[String], rows: &[Vec<String>], width: usize) -> Vec<Option<usize>> {
    let cells =
        |i: usize| std::iter::once(&header[i]).chain(rows.iter().filter_map(move |r| r.get(i)));
    let natural: Vec<usize> = (0..header.len())
        .map(|i| cells(i).map(|c| columns(c)).max().unwrap_or(0))
        .collect();
    let longest_word: Vec<usize> = (0..header.len())
        .map(|i| {
            cells(i)
                .flat_map(|c| c.split_whitespace())
                .map(columns)
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut sizes = natural.clone();
    let total = |sizes: &[usize]| sizes.iter().sum::<usize>() + GAP * sizes.len().saturating_sub(1);
    while total(&sizes) > width {
        let Some(widest) = (0..sizes.len())
            .filter(|&i| sizes[i] > longest_word[i])
            .max_by_key(|&i| sizes[i])
        else {
            break;
        };
        let excess = total(&sizes) - width;
        sizes[widest] = sizes[widest]
            .saturating_sub(excess)
            .max(longest_word[widest]);
    }
    sizes
        .iter()
        .zip(&natural)
        .map(|(&size, &natural)| (size < natural).then_some(size))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_terminal(width: usize) -> Style {
        Style {
            width,
            terminal: true,
            ..Style::default()
        }
    }

    fn render(width: usize) -> Vec<String> {
        render_with(on_terminal(width))
    }

    fn render_with(style: Style) -> Vec<String> {
        let mut table = plain_table(&["LOCK", "HOLDER", "ROLES"], false, style);
        table.add_row(vec![
            "k3s".into(),
            "cp-a (node ip-10-0-1-5.ec2.internal)".into(),
            "control-plane,etcd,master".into(),
        ]);
        lines(table)
    }

    #[test]
    fn cells_wrap_between_words_to_fit() {
        assert_eq!(
            render(60),
            [
                "LOCK   HOLDER                      ROLES",
                "k3s    cp-a (node                  control-plane,etcd,master",
                "       ip-10-0-1-5.ec2.internal)",
            ]
        );
    }

    #[test]
    fn a_table_that_cannot_fit_keeps_its_words_whole() {
        let lines = render(20);
        assert!(
            lines
                .iter()
                .any(|l| l.contains("ip-10-0-1-5.ec2.internal)"))
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("control-plane,etcd,master"))
        );
    }

    #[test]
    fn a_table_that_fits_is_left_alone() {
        assert_eq!(
            render(100)[1],
            "k3s    cp-a (node ip-10-0-1-5.ec2.internal)   control-plane,etcd,master"
        );
    }

    #[test]
    fn off_a_terminal_a_row_is_one_line_however_wide() {
        let piped = render_with(Style {
            width: 20,
            ..Style::default()
        });
        assert_eq!(
            piped,
            [
                "LOCK   HOLDER                                 ROLES",
                "k3s    cp-a (node ip-10-0-1-5.ec2.internal)   control-plane,etcd,master",
            ]
        );
    }

    #[test]
    fn no_headers_leaves_the_header_out_and_the_columns_where_they_were() {
        let with = render_with(Style::default());
        let without = render_with(Style {
            no_headers: true,
            ..Style::default()
        });
        assert_eq!(without, with[1..]);
        let with = render(30);
        let without = render_with(Style {
            no_headers: true,
            ..on_terminal(30)
        });
        assert_eq!(without, with[1..]);
    }

    #[test]
    fn wide_cells_count_display_columns() {
        let mut table = plain_table(&["NAME", "NOTE"], false, on_terminal(30));
        table.add_row(vec!["节点一".into(), "x".into()]);
        table.add_row(vec!["node-1".into(), "y".into()]);
        let lines = lines(table);
        // Six columns for three double-width characters: NOTE starts at the same column.
        assert_eq!(lines[1], "节点一   x");
        assert_eq!(lines[2], "node-1   y");
    }
}
