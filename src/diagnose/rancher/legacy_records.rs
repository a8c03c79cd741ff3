//! Rancher 2.7–2.10: records made from each node's `etcd-snapshot list` (local) and from the
//! ConfigMap's S3 entries; their size, status and metadata come only from the ConfigMap, so a
//! snapshot without an entry is a "0 B" record (rancher/rancher#45141; k3s-io/k3s#10046).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::missing_cause::{MissingCause, missing_cause};
use super::record_drift::entry_drift;
use super::{Compare, LEGACY_RECORD_GRACE, Tally, agree, counted, downstream_has, past_grace};
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;
use crate::model::rancher::snapshot_record::SnapshotRecord;
use crate::model::snapshot_entry::{SnapshotEntry, decode};
use crate::model::snapshot_file::{S3Spec, SnapshotFile};
use crate::model::snapshot_key::data_key;

pub(super) fn compare(c: &Compare, findings: &mut Vec<Finding>, tally: &mut Tally) {
    let entries = configmap_entries(c);
    let records = c.live_records();
    let mut by_key: BTreeMap<(bool, String), Vec<&SnapshotRecord>> = BTreeMap::new();
    for record in &records {
        if let Some(name) = record
            .file
            .name
            .clone()
            .or(record.file_name_annotation.clone())
        {
            by_key
                .entry((record.is_s3(), name))
                .or_default()
                .push(record);
        }
    }
    // "0 B" records without a ConfigMap entry, and those with one that Rancher did not copy.
    let (mut no_entry, mut not_copied) = (Vec::new(), Vec::new());
    let mut drifted = Vec::new();
    // Records of snapshots that exist nowhere downstream: no backfill can give them an entry.
    let mut gone = Vec::new();
    let existing = existing_snapshots(c);
    let lowercases = c
        .rancher
        .version
        .as_ref()
        .is_some_and(|v| !v.node_case_sensitive());
    for record in &records {
        let key = record_key(record);
        let entry = entries.as_ref().and_then(|e| e.get(&key));
        let empty = record.missing || record.file.size.is_none() || record.file.status.is_none();
        let snapshot_gone = entries.is_some()
            && entry.is_none()
            && existing.as_ref().is_some_and(|names| {
                record_file_name(record).is_some_and(|n| !names.contains(&(record.is_s3(), n)))
            });
        if snapshot_gone {
            gone.push(record.name.clone());
            continue;
        }
        match entry {
            None if empty => no_entry.push(record.name.clone()),
            Some(_) if empty && past_grace(record.created, c.now, LEGACY_RECORD_GRACE) => {
                not_copied.push(record.name.clone());
            }
            Some(entry) if !empty => {
                let differences = entry_drift(entry, record, lowercases);
                if !differences.is_empty() {
                    drifted.push(format!("{} ({})", record.name, differences.join(", ")));
                }
            }
            _ => {}
        }
    }
    let missing = missing_by_cause(c, entries.as_ref(), &by_key, &records, tally);
    for (cause, names) in missing {
        findings.push(cause.finding(c, &names));
    }
    for ((s3, name), several) in by_key.iter().filter(|(_, r)| r.len() > 1) {
        findings.push(duplicate(c, *s3, name, several));
    }
    findings.extend(size_unknown_findings(c, &no_entry, &not_copied));
    if !gone.is_empty() {
        findings.push(gone_records(c, &gone));
    }
    if !drifted.is_empty() {
        findings.push(drift_finding(c, &drifted));
    }
}

/// The snapshots Rancher should have a record of and does not, past the grace, by why;
/// those still inside it are counted pending, those recorded counted recorded.
fn missing_by_cause(
    c: &Compare,
    entries: Option<&BTreeMap<String, SnapshotEntry>>,
    by_key: &BTreeMap<(bool, String), Vec<&SnapshotRecord>>,
    records: &[&SnapshotRecord],
    tally: &mut Tally,
) -> BTreeMap<MissingCause, Vec<String>> {
    let mut missing: BTreeMap<MissingCause, Vec<String>> = BTreeMap::new();
    for file in expected_snapshots(c, entries) {
        let key = (file.is_s3(), file.snapshot_name.to_string());
        if by_key.contains_key(&key) {
            tally.recorded += 1;
        } else if past_grace(
            file.creation_time.or(file.created),
            c.now,
            LEGACY_RECORD_GRACE,
        ) {
            let cause = missing_cause(c, &file, records);
            let shown = if file.name.is_empty() {
                &file.snapshot_name
            } else {
                &file.name
            };
            missing.entry(cause).or_default().push(shown.to_string());
        } else {
            tally.pending += 1;
        }
    }
    missing
}

