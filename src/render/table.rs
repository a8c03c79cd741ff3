//! kubectl-looking tables: no borders, upper-case headers, three spaces between columns.

use comfy_table::presets::NOTHING;
use comfy_table::{ContentArrangement, Table};

pub fn plain_table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_style(NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.to_vec());
    for column in table.column_iter_mut() {
        column.set_padding((0, 3));
    }
    table
}

/// comfy-table pads the last column too; kubectl does not.
pub fn lines(table: &Table) -> Vec<String> {
    table.lines().map(|l| l.trim_end().to_string()).collect()
}
