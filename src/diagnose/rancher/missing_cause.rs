//! Why a downstream snapshot has no Rancher record, from what the objects show (rancher/rancher
//! `snapshotbackpopulate`):
//! the first cause that holds, in the order Rancher's controller would stop at it.

use super::{Compare, counted};
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;
use crate::model::rancher::record_name::{invalid_object_name, legacy_record_name};
use crate::model::rancher::snapshot_record::SnapshotRecord;
use crate::model::rancher::view::RancherState;
use crate::model::snapshot_file::SnapshotFile;

/// One reason, and what it is about (grouping the snapshots it explains).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum MissingCause {
    FeatureOff,
    NotAdministrated,
    Disconnected(String),
    RestoreInProgress(Option<String>),
    /// The unannotated record holding the wanted name (2.11.0–2.11.1).
    AlreadyExistsLoop(String),
    NoMachine(String),
    UnmappableName(String),
    KnownLoop(&'static str),
    Unknown,
}

pub(super) fn missing_cause(
    c: &Compare,
    file: &SnapshotFile,
    records: &[&SnapshotRecord],
) -> MissingCause {
    let rancher = c.rancher;
    let version = rancher.version.as_ref();
    if rancher.backpopulate == Some(false) {
        return MissingCause::FeatureOff;
    }
    if let Some(m) = &rancher.management {
        if !m.administrated {
            return MissingCause::NotAdministrated;
        }
        if m.disconnected() {
            let why = m
                .not_ready_message
                .clone()
                .unwrap_or_else(|| "Connected is False".into());
            return MissingCause::Disconnected(why);
        }
    }
    if let Some(cp) = rancher
        .control_plane
        .as_ref()
        .filter(|cp| cp.restore_in_progress())
    {
        return MissingCause::RestoreInProgress(cp.restore_snapshot.clone());
    }
    let cluster = rancher.provisioning.name.as_str();
    let wanted = legacy_record_name(cluster, &file.snapshot_name, file.is_s3());
    if version
        .and_then(|v| v.known_loop())
        .is_some_and(|l| l.contains("already exists"))
        && records
            .iter()
            .any(|r| r.snapshot_name.is_none() && r.name == wanted)
    {
        return MissingCause::AlreadyExistsLoop(wanted);
    }
    let needs_machine = version.is_none_or(|v| v.needs_machine_for_local());
    if needs_machine
        && !file.is_s3()
        && let Some(machines) = &rancher.machines
        && !machines
            .iter()
            .any(|m| m.node.as_deref() == Some(file.node_name.as_str()))
    {
        return MissingCause::NoMachine(file.node_name.to_string());
    }
    if version.is_some_and(|v| !v.maps_every_name())
        && let Some(why) = invalid_object_name(&wanted)
    {
        return MissingCause::UnmappableName(format!("`{wanted}` is not a valid name: {why}"));
    }
    if let Some(known) = version.and_then(|v| v.known_loop()) {
        return MissingCause::KnownLoop(known);
    }
    MissingCause::Unknown
}

impl MissingCause {
    pub(super) fn finding(&self, c: &Compare, names: &[String]) -> Finding {
        let rancher = c.rancher;
        let cluster = rancher.provisioning.reference();
        let head = format!(
            "{} of the downstream cluster {} no record in Rancher ({cluster}), so Rancher's UI \
             does not list {} and cannot restore {}: {}",
            counted(names.len(), "snapshot"),
            if names.len() == 1 { "has" } else { "have" },
            if names.len() == 1 { "it" } else { "them" },
            if names.len() == 1 { "it" } else { "them" },
            names.join(", ")
        );
        let (severity, cause, fix, caused_by) = self.explained(rancher);
        Finding::new(
            severity,
            FindingCode::RancherSnapshotMissing,
            "ETCDSnapshotFiles",
            format!("{head}; {cause}"),
        )
        .about_listing(ObjectRef::snapshot_files(names))
        .fix(fix)
        .caused_by(caused_by)
    }

