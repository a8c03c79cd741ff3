//! Planning `snapshots backfill`: the ConfigMap data k3s's controller would hold — missing
//! entries added and stale ones rewritten with k3s's exact bytes, orphans removed on request —
//! kept under the apiserver's 1 MiB limit by dropping the oldest entries as k3s does. Pure.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::diagnose::snapshots::{CONFIGMAP_LIMIT, EntryState, SnapshotAnalysis};
use crate::model::go_json::GoEscaping;
use crate::model::snapshot_key::key_timestamp;

/// k3s drops this many more of the oldest entries on each retry (`pruneStepSize`).
const PRUNE_STEP: usize = 4;

/// k3s writes at most this many times (`snapshotDataBackoff.Steps`, `pkg/etcd/snapshot.go`):
/// after the ninth refusal it gives up and writes nothing, so at most eight prunes.
const WRITE_ATTEMPTS: usize = 9;

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BackfillPlan {
    pub configmap: String,
    /// The ConfigMap does not exist yet and is created.
    pub create: bool,
    pub add: Vec<String>,
    pub update: Vec<String>,
    /// Orphans removed (`--prune`): those k3s's reconcile would remove.
    pub remove: Vec<String>,
    /// Orphans k3s's reconcile keeps, with why; `--prune` keeps them too.
    pub kept: Vec<String>,
    /// Entries that were there and go to make room, oldest first.
    pub dropped_for_size: Vec<String>,
    /// Missing entries that would themselves be the oldest: not added, as k3s would not.
    pub not_added_for_size: Vec<String>,
    pub bytes_before: usize,
    pub bytes_after: usize,
    /// The version whose controller will compare these bytes, and its Go escaping.
    pub writer_version: Option<String>,
    pub go_escaping: GoEscaping,
    pub go_escaping_assumed: bool,
    /// The complete data to write.
    #[serde(skip)]
    pub data: BTreeMap<String, String>,
}

impl BackfillPlan {
    pub(crate) fn is_empty(&self) -> bool {
        self.add.is_empty()
            && self.update.is_empty()
            && self.remove.is_empty()
            && !self.create_needed()
    }

    fn create_needed(&self) -> bool {
        self.create && !self.data.is_empty()
    }

