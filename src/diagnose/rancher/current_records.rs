//! Rancher 2.11+: one record per ETCDSnapshotFile, correlated by the
//! `etcdsnapshot.rke.io/snapshot-name` annotation (rancher/rancher `snapshotbackpopulate`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::missing_cause::{MissingCause, missing_cause};
use super::record_drift::file_drift;
use super::{Compare, RECORD_GRACE, Tally, agree, counted, past_grace};
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;
use crate::model::rancher::snapshot_record::SnapshotRecord;
use crate::model::snapshot_file::SnapshotFile;

pub(super) fn compare(c: &Compare, findings: &mut Vec<Finding>, tally: &mut Tally) {
    let records = c.live_records();
    let files: Vec<&Arc<SnapshotFile>> = c
        .down
        .snapshot_files
        .iter()
        .flatten()
        .filter(|f| !f.deleting)
        .collect();
    let mut by_key: BTreeMap<&str, Vec<&SnapshotRecord>> = BTreeMap::new();
    for record in &records {
        if let Some(key) = record.snapshot_name.as_deref() {
            by_key.entry(key).or_default().push(record);
        }
    }
    let mut missing: BTreeMap<MissingCause, Vec<String>> = BTreeMap::new();
    let mut drifted = Vec::new();
    for file in &files {
        // Rancher records a snapshot (and updates its record) only after it saw it change.
        let settled = past_grace(file.creation_time.or(file.created), c.now, RECORD_GRACE);
        match by_key.get(&*file.name).map(Vec::as_slice) {
            None | Some([]) => {
                if settled {
                    let cause = missing_cause(c, file, &records);
                    missing
                        .entry(cause)
                        .or_default()
                        .push(file.name.to_string());
                } else {
                    tally.pending += 1;
                }
            }
            Some([record]) => {
                tally.recorded += 1;
                let differences = file_drift(file, record);
                if settled && !differences.is_empty() {
                    drifted.push(format!("{} ({})", record.name, differences.join(", ")));
                }
            }
            Some(several) => {
                tally.recorded += 1;
                findings.push(duplicate(c, &file.name, several));
            }
        }
    }
    for (cause, names) in missing {
        findings.push(cause.finding(c, &names));
    }
    if !drifted.is_empty() {
        findings.push(drift(c, &drifted));
    }
    let names: BTreeSet<&str> = files.iter().map(|f| &*f.name).collect();
    let orphans: Vec<&SnapshotRecord> = records
        .iter()
        .filter(|r| {
            r.snapshot_name
                .as_deref()
                .is_some_and(|k| !names.contains(k))
        })
        .copied()
        .collect();
    if !orphans.is_empty() {
        findings.push(orphaned(c, &orphans));
    }
    let unmanaged: Vec<&SnapshotRecord> = records
        .iter()
        .filter(|r| r.snapshot_name.is_none() && !matches_a_file(r, &files))
        .copied()
        .collect();
    if !unmanaged.is_empty() {
        findings.push(unmanaged_records(c, &unmanaged));
    }
}

/// An unannotated record still describes a snapshot when its file name, node and storage are
/// one of the downstream snapshots'.
fn matches_a_file(record: &SnapshotRecord, files: &[&Arc<SnapshotFile>]) -> bool {
    let Some(name) = record.file.name.as_deref() else {
        return false;
    };
    files.iter().any(|f| {
        &*f.snapshot_name == name
            && f.is_s3() == record.is_s3()
            && (f.is_s3()
                || record
                    .file
                    .node_name
                    .as_deref()
                    .is_none_or(|n| n.eq_ignore_ascii_case(&f.node_name)))
    })
}

fn record_refs(records: &[&SnapshotRecord]) -> Arc<[ObjectRef]> {
    records
        .iter()
        .filter_map(|r| ObjectRef::new("ETCDSnapshot", Some(&r.namespace), &r.name))
        .collect()
}

fn names(records: &[&SnapshotRecord]) -> Vec<String> {
    records.iter().map(|r| r.name.clone()).collect()
}

