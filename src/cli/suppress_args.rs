//! The flags that accept findings, shared by `check` and `serve`.

use std::path::PathBuf;

use clap::Args;

/// Findings the operator has accepted: `check`, its fleets and `serve` report them as
/// ignored and never count them.
#[derive(Debug, Clone, Default, Args)]
pub struct SuppressArgs {
    /// Report findings with this code (on OBJECT only, e.g. node/server-1) as ignored: listed, never counted in the exit code or alerts. Repeatable.
    #[arg(long = "ignore", value_name = "CODE[=OBJECT]", value_parser = crate::diagnose::suppression::Suppression::parse)]
    pub ignore: Vec<crate::diagnose::suppression::Suppression>,

    /// A YAML file with an `ignore:` list of CODE[=OBJECT] (default, when it exists: $XDG_CONFIG_HOME/k3sdoctor/config.yaml, else ~/.config/k3sdoctor/config.yaml).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}
