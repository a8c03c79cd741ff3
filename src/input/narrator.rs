//! Where a reader's lines go: a command's terminal (`-v` traces, notes unless `-q`) or, for
//! `serve`'s heal task, nowhere. Readers take a `&dyn Narrator`, never the terminal itself.

use super::connect::Connection;

pub(crate) trait Narrator: Sync {
    /// A line for `-v`: what is being read, from where.
    fn trace(&self, line: &str);
    /// A line worth telling the user (unless `-q`): a notice, a caveat about the input.
    fn note(&self, line: &str);
    /// Shows which request a slow read is waiting for, where a person is watching.
    fn watch_requests(&self, _conn: &Connection) {}
}

/// Tells nothing: a task whose outcome is reported another way (metrics, its log).
pub(crate) struct Silent;

impl Narrator for Silent {
    fn trace(&self, _line: &str) {}
    fn note(&self, _line: &str) {}
}