fn duplicate(c: &Compare, key: &str, records: &[&SnapshotRecord]) -> Finding {
    let listed = names(records);
    let newest = records
        .iter()
        .max_by_key(|r| r.created)
        .map(|r| r.name.as_str());
    let extra: Vec<&str> = records
        .iter()
        .map(|r| r.name.as_str())
        .filter(|n| Some(*n) != newest)
        .collect();
    Finding::new(
        Severity::Warning,
        FindingCode::RancherSnapshotDuplicate,
        format!("ETCDSnapshotFile {key}"),
        format!(
            "Rancher keeps {} for the snapshot {key}: {}. Rancher deletes them all and makes one \
             again on the snapshot's next change; until then its UI lists it {} times",
            counted(records.len(), "record"),
            listed.join(", "),
            records.len()
        ),
    )
    .about(record_refs(records))
    .fix(c.rancher.kubectl(&format!(
        "-n {} delete etcdsnapshots.rke.cattle.io {} (keeps the newest, {})",
        records[0].namespace,
        extra.join(" "),
        newest.unwrap_or_default()
    )))
}

fn drift(c: &Compare, drifted: &[String]) -> Finding {
    let cause = c
        .rancher
        .version
        .as_ref()
        .and_then(|v| v.known_loop())
        .filter(|l| l.contains("0x0"));
    let why = match cause {
        Some(cause) => format!("this is {cause}"),
        None => "Rancher updates a record only when its ETCDSnapshotFile changes or Rancher \
                 restarts (rancher/rancher#50848), so it shows what the snapshot was"
            .to_string(),
    };
    Finding::new(
        Severity::Warning,
        FindingCode::RancherSnapshotDrift,
        "ETCDSnapshots",
        format!(
            "{} in Rancher {} from {} ETCDSnapshotFile: {}; {why}",
            counted(drifted.len(), "record"),
            agree(drifted.len(), "differs", "differ"),
            agree(drifted.len(), "its", "their"),
            drifted.join(", ")
        ),
    )
    .listing(drifted)
    .fix(match cause {
        Some(_) => "upgrade Rancher to v2.11.4 or later; restarting the Rancher pods makes it \
                    reconcile every record once"
            .to_string(),
        None => "restart the Rancher pods to make it reconcile every record once \
                 (kubectl -n cattle-system rollout restart deploy/rancher on the management cluster)"
            .to_string(),
    })
}

fn orphaned(c: &Compare, records: &[&SnapshotRecord]) -> Finding {
    let listed = names(records);
    let management = c.rancher.management.as_ref();
    let why = match management.filter(|m| m.disconnected()) {
        Some(m) => format!(
            "Rancher says the cluster is disconnected ({}), so it cannot see the snapshots go",
            m.not_ready_message
                .as_deref()
                .unwrap_or("Connected is False")
        ),
        None => "Rancher deletes a record once its ETCDSnapshotFile is gone, so its \
                 snapshotbackpopulate controller for this cluster is not running"
            .to_string(),
    };
    Finding::new(
        Severity::Warning,
        FindingCode::RancherSnapshotOrphaned,
        "ETCDSnapshots",
        format!(
            "{} in Rancher {} an ETCDSnapshotFile that no longer exists: {}; {why}. Rancher's \
             UI offers {}, and a restore from {} fails",
            counted(records.len(), "record"),
            agree(records.len(), "names", "name"),
            listed.join(", "),
            agree(records.len(), "it", "them"),
            agree(records.len(), "it", "them"),
        ),
    )
    .listing(&listed)
    .about(record_refs(records))
    .fix(format!(
        "check the Rancher pods' logs for snapshotbackpopulate errors about this cluster; once \
         they are fixed Rancher removes these itself, or remove them: {}",
        c.rancher.kubectl(&format!(
            "-n {} delete etcdsnapshots.rke.cattle.io {}",
            records[0].namespace,
            listed.join(" ")
        ))
    ))
}

fn unmanaged_records(c: &Compare, records: &[&SnapshotRecord]) -> Finding {
    let listed = names(records);
    Finding::new(
        Severity::Warning,
        FindingCode::RancherSnapshotUnmanaged,
        "ETCDSnapshots",
        format!(
            "{} in Rancher {} no etcdsnapshot.rke.io/snapshot-name annotation and {} no \
             downstream snapshot: {}. Rancher 2.11+ never deletes such a record (made by Rancher \
             2.10 or earlier, or by hand), so its UI offers a snapshot that is not there",
            counted(records.len(), "record"),
            agree(records.len(), "carries", "carry"),
            agree(records.len(), "matches", "match"),
            listed.join(", ")
        ),
    )
    .listing(&listed)
    .about(record_refs(records))
    .fix(format!(
        "{}; first make sure none was made by hand for a disaster recovery: those look exactly \
         the same",
        c.rancher.kubectl(&format!(
            "-n {} delete etcdsnapshots.rke.cattle.io {}",
            records[0].namespace,
            listed.join(" ")
        ))
    ))
}
