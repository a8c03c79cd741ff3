//! `dump`'s own arguments.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct DumpArgs {
    /// Where to write it: a folder that does not exist yet, or a file ending in .tar.gz or
    /// .tgz (default: k3sdoctor-dump-<UTC time>.tar.gz in the current folder).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
}
