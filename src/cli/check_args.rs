//! `check`'s own flags.

use clap::Args;

use super::{FleetArgs, RancherArgs, SuppressArgs};
use crate::diagnose::finding::FailOn;

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,

    #[command(flatten)]
    pub suppress: SuppressArgs,

    #[command(flatten)]
    pub fleet: FleetArgs,

    #[command(flatten)]
    pub rancher: RancherArgs,
}