/// Records whose fields differ from the ConfigMap entry they copy.
fn drift_finding(c: &Compare, drifted: &[String]) -> Finding {
    Finding::new(
        Severity::Warning,
        FindingCode::RancherSnapshotDrift,
        "ETCDSnapshots",
        format!(
            "{} in Rancher {} from the {} ConfigMap's entry {} {}: {}",
            counted(drifted.len(), "record"),
            agree(drifted.len(), "differs", "differ"),
            c.distro.snapshots_configmap(),
            agree(drifted.len(), "it", "they"),
            agree(drifted.len(), "copies", "copy"),
            drifted.join(", ")
        ),
    )
    .listing(drifted)
    .fix(
        "Rancher 2.10 and earlier copy the entry every 600 s: if it stays, restart the \
          Rancher pods",
    )
}

/// The file name a record is about.
fn record_file_name(record: &SnapshotRecord) -> Option<String> {
    record
        .file
        .name
        .clone()
        .or(record.file_name_annotation.clone())
}

/// The downstream snapshots by storage and file name, when the ETCDSnapshotFiles were read;
/// one being deleted counts as gone.
fn existing_snapshots(c: &Compare) -> Option<BTreeSet<(bool, String)>> {
    let files = c.down.snapshot_files.as_ref()?;
    Some(
        files
            .iter()
            .filter(|f| !f.deleting)
            .map(|f| (f.is_s3(), f.snapshot_name.to_string()))
            .collect(),
    )
}

/// ≤ 2.10 records whose snapshot exists downstream neither as an ETCDSnapshotFile nor as a
/// ConfigMap entry: Rancher marks such a record `status.missing` and keeps it, whatever its
/// size said, so the UI offers a snapshot that is gone. A backfill writes entries only for
/// snapshots that exist, so only deleting the record removes it.
fn gone_records(c: &Compare, names: &[String]) -> Finding {
    let ns = &c.rancher.provisioning.namespace;
    let refs: Arc<[ObjectRef]> = names
        .iter()
        .filter_map(|n| ObjectRef::new("ETCDSnapshot", Some(ns), n))
        .collect();
    Finding::new(
        Severity::Warning,
        FindingCode::RancherSnapshotOrphaned,
        "ETCDSnapshots",
        format!(
            "{} in Rancher {} a snapshot that no longer exists downstream (no ETCDSnapshotFile, \
             no entry in kube-system/{}): {}. Rancher 2.10 and earlier mark such a record missing \
             and keep it, so its UI offers {} and a restore from {} fails",
            counted(names.len(), "record"),
            agree(names.len(), "names", "name"),
            c.distro.snapshots_configmap(),
            names.join(", "),
            agree(names.len(), "it", "them"),
            agree(names.len(), "it", "them"),
        ),
    )
    .listing(names)
    .about(refs)
    .fix(c.rancher.kubectl(&format!(
        "-n {ns} delete etcdsnapshots.rke.cattle.io {} (no backfill can write an entry for a \
         snapshot that is gone)",
        names.join(" ")
    )))
}

/// The ConfigMap's entries by key, decoded; `None` when the ConfigMap was not read.
fn configmap_entries(c: &Compare) -> Option<BTreeMap<String, SnapshotEntry>> {
    c.down.configmaps.as_ref()?;
    let cm = c.down.configmap(&c.distro.snapshots_configmap());
    Some(
        cm.map(|cm| {
            cm.data
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), decode(v).ok()?)))
                .collect()
        })
        .unwrap_or_default(),
    )
}

/// The key k3s gives the snapshot a record is about.
fn record_key(record: &SnapshotRecord) -> String {
    let file = SnapshotFile {
        snapshot_name: record.file.name.clone().unwrap_or_default().into(),
        s3: record.is_s3().then(|| Arc::new(S3Spec::default())),
        ..SnapshotFile::default()
    };
    data_key(&file)
}