    /// The planned changes that `data` (the ConfigMap read back after the write) does not
    /// show: an added or rewritten entry with other bytes, or a removed entry still there.
    /// Entries the plan did not touch are k3s's business and are not compared.
    pub(crate) fn unverified(&self, data: &BTreeMap<String, String>) -> Vec<String> {
        let written = self
            .add
            .iter()
            .chain(&self.update)
            .filter(|k| data.get(*k) != self.data.get(*k));
        let removed = self
            .remove
            .iter()
            .chain(&self.dropped_for_size)
            .filter(|k| data.contains_key(*k));
        written.chain(removed).cloned().collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TooLarge(pub String);

/// `current`: the ConfigMap's data as read (empty when it does not exist).
pub(crate) fn plan_backfill(
    analysis: &SnapshotAnalysis,
    current: &BTreeMap<String, String>,
    prune: bool,
) -> Result<BackfillPlan, TooLarge> {
    let mut data = current.clone();
    let (mut add, mut update, mut remove) = (Vec::new(), Vec::new(), Vec::new());
    for row in &analysis.snapshots {
        let written = match row.state {
            EntryState::Missing => &mut add,
            EntryState::Stale => &mut update,
            _ => continue,
        };
        // Worked out here, as the entry is written: the analysis holds no row's value.
        let value = analysis.expected_value(row);
        let key = row.key();
        data.insert(key.clone(), value);
        written.push(key);
    }
    // `--prune` removes exactly what k3s's own reconcile would remove, nothing else.
    let mut kept = Vec::new();
    for orphan in &analysis.orphaned {
        if !orphan.reconcile.removes {
            kept.push(format!("{} ({})", orphan.key, orphan.reconcile.why));
        } else if prune && data.remove(&orphan.key).is_some() {
            remove.push(orphan.key.clone());
        }
    }
    let dropped = prune_to_limit(&mut data)?;
    // Sets, not `Vec::contains`: with 50,000 missing entries that was billions of comparisons.
    let added: BTreeSet<&str> = add.iter().map(String::as_str).collect();
    let not_added_for_size: Vec<String> = dropped
        .iter()
        .filter(|k| added.contains(k.as_str()))
        .cloned()
        .collect();
    let dropped_keys: BTreeSet<&str> = dropped.iter().map(String::as_str).collect();
    add.retain(|k| !dropped_keys.contains(k.as_str()));
    update.retain(|k| !dropped_keys.contains(k.as_str()));
    drop(dropped_keys);
    let dropped_for_size: Vec<String> = dropped
        .into_iter()
        .filter(|k| current.contains_key(k))
        .collect();
    Ok(BackfillPlan {
        writer_version: analysis.writer_version.clone(),
        go_escaping: analysis.go_escaping,
        go_escaping_assumed: analysis.go_escaping_assumed,
        configmap: analysis.configmap.clone(),
        create: !analysis.configmap_present,
        add,
        update,
        remove,
        kept,
        dropped_for_size,
        not_added_for_size,
        bytes_before: current.values().map(String::len).sum(),
        bytes_after: data.values().map(String::len).sum(),
        data,
    })
}

/// `pruneConfigMap` as the snapshot controller retries it (`pkg/etcd/snapshot_controller.go`):
/// each retry drops the oldest `n` of what is left — keys sorted newest first by their trailing
/// unix time, unparsable counting as the oldest — with `n` = 4, 8, 12, …, so 4, 12, 24, … in
/// all, and gives up when `n` reaches the number of entries left or after its ninth write.
fn prune_to_limit(data: &mut BTreeMap<String, String>) -> Result<Vec<String>, TooLarge> {
    let size = |d: &BTreeMap<String, String>| d.values().map(String::len).sum::<usize>();
    let mut dropped = Vec::new();
    let mut count = PRUNE_STEP;
    let mut attempts = 1;
    while size(data) > CONFIGMAP_LIMIT {
        if attempts == WRITE_ATTEMPTS {
            return Err(TooLarge(format!(
                "k3s itself gives up after {WRITE_ATTEMPTS} attempts ({} of the oldest entries dropped) and \
                 writes nothing; the data would still be {} bytes",
                dropped.len(),
                size(data)
            )));
        }
        attempts += 1;
        if count >= data.len() {
            return Err(TooLarge(format!(
                "k3s's pruning would have to drop all {} remaining entries and the data would still exceed \
                 {CONFIGMAP_LIMIT} bytes",
                data.len()
            )));
        }
        let mut keys: Vec<String> = data.keys().cloned().collect();
        // Newest first; Go's sort leaves ties in any order, key order keeps the plan stable.
        keys.sort_by(|a, b| {
            key_timestamp(b)
                .cmp(&key_timestamp(a))
                .then_with(|| a.cmp(b))
        });
        let oldest: Vec<String> = keys
            .split_off(keys.len() - count)
            .into_iter()
            .rev()
            .collect();
        for key in &oldest {
            data.remove(key);
        }
        dropped.extend(oldest);
        count += PRUNE_STEP;
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: usize, size: usize, start: i64) -> BTreeMap<String, String> {
        (0..n)
            .map(|i| {
                (
                    format!("local-etcd-snapshot-s1-{}", start + i as i64),
                    "v".repeat(size),
                )
            })
            .collect()
    }

    #[test]
    fn fits_without_pruning() {
        let mut data = entries(10, 1000, 100);
        assert!(prune_to_limit(&mut data).unwrap().is_empty());
        assert_eq!(data.len(), 10);
    }

    #[test]
    fn drops_the_oldest_in_steps_of_four() {
        // 105 entries of 10 000 bytes: 1 050 000 > 1 048 576, so the oldest 4 go.
        let mut data = entries(105, 10_000, 1000);
        let dropped = prune_to_limit(&mut data).unwrap();
        assert_eq!(
            dropped,
            [
                "local-etcd-snapshot-s1-1000",
                "local-etcd-snapshot-s1-1001",
                "local-etcd-snapshot-s1-1002",
                "local-etcd-snapshot-s1-1003"
            ]
        );
        assert_eq!(data.len(), 101);
        // Keys without a timestamp count as the oldest.
        let mut odd = entries(105, 10_000, 1000);
        odd.insert("local-unknown".into(), "v".repeat(10));
        assert_eq!(prune_to_limit(&mut odd).unwrap()[0], "local-unknown");
    }

    #[test]
    fn gives_up_where_k3s_gives_up_after_nine_writes() {
        // 420 × 4 000 bytes: eight prunes drop 144 and leave 1 104 000 bytes, still too large.
        let mut data = entries(420, 4_000, 1000);
        let err = prune_to_limit(&mut data).unwrap_err();
        assert!(
            err.0
                .contains("gives up after 9 attempts (144 of the oldest"),
            "{err}"
        );
        // 400 × 4 000: the eighth prune brings it to 1 024 000 bytes, written on the ninth try.
        let mut fits = entries(400, 4_000, 1000);
        assert_eq!(prune_to_limit(&mut fits).unwrap().len(), 144);
    }

    #[test]
    fn later_rounds_drop_more_of_what_is_left() {
        // 110 × 10 000 bytes: 4 go (106 left, still too large), then 8 more (98 left).
        let mut data = entries(110, 10_000, 1000);
        let dropped = prune_to_limit(&mut data).unwrap();
        assert_eq!(dropped.len(), 12);
        assert_eq!(data.len(), 98);
        assert_eq!(dropped[11], "local-etcd-snapshot-s1-1011");
    }

    #[test]
    fn refuses_what_cannot_fit() {
        let mut data = entries(2, 600_000, 1);
        assert!(prune_to_limit(&mut data).is_err());
    }

    #[test]
    fn verification_compares_only_what_the_plan_changed() {
        let plan = BackfillPlan {
            configmap: "k3s-etcd-snapshots".into(),
            create: false,
            add: vec!["a".into()],
            update: vec!["b".into()],
            remove: vec!["c".into()],
            kept: vec![],
            dropped_for_size: vec![],
            not_added_for_size: vec![],
            bytes_before: 0,
            bytes_after: 0,
            writer_version: None,
            go_escaping: GoEscaping::Go122,
            go_escaping_assumed: true,
            data: [("a", "1"), ("b", "2"), ("k", "kept")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
        };
        let read = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        // An entry k3s added meanwhile, or one the plan did not touch, is not a failure.
        assert!(
            plan.unverified(&read(&[("a", "1"), ("b", "2"), ("z", "new")]))
                .is_empty()
        );
        assert_eq!(
            plan.unverified(&read(&[("a", "other"), ("c", "x")])),
            ["a", "b", "c"]
        );
    }
}
