//! Records Rancher shows but cannot restore from (rancher/rancher `snapshotbackpopulate`): a local snapshot whose machine
//! is gone (2.11–2.14), or `restore-mode-options: none` (2.14+) because the snapshot's metadata
//! lacks the cluster spec.

use super::{Compare, agree, counted};
use crate::diagnose::finding::{Finding, FindingCode, Severity};

pub(super) fn analyse(c: &Compare) -> Vec<Finding> {
    let rancher = c.rancher;
    let records = c.live_records();
    let mut out = Vec::new();
    let version = rancher.version.as_ref();
    if version.is_some_and(|v| v.needs_machine_for_local())
        && let Some(machines) = &rancher.machines
    {
        let orphaned: Vec<String> = records
            .iter()
            .filter(|r| !r.is_s3())
            .filter(|r| {
                r.machine_id
                    .as_deref()
                    .is_none_or(|id| !machines.iter().any(|m| m.machine_id.as_deref() == Some(id)))
            })
            .map(|r| r.name.clone())
            .collect();
        if !orphaned.is_empty() {
            out.push(
                Finding::new(
                    Severity::Error,
                    FindingCode::RancherRestoreUnavailable,
                    "ETCDSnapshots",
                    format!(
                        "{} of local snapshots {} a machine (rke.cattle.io/machine-id) that no \
                         longer exists in {}: Rancher {} picks the restore's init node from it, \
                         so a restore from them fails: {}",
                        counted(orphaned.len(), "record"),
                        agree(orphaned.len(), "names", "name"),
                        rancher.provisioning.namespace,
                        version.map_or("2.11–2.14", |v| v.text.as_str()),
                        orphaned.join(", ")
                    ),
                )
                .listing(&orphaned)
                .fix(
                    "restore from an S3 snapshot or one taken on a current node; Rancher 2.15 \
                      finds the node through ownerReferences instead",
                ),
            );
        }
    }
    if version.is_some_and(|v| v.at_least(2, 14, 0)) {
        let none: Vec<String> = records
            .iter()
            .filter(|r| r.restore_modes.as_deref() == Some("none"))
            .map(|r| r.name.clone())
            .collect();
        if !none.is_empty() {
            out.push(restore_none(c, &none));
        }
    }
    out
}

fn restore_none(c: &Compare, names: &[String]) -> Finding {
    let extra = c.distro.extra_metadata_configmap();
    let extra_missing = c.down.configmaps.is_some() && c.down.configmap(&extra).is_none();
    let why = if extra_missing {
        format!(
            "the kube-system/{extra} ConfigMap does not exist, so k3s saved no metadata with \
             the snapshots"
        )
    } else {
        "the snapshots' metadata lacks `provisioning-cluster-spec`".to_string()
    };
    Finding::new(
        Severity::Warning,
        FindingCode::RancherRestoreUnavailable,
        "ETCDSnapshots",
        format!(
            "{} {} only the restore mode `none` (etcd only: no Kubernetes version or \
             cluster configuration to restore), because {why}: {}",
            counted(names.len(), "record"),
            agree(names.len(), "offers", "offer"),
            names.join(", ")
        ),
    )
    .listing(names)
    .fix(if extra_missing {
        format!(
            "let Rancher's agent recreate kube-system/{extra} (re-save the cluster in Rancher), \
             then take a new snapshot: old snapshots keep their metadata"
        )
    } else {
        "take a new snapshot from Rancher: it saves the cluster spec with it".to_string()
    })
}