    /// Severity, cause, fix and the finding it follows from.
    fn explained(&self, rancher: &RancherState) -> (Severity, String, String, Option<FindingCode>) {
        match self {
            MissingCause::FeatureOff => (
                Severity::Error,
                "the Feature v2prov-etcd-snapshot-backpopulate is disabled".to_string(),
                "enable the Feature (see rancher-backpopulate-off)".to_string(),
                Some(FindingCode::RancherBackpopulateOff),
            ),
            MissingCause::NotAdministrated => (
                Severity::Error,
                format!(
                    "the management Cluster {} lacks the annotation \
                 provisioning.cattle.io/administrated=true, so Rancher's snapshot controllers \
                 skip it",
                    rancher.provisioning.cluster_id.as_deref().unwrap_or("?")
                ),
                "check the cluster's provisioning state in Rancher: Rancher sets the annotation \
             itself on the clusters it provisions"
                    .to_string(),
                None,
            ),
            MissingCause::Disconnected(why) => (
                Severity::Warning,
                format!("Rancher says the cluster is disconnected ({why})"),
                "restore the cattle-cluster-agent's connection: Rancher records the snapshots \
             once it is back"
                    .to_string(),
                None,
            ),
            MissingCause::RestoreInProgress(snapshot) => (
                Severity::Info,
                format!(
                    "a restore{} is in progress and Rancher postpones records until it ends, \
                 on purpose",
                    snapshot
                        .as_ref()
                        .map(|s| format!(" of {s}"))
                        .unwrap_or_default()
                ),
                "wait for the restore to finish".to_string(),
                None,
            ),
            _ => self.explained_by_version(rancher),
        }
    }

    /// The causes that belong to a Rancher version: its known loops and gaps.
    fn explained_by_version(
        &self,
        rancher: &RancherState,
    ) -> (Severity, String, String, Option<FindingCode>) {
        match self {
            MissingCause::AlreadyExistsLoop(name) => (
                Severity::Error,
                format!(
                    "this is {}; here the record {name} has no etcdsnapshot.rke.io/snapshot-name \
                 annotation",
                    rancher
                        .version
                        .as_ref()
                        .and_then(|v| v.known_loop())
                        .unwrap_or_default()
                ),
                format!(
                    "{} (Rancher makes it again, annotated); upgrade Rancher to v2.11.2 or later",
                    rancher.kubectl(&format!(
                        "-n {} delete etcdsnapshots.rke.cattle.io {name}",
                        rancher.provisioning.namespace
                    ))
                ),
                None,
            ),
            MissingCause::NoMachine(node) => (
                Severity::Error,
                format!(
                    "Rancher 2.11–2.14 records a local snapshot only for a node with a CAPI \
                 Machine, and no Machine in {} has status.nodeRef.name={node}; its handler \
                 fails for these snapshots forever",
                    rancher.provisioning.namespace
                ),
                "upgrade Rancher to v2.15 (which uses ownerReferences), or keep snapshots of \
             this node on S3"
                    .to_string(),
                None,
            ),
            MissingCause::UnmappableName(why) => (
                Severity::Error,
                format!(
                    "Rancher before 2.14 cannot make a record for this name: {why} \
                 (rancher/rancher#52529)"
                ),
                "upgrade Rancher to v2.14 or later, or take snapshots with a name of lower-case \
             letters, digits and dashes (--etcd-snapshot-name)"
                    .to_string(),
                None,
            ),
            MissingCause::KnownLoop(known) => (
                Severity::Error,
                format!("this is {known}"),
                "upgrade Rancher to the fixed release; restarting the Rancher pods clears it \
             until the next upgrade"
                    .to_string(),
                None,
            ),
            // `Unknown`; the causes of Rancher's state are explained before this.
            _ => (
                Severity::Error,
                "nothing in the objects explains it".to_string(),
                "check the Rancher pods' logs for snapshotbackpopulate errors about this cluster"
                    .to_string(),
                None,
            ),
        }
    }
}