/// What ≤ 2.10 makes records of: every local snapshot file (the nodes' `etcd-snapshot
/// list`), and every S3 entry of the ConfigMap.
fn expected_snapshots(
    c: &Compare,
    entries: Option<&BTreeMap<String, SnapshotEntry>>,
) -> Vec<SnapshotFile> {
    let mut out: Vec<SnapshotFile> = match &c.down.snapshot_files {
        Some(files) => files
            .iter()
            .filter(|f| !f.is_s3() && !f.deleting)
            .map(|f| (**f).clone())
            .collect(),
        None => entries
            .iter()
            .flat_map(|e| e.values())
            .filter(|e| e.s3_config.is_none())
            .map(SnapshotEntry::to_snapshot_file)
            .collect(),
    };
    out.extend(
        entries
            .iter()
            .flat_map(|e| e.values())
            .filter(|e| e.s3_config.is_some())
            .map(SnapshotEntry::to_snapshot_file),
    );
    out
}

fn duplicate(c: &Compare, s3: bool, name: &str, records: &[&SnapshotRecord]) -> Finding {
    let names: Vec<String> = records.iter().map(|r| r.name.clone()).collect();
    Finding::new(
        Severity::Warning,
        FindingCode::RancherSnapshotDuplicate,
        format!("ETCDSnapshot {}/{}", records[0].namespace, records[0].name),
        format!(
            "Rancher keeps {} for the {} snapshot {name}: {}",
            counted(records.len(), "record"),
            if s3 { "S3" } else { "local" },
            names.join(", ")
        ),
    )
    .fix(c.rancher.kubectl(&format!(
        "-n {} delete etcdsnapshots.rke.cattle.io {} (keeps {})",
        records[0].namespace,
        names[1..].join(" "),
        names[0]
    )))
}

/// The "0 B" records: those whose ConfigMap entry is missing hang under the downstream
/// finding that explains it; the others wait for Rancher's next copy.
fn size_unknown_findings(c: &Compare, no_entry: &[String], stale: &[String]) -> Vec<Finding> {
    let cm = c.distro.snapshots_configmap();
    let refs = |names: &[String]| -> Arc<[ObjectRef]> {
        names
            .iter()
            .filter_map(|n| {
                ObjectRef::new("ETCDSnapshot", Some(&c.rancher.provisioning.namespace), n)
            })
            .collect()
    };
    let mut out = Vec::new();
    if !no_entry.is_empty() {
        let listed = no_entry;
        let caused_by = downstream_has(c, FindingCode::SnapshotMissingFromConfigmap)
            .then_some(FindingCode::SnapshotMissingFromConfigmap);
        out.push(
            Finding::new(
                Severity::Error,
                FindingCode::RancherSnapshotSizeUnknown,
                "ETCDSnapshots",
                format!(
                    "{} {} 0 B or no status in Rancher, because the kube-system/{cm} ConfigMap \
                     has no entry for their snapshot and Rancher 2.10 and earlier read size and \
                     status only from it: {}",
                    counted(listed.len(), "record"),
                    agree(listed.len(), "shows", "show"),
                    listed.join(", ")
                ),
            )
            .listing(listed)
            .about(refs(listed))
            .fix(
                "k3sdoctor snapshots backfill --fix (writes the missing entries; Rancher copies \
                  them within 10 minutes)",
            )
            .caused_by(caused_by),
        );
    }
    if !stale.is_empty() {
        let listed = stale;
        let case = c
            .rancher
            .version
            .as_ref()
            .is_some_and(|v| v.node_case_sensitive());
        let why = if case {
            "this Rancher compares node names case-sensitively (fixed in v2.9.8 / v2.10.4, \
             rancher/rancher#49230): a node name with capitals never matches"
        } else {
            "Rancher has not copied the entry in over 15 minutes"
        };
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::RancherSnapshotSizeUnknown,
                "ETCDSnapshots",
                format!(
                    "{} {} 0 B or no status in Rancher although kube-system/{cm} has their \
                     entry; {why}: {}",
                    counted(listed.len(), "record"),
                    agree(listed.len(), "shows", "show"),
                    listed.join(", ")
                ),
            )
            .listing(listed)
            .about(refs(listed))
            .fix(if case {
                "upgrade Rancher to v2.9.8 / v2.10.4 or later"
            } else {
                "restart the Rancher pods to make it copy the entries again"
            }),
        );
    }
    out
}
