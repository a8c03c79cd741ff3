//! One file per subcommand: load → diagnose/plan → render (→ apply). The only layer that
//! prints, through `Ui`.

pub(crate) mod check;
pub(crate) mod completions;
mod configmap_write;
mod confirm_write;
pub(crate) mod dump;
pub(crate) mod fleet;
mod fleet_members;
mod follow_write;
mod heal_move;
pub(crate) mod leases;
pub(crate) mod leases_follow;
pub(crate) mod leases_watch;
mod load;
mod lock_writes;
pub(crate) mod man;
pub(crate) mod options;
pub(crate) mod rbac;
mod repair_events;
mod request_spinner;
pub(crate) mod serve;
mod serve_fleet;
mod serve_heal;
mod snapshot_configmap_io;
pub(crate) mod snapshots;
pub(crate) mod snapshots_backfill;
pub(crate) mod snapshots_restore;
mod suppressions;
mod takeover_watch;
mod termination;
mod ui;
pub(crate) mod verbosity;
pub(crate) mod version;

pub(crate) use confirm_write::{confirm_write, require_confirmation_means};
pub(crate) use ui::Ui;

/// A write that failed before anything changed: a credentials problem (401/403) is exit 3
/// like any refused read; anything else is a repair not completed (exit 4).
pub(crate) fn write_failed_nothing_written(e: crate::input::ReadError) -> crate::exit::Failure {
    let message = format!("{}; nothing was written", e.message);
    match e.http_status {
        Some(401 | 403) => crate::exit::Failure::Read(crate::input::ReadError { message, ..e }),
        _ => crate::exit::Failure::Incomplete(message),
    }
}

/// Saves the ConfigMap a repair is about to change: to `requested` (`--backup`), else to
/// `./<name>.<resourceVersion>.backup.json`; an existing file is never overwritten. The backup
/// records `cluster`'s identity when it is known (`snapshots restore` checks it).
pub(crate) fn save_backup(
    requested: Option<&std::path::Path>,
    name: &str,
    cm: &k8s_openapi::api::core::v1::ConfigMap,
    cluster: &crate::input::live::cluster_identity::ClusterIdentity,
) -> Result<std::path::PathBuf, crate::exit::Failure> {
    use crate::snapshots::backup_file::{default_backup_path, write_backup};
    let path = requested.map_or_else(|| default_backup_path(name, cm), |p| p.to_path_buf());
    write_backup(&path, cm, cluster.id()).map_err(|e| {
        crate::exit::Failure::Refused(format!(
            "cannot write the backup {}: {e}; nothing was written; choose another path with --backup",
            path.display()
        ))
    })?;
    Ok(path)
}

/// The note for a backup saved without the cluster's identity: restoring it needs `--force`
/// unless the ConfigMap is still the same object.
pub(crate) fn unidentified_backup_note(
    cluster: &crate::input::live::cluster_identity::ClusterIdentity,
) -> Option<String> {
    match cluster {
        crate::input::live::cluster_identity::ClusterIdentity::Known(_) => None,
        crate::input::live::cluster_identity::ClusterIdentity::Unknown(why) => Some(format!(
            "note: the backup records no cluster identity ({why}; the read-only role, `k3sdoctor rbac read-only`, allows it); \
             restoring it onto anything but this very ConfigMap will need --force"
        )),
    }
}
