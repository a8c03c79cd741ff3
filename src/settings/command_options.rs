//! Each command's own options, resolved from its flags once: the commands read these, never
//! clap's argument structs, so what a command depends on is named here and nothing about how
//! it was spelled on the command line reaches it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{
    BackfillArgs, CheckArgs, FollowArgs, LeasesArgs, RestoreArgs, ServeArgs, SnapshotDiffArgs,
    SnapshotListArgs, SnapshotStorage, SuppressArgs,
};
use crate::diagnose::finding::FailOn;
use crate::diagnose::suppression::Suppression;
use crate::heal::heal_policy::HealMode;
use crate::monitor::access::MetricsAuth;
use crate::monitor::log::LogFormat;

/// `--ignore` and `--config`: the findings a run accepts.
#[derive(Debug, Clone, Default)]
pub(crate) struct SuppressOptions {
    pub(crate) ignore: Vec<Suppression>,
    pub(crate) config: Option<PathBuf>,
}

/// `leases` and `leases --watch`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeasesOptions {
    pub(crate) fail_on: FailOn,
}

/// `check`.
#[derive(Debug, Clone)]
pub(crate) struct CheckOptions {
    pub(crate) fail_on: FailOn,
    pub(crate) suppress: SuppressOptions,
}

/// `dump`.
#[derive(Debug, Clone)]
pub(crate) struct DumpOptions {
    pub(crate) path: Option<std::path::PathBuf>,
}

impl From<&crate::cli::DumpArgs> for DumpOptions {
    fn from(args: &crate::cli::DumpArgs) -> Self {
        DumpOptions {
            path: args.path.clone(),
        }
    }
}

/// `leases follow`.
#[derive(Debug, Clone)]
pub(crate) struct FollowOptions {
    pub(crate) fix: bool,
    pub(crate) to: Option<String>,
    pub(crate) lease: Option<String>,
    pub(crate) yes: bool,
    pub(crate) no_wait: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) force: bool,
    pub(crate) fail_on: FailOn,
}

/// Which snapshots `snapshots list --storage` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storage {
    Local,
    S3,
}

impl Storage {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Storage::Local => "local",
            Storage::S3 => "s3",
        }
    }
}

/// `snapshots list`.
#[derive(Debug, Clone)]
pub(crate) struct SnapshotListOptions {
    pub(crate) fail_on: FailOn,
    pub(crate) node: Option<String>,
    pub(crate) storage: Option<Storage>,
    pub(crate) failed: bool,
}

/// `snapshots diff`: without `--fail-on`, the diff's own default.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SnapshotDiffOptions {
    pub(crate) fail_on: Option<FailOn>,
}

/// `snapshots backfill`.
#[derive(Debug, Clone)]
pub(crate) struct BackfillOptions {
    pub(crate) fix: bool,
    pub(crate) prune: bool,
    pub(crate) yes: bool,
    pub(crate) backup: Option<PathBuf>,
    pub(crate) fail_on: FailOn,
}

/// `snapshots restore`.
#[derive(Debug, Clone)]
pub(crate) struct RestoreOptions {
    pub(crate) from_backup: PathBuf,
    pub(crate) fix: bool,
    pub(crate) yes: bool,
    pub(crate) backup: Option<PathBuf>,
    pub(crate) force: bool,
    pub(crate) fail_on: FailOn,
}

/// `serve`.
#[derive(Debug, Clone)]
pub(crate) struct ServeOptions {
    pub(crate) listen: SocketAddr,
    pub(crate) log_format: LogFormat,
    pub(crate) suppress: SuppressOptions,
    pub(crate) metrics_auth: MetricsAuth,
    pub(crate) heal: HealMode,
    pub(crate) interval: Option<Duration>,
    pub(crate) heal_after: Duration,
    pub(crate) heal_cooldown: Duration,
}

impl From<&SuppressArgs> for SuppressOptions {
    fn from(args: &SuppressArgs) -> Self {
        SuppressOptions {
            ignore: args.ignore.clone(),
            config: args.config.clone(),
        }
    }
}

impl From<&LeasesArgs> for LeasesOptions {
    fn from(args: &LeasesArgs) -> Self {
        LeasesOptions {
            fail_on: args.fail_on,
        }
    }
}

impl From<&CheckArgs> for CheckOptions {
    fn from(args: &CheckArgs) -> Self {
        CheckOptions {
            fail_on: args.fail_on,
            suppress: (&args.suppress).into(),
        }
    }
}

impl From<&FollowArgs> for FollowOptions {
    fn from(args: &FollowArgs) -> Self {
        FollowOptions {
            fix: args.fix,
            to: args.to.clone(),
            lease: args.lease.clone(),
            yes: args.yes,
            no_wait: args.no_wait,
            timeout: args.timeout,
            force: args.force,
            fail_on: args.fail_on,
        }
    }
}

impl From<&SnapshotListArgs> for SnapshotListOptions {
    fn from(args: &SnapshotListArgs) -> Self {
        SnapshotListOptions {
            fail_on: args.fail_on,
            node: args.node.clone(),
            storage: args.storage.map(|storage| match storage {
                SnapshotStorage::Local => Storage::Local,
                SnapshotStorage::S3 => Storage::S3,
            }),
            failed: args.failed,
        }
    }
}

impl From<&SnapshotDiffArgs> for SnapshotDiffOptions {
    fn from(args: &SnapshotDiffArgs) -> Self {
        SnapshotDiffOptions {
            fail_on: args.fail_on,
        }
    }
}

impl From<&BackfillArgs> for BackfillOptions {
    fn from(args: &BackfillArgs) -> Self {
        BackfillOptions {
            fix: args.fix,
            prune: args.prune,
            yes: args.yes,
            backup: args.backup.clone(),
            fail_on: args.fail_on,
        }
    }
}

impl From<&RestoreArgs> for RestoreOptions {
    fn from(args: &RestoreArgs) -> Self {
        RestoreOptions {
            from_backup: args.from_backup.clone(),
            fix: args.fix,
            yes: args.yes,
            backup: args.backup.clone(),
            force: args.force,
            fail_on: args.fail_on,
        }
    }
}

impl From<&ServeArgs> for ServeOptions {
    fn from(args: &ServeArgs) -> Self {
        ServeOptions {
            listen: args.listen,
            log_format: args.log_format,
            suppress: (&args.suppress).into(),
            metrics_auth: args.metrics_auth,
            heal: args.heal,
            interval: args.interval,
            heal_after: args.heal_after,
            heal_cooldown: args.heal_cooldown,
        }
    }
}
