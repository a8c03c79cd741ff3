//! `snapshots` and its actions' own flags.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::RancherArgs;
use super::help::{
    SNAPSHOTS_BACKFILL_EXAMPLES, SNAPSHOTS_DIFF_EXAMPLES, SNAPSHOTS_LIST_EXAMPLES,
    SNAPSHOTS_RESTORE_EXAMPLES,
};
use crate::diagnose::finding::FailOn;

/// `snapshots` alone lists, as `k3s etcd-snapshot ls` does. The list's
/// filters stay on `list` (`snapshots ls --node x`): taken by `snapshots` too, they would
/// clash with the global flags clap accepts between `snapshots` and its subcommand.
#[derive(Debug, Clone, Args)]
pub struct SnapshotsArgs {
    #[command(subcommand)]
    pub action: Option<SnapshotsAction>,
}

impl SnapshotsArgs {
    /// The action to run: bare `snapshots` is `snapshots list` with its defaults.
    pub fn action(&self) -> SnapshotsAction {
        self.action
            .clone()
            .unwrap_or(SnapshotsAction::List(SnapshotListArgs {
                fail_on: FailOn::Error,
                node: None,
                storage: None,
                failed: false,
                rancher: RancherArgs::default(),
            }))
    }
}

#[derive(Debug, Clone, Subcommand)]
pub enum SnapshotsAction {
    /// One row per snapshot: node, state, age, size, and the state of its ConfigMap entry (the default).
    #[command(visible_alias = "ls", after_long_help = SNAPSHOTS_LIST_EXAMPLES)]
    List(SnapshotListArgs),
    /// What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences.
    #[command(after_long_help = SNAPSHOTS_DIFF_EXAMPLES)]
    Diff(SnapshotDiffArgs),
    /// Write the missing and stale entries exactly as k3s would (with --fix).
    #[command(after_long_help = SNAPSHOTS_BACKFILL_EXAMPLES)]
    Backfill(BackfillArgs),
    /// Put back the ConfigMap data a backfill backup holds, exactly (with --fix).
    #[command(after_long_help = SNAPSHOTS_RESTORE_EXAMPLES)]
    Restore(RestoreArgs),
}

#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// The backup file `snapshots backfill --fix` saved (it prints its path).
    #[arg(long, value_name = "FILE", required = true)]
    pub from_backup: PathBuf,

    /// Write the change (after a backup of the current ConfigMap, a server-side dry run and confirmation); without it only the plan is shown.
    #[arg(long)]
    pub fix: bool,

    /// Do not ask for confirmation (needed without a terminal).
    #[arg(short, long)]
    pub yes: bool,

    /// Where to save the current ConfigMap before restoring (default: ./<configmap>.<resourceVersion>.backup.json).
    #[arg(long, value_name = "FILE")]
    pub backup: Option<PathBuf>,

    /// Restore a backup that cannot be confirmed as this very ConfigMap's (it was recreated since, or the backup or the role cannot show the cluster's identity); another cluster's backup is refused even so.
    #[arg(long)]
    pub force: bool,

    /// After a verified write, exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Args)]
pub struct SnapshotListArgs {
    /// Exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,

    /// Only snapshots taken (or uploaded) by this node.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,

    /// Only snapshots stored locally on their node, or in S3.
    #[arg(long, value_enum, value_name = "STORAGE")]
    pub storage: Option<SnapshotStorage>,

    /// Only failed snapshots (readyToUse false with an error).
    #[arg(long)]
    pub failed: bool,

    #[command(flatten)]
    pub rancher: RancherArgs,
}

/// Where a snapshot is stored, for `snapshots list --storage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SnapshotStorage {
    Local,
    S3,
}

impl SnapshotStorage {
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotStorage::Local => "local",
            SnapshotStorage::S3 => "s3",
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct SnapshotDiffArgs {
    /// Exit 1 when a finding of at least this severity remains (default: on any difference, like kubectl diff, or any error).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,

    #[command(flatten)]
    pub rancher: RancherArgs,
}

#[derive(Debug, Clone, Args)]
pub struct BackfillArgs {
    /// Write the change (after a backup, a server-side dry run and confirmation); without it only the plan is shown.
    #[arg(long)]
    pub fix: bool,

    /// Also remove entries that have no ETCDSnapshotFile behind them.
    #[arg(long)]
    pub prune: bool,

    /// Do not ask for confirmation (needed without a terminal).
    #[arg(short, long)]
    pub yes: bool,

    /// Where to save the ConfigMap before changing it (default: ./<configmap>.<resourceVersion>.backup.json); undo with `snapshots restore --from-backup FILE --fix`.
    #[arg(long, value_name = "FILE")]
    pub backup: Option<PathBuf>,

    /// After a verified write, exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}
