//! `leases` and `leases follow`'s own flags.

use std::time::Duration;

use clap::{Args, Subcommand};

use super::FleetArgs;
use super::help::FOLLOW_EXAMPLES;
use super::value_parsers::parse_wait;
use crate::diagnose::finding::FailOn;

#[derive(Debug, Clone, Args)]
pub struct LeasesArgs {
    #[command(subcommand)]
    pub action: Option<LeasesAction>,

    #[command(flatten)]
    pub fleet: FleetArgs,

    /// Print the table, then one line per change (holder, state, transitions) until interrupted; with -o json|yaml, one LeaseChange document per change.
    #[arg(short, long)]
    pub watch: bool,

    /// Exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Subcommand)]
pub enum LeasesAction {
    /// Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover.
    #[command(after_long_help = FOLLOW_EXAMPLES)]
    Follow(FollowArgs),
}

#[derive(Debug, Clone, Args)]
pub struct FollowArgs {
    /// Write the change (after a server-side dry run and confirmation); without it only the plan is shown.
    #[arg(long)]
    pub fix: bool,

    /// The node (name or hostname) that should hold the lock (default: the holder of the other k3s lock).
    #[arg(long, value_name = "NODE|HOSTNAME")]
    pub to: Option<String>,

    /// The lock to move: <prog> (default) or <prog>-etcd.
    #[arg(long, value_name = "NAME")]
    pub lease: Option<String>,

    /// Do not ask for confirmation (needed without a terminal).
    #[arg(short, long)]
    pub yes: bool,

    /// Do not wait for the target to take the lock over.
    #[arg(long)]
    pub no_wait: bool,

    /// How long to wait for the takeover (default: the lock record's lease duration plus its
    /// renew deadline, 75s for wrangler's 45s/30s, at least 30s and at most 10m)
    #[arg(long, value_name = "DURATION", value_parser = parse_wait)]
    pub timeout: Option<Duration>,

    /// Skip the target, etcd-quorum and split checks (never the permission check).
    #[arg(long)]
    pub force: bool,

    /// After a verified write, exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}
