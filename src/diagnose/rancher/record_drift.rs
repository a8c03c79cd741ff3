//! Which fields of a record differ from what Rancher's mapping makes of the snapshot
//! (rancher/rancher `snapshotbackpopulate`): 2.11+ from the ETCDSnapshotFile, ≤ 2.10 from the ConfigMap entry.

use std::collections::BTreeMap;

use base64::Engine;
use jiff::Timestamp;

use crate::model::rancher::snapshot_record::SnapshotRecord;
use crate::model::snapshot_entry::SnapshotEntry;
use crate::model::snapshot_file::SnapshotFile;

/// `field X ≠ Y` for each field of `record` that is not `file`'s, as 2.11+ maps it.
pub(super) fn file_drift(file: &SnapshotFile, record: &SnapshotRecord) -> Vec<String> {
    let r = &record.file;
    let mut out = Vec::new();
    text_field(&mut out, "name", r.name.as_deref(), &file.snapshot_name);
    text_field(&mut out, "location", r.location.as_deref(), &file.location);
    text_field(
        &mut out,
        "nodeName",
        r.node_name.as_deref(),
        &file.node_name,
    );
    time_field(&mut out, r.created_at, file.creation_time);
    if let Ok(size) = file.size {
        size_field(&mut out, r.size.as_ref(), size);
    }
    let status = if file.ready_to_use {
        "successful"
    } else {
        "failed"
    };
    text_field(&mut out, "status", r.status.as_deref(), status);
    let message = file
        .error
        .as_ref()
        .and_then(|e| e.message.as_deref())
        .unwrap_or_default();
    text_field(&mut out, "message", r.message.as_deref(), message);
    if !same_metadata(r.metadata.as_deref(), &file.metadata) {
        out.push("metadata differs".into());
    }
    if let Some(s3) = &file.s3 {
        text_field(&mut out, "s3.folder", r.s3_folder.as_deref(), &s3.prefix);
    }
    out
}

/// The same for ≤ 2.10, whose fields are the ConfigMap value's, copied 1:1 (`nodeName`
/// lower-cased from v2.9.8 / v2.10.4).
pub(super) fn entry_drift(
    entry: &SnapshotEntry,
    record: &SnapshotRecord,
    lowercases_node: bool,
) -> Vec<String> {
    let r = &record.file;
    let mut out = Vec::new();
    text_field(&mut out, "location", r.location.as_deref(), &entry.location);
    let node = if lowercases_node {
        entry.node_name.to_lowercase()
    } else {
        entry.node_name.clone()
    };
    text_field(&mut out, "nodeName", r.node_name.as_deref(), &node);
    time_field(&mut out, r.created_at, entry.created_at);
    size_field(&mut out, r.size.as_ref(), entry.size);
    text_field(&mut out, "status", r.status.as_deref(), &entry.status);
    out
}

fn text_field(out: &mut Vec<String>, field: &str, found: Option<&str>, wanted: &str) {
    let found = found.unwrap_or_default();
    if found != wanted {
        out.push(format!("{field} {} ≠ {}", shown(found), shown(wanted)));
    }
}

fn shown(value: &str) -> String {
    if value.is_empty() {
        "(none)".into()
    } else {
        value.to_string()
    }
}

fn time_field(out: &mut Vec<String>, found: Option<Timestamp>, wanted: Option<Timestamp>) {
    if let Some(wanted) = wanted
        && found != Some(wanted)
    {
        let found = found.map_or("(none)".to_string(), |t| t.to_string());
        out.push(format!("createdAt {found} ≠ {wanted}"));
    }
}

fn size_field(out: &mut Vec<String>, found: Option<&Result<i64, String>>, wanted: i64) {
    match found {
        Some(Ok(size)) if *size == wanted => {}
        Some(Ok(size)) => out.push(format!("size {size} ≠ {wanted}")),
        Some(Err(raw)) => out.push(format!("size {raw} ≠ {wanted}")),
        None => out.push(format!("size (none) ≠ {wanted}")),
    }
}

/// Rancher stores base64 of the metadata's JSON; a nil map is `null`. An empty and an absent
/// map are the same snapshot.
fn same_metadata(found: Option<&str>, wanted: &BTreeMap<String, String>) -> bool {
    let decoded = found
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    match decoded {
        None | Some(serde_json::Value::Null) => wanted.is_empty(),
        Some(serde_json::Value::Object(map)) => {
            map.len() == wanted.len()
                && map.iter().all(|(k, v)| {
                    wanted.get(k).is_some_and(|w| {
                        v.as_str().map_or_else(
                            || {
                                serde_json::from_str::<serde_json::Value>(w).ok().as_ref()
                                    == Some(v)
                            },
                            |s| s == w,
                        )
                    })
                })
        }
        Some(_) => false,
    }
}
