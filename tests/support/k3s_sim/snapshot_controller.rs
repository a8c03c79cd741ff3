//! The snapshot ConfigMap controller that runs on the `<prog>-etcd` leader
//! (`pkg/etcd/snapshot_controller.go`), one pass per call:
//! 1. `onRemove` (wrangler OnRemove): for each ETCDSnapshotFile being deleted that still carries
//!    the controller's finalizer, delete its key from an existing ConfigMap, then drop the
//!    finalizer (the object goes away when no finalizer is left).
//! 2. The same wrapper adds the finalizer to every live CR that lacks it.
//! 3. `sync` + `_reconcile_` folded together: drop `local-`/`s3-` keys without an eligible CR,
//!    upsert the exact entry (`snapshot_entry`) of every eligible CR, prune to the 1 MiB cap as
//!    `pruneConfigMap` does, and write only if the data changed.
//!
//! Every write is a compare-and-swap (`FakeApi::replace`); a conflict ends the pass and the next
//! pass retries, as the work queue would. The ConfigMap is created only when there is data to
//! write (k3s never creates an empty one). Simplifications: the node-based matching of
//! `local-` keys in `reconcile` is not modelled (a key is dropped iff no eligible CR has it),
//! and ties in the pruning order are broken by key (Go's `sort.Slice` leaves them unordered).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::go_time::UNIX_TO_INTERNAL;
use super::quantity::go_parse_int;
use super::snapshot_entry::{S3ConfigShape, data_key, entry_value, has_metadata};
use crate::support::fake_api::FakeApi;

pub(crate) const FINALIZER: &str = "wrangler.cattle.io/managed-etcd-snapshots-controller";
/// The apiserver's limit on the summed byte length of a ConfigMap's values.
pub(crate) const MAX_DATA_BYTES: usize = 1_048_576;
/// `pruneStepSize`.
const PRUNE_STEP: usize = 4;
/// `snapshotDataBackoff.Steps`: write attempts of `retry.OnError`.
const WRITE_ATTEMPTS: usize = 9;

#[derive(Clone, Copy, Debug)]
pub(crate) struct ControllerConfig {
    pub prog: &'static str,
    /// Only CRs with non-empty `spec.metadata` get an entry (k3s ≥ v1.28.4, #8835).
    pub require_metadata: bool,
    pub s3_shape: S3ConfigShape,
}

pub(crate) fn configmap_name(prog: &str) -> String {
    format!("{prog}-etcd-snapshots")
}

pub(crate) fn sync(fake: &FakeApi, config: &ControllerConfig) {
    let name = configmap_name(config.prog);
    let crs = fake.list("ETCDSnapshotFile");

    let removing: Vec<&Value> = crs
        .iter()
        .filter(|cr| is_deleting(cr) && has_finalizer(cr))
        .collect();
    if !removing.is_empty() {
        if let Some(mut cm) = fake.get("ConfigMap", Some("kube-system"), &name) {
            let mut changed = false;
            if let Some(data) = cm["data"].as_object_mut() {
                for cr in &removing {
                    changed |= data.remove(&data_key(cr)).is_some();
                }
            }
            if changed && fake.replace(cm).is_err() {
                return;
            }
        }
        for cr in removing {
            remove_finalizer(fake, cr);
        }
    }

    for cr in crs
        .iter()
        .filter(|cr| !is_deleting(cr) && !has_finalizer(cr))
    {
        let mut cr = cr.clone();
        let mut finalizers = finalizers(&cr);
        finalizers.push(FINALIZER.to_string());
        cr["metadata"]["finalizers"] = json!(finalizers);
        let _ = fake.replace(cr);
    }

    let eligible: BTreeMap<String, String> = crs
        .iter()
        .filter(|cr| !is_deleting(cr) && (!config.require_metadata || has_metadata(cr)))
        .map(|cr| (data_key(cr), entry_value(cr, config.s3_shape)))
        .collect();
    reconcile(fake, &name, &eligible);
}

fn reconcile(fake: &FakeApi, name: &str, eligible: &BTreeMap<String, String>) {
    let mut cm = fake
        .get("ConfigMap", Some("kube-system"), name)
        .unwrap_or_else(|| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": name, "namespace": "kube-system"}})
        });
    let current: BTreeMap<String, String> = cm["data"]
        .as_object()
        .map(|d| {
            d.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let mut data = current.clone();
    data.retain(|k, _| {
        !(k.starts_with("local-") || k.starts_with("s3-")) || eligible.contains_key(k)
    });
    data.extend(eligible.iter().map(|(k, v)| (k.clone(), v.clone())));
    if data == current {
        return;
    }
    // Too large even after pruning, or pruning would drop everything: k3s gives up with an
    // error and writes nothing.
    let Some(data) = fit(data) else { return };
    if data == current {
        return;
    }
    cm["data"] = json!(data);
    let _ = fake.replace(cm);
}

/// The summed byte length of the values, as the apiserver's ConfigMap validation counts it.
pub(crate) fn data_size(data: &BTreeMap<String, String>) -> usize {
    data.values().map(String::len).sum()
}

/// The `retry.OnError(snapshotDataBackoff, isTooLargeError, …)` loop: up to 9 write attempts;
/// after each too-large one, `pruneConfigMap(cm, pruneCount)` drops `pruneCount` more of the
/// oldest entries of what is left (4, then 8, 12, …: 4, 12, 24, … in total) and `pruneCount`
/// grows by 4. `None` when it still does not fit or when a prune would drop every entry.
pub(crate) fn fit(mut data: BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    let mut prune_count = PRUNE_STEP;
    for _ in 0..WRITE_ATTEMPTS {
        if data_size(&data) <= MAX_DATA_BYTES {
            return Some(data);
        }
        if prune_count >= data.len() {
            return None;
        }
        prune_oldest(&mut data, prune_count);
        prune_count += PRUNE_STEP;
    }
    None
}

/// `pruneConfigMap`: keep the `len - count` newest keys by the time parsed from the key.
pub(crate) fn prune_oldest(data: &mut BTreeMap<String, String>, count: usize) {
    let keep = data.len().saturating_sub(count);
    let mut keys: Vec<(i64, String)> = data.keys().map(|k| (key_time(k), k.clone())).collect();
    keys.sort_by_key(|k| std::cmp::Reverse(k.0));
    for (_, key) in keys.into_iter().skip(keep) {
        data.remove(&key);
    }
}

/// The sort key of a data key: `strconv.ParseInt` of what follows the last `-` once `.zip` is
/// cut (a syntax error gives 0, a range error the int64 bound), as the internal seconds of
/// `time.Unix(ts, 0)` that `Time.Before` compares (Go's addition wraps on overflow).
pub(crate) fn key_time(key: &str) -> i64 {
    let base = key.strip_suffix(".zip").unwrap_or(key);
    let tail = base.rsplit_once('-').map_or(base, |(_, t)| t);
    let ts = go_parse_int(tail).unwrap_or_else(|bound| bound);
    ts.wrapping_add(UNIX_TO_INTERNAL)
}

fn is_deleting(cr: &Value) -> bool {
    !cr["metadata"]["deletionTimestamp"].is_null()
}

fn finalizers(cr: &Value) -> Vec<String> {
    cr["metadata"]["finalizers"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn has_finalizer(cr: &Value) -> bool {
    finalizers(cr).iter().any(|f| f == FINALIZER)
}

/// Drops the finalizer; a deleting object without finalizers is gone (the apiserver deletes it).
fn remove_finalizer(fake: &FakeApi, cr: &Value) {
    let mut cr = cr.clone();
    let left: Vec<String> = finalizers(&cr)
        .into_iter()
        .filter(|f| f != FINALIZER)
        .collect();
    let name = cr["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let meta = cr["metadata"].as_object_mut().expect("metadata");
    if left.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), json!(left));
    }
    if fake.replace(cr).is_ok() && left.is_empty() {
        fake.remove("ETCDSnapshotFile", None, &name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROG: &str = "k3s";

    fn config(require_metadata: bool) -> ControllerConfig {
        ControllerConfig {
            prog: PROG,
            require_metadata,
            s3_shape: S3ConfigShape::Embedded,
        }
    }

    fn cr(name: &str, file: &str, metadata: bool) -> Value {
        let mut cr = json!({
            "apiVersion": "k3s.cattle.io/v1", "kind": "ETCDSnapshotFile",
            "metadata": {"name": name},
            "spec": {"snapshotName": file, "nodeName": "s1", "location": format!("file:///s/{file}")},
            "status": {"readyToUse": true, "size": "100", "creationTime": "2024-05-31T12:00:05Z"}
        });
        if metadata {
            cr["spec"]["metadata"] = json!({"k": "v"});
        }
        cr
    }

    fn data(fake: &FakeApi) -> Option<BTreeMap<String, String>> {
        let cm = fake.get("ConfigMap", Some("kube-system"), &configmap_name(PROG))?;
        serde_json::from_value(cm["data"].clone()).ok()
    }

    fn map(entries: &[(&str, usize)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, n)| (k.to_string(), "x".repeat(*n)))
            .collect()
    }

    #[test]
    fn prune_order_newest_first() {
        assert_eq!(
            key_time("local-a-1717156805"),
            1_717_156_805 + UNIX_TO_INTERNAL
        );
        assert_eq!(
            key_time("s3-a-1717156805.zip"),
            1_717_156_805 + UNIX_TO_INTERNAL
        );
        assert_eq!(key_time("local-no-timestamp"), UNIX_TO_INTERNAL);
        assert_eq!(key_time("plain"), UNIX_TO_INTERNAL);
        // A range error yields MaxInt64, whose internal seconds wrap negative: the very oldest.
        assert!(key_time("local-a-99999999999999999999") < key_time("local-x"));
        let mut data = map(&[
            ("local-a-s1-300", 1),
            ("s3-a-s1-500.zip", 1),
            ("local-a-s1-100.zip", 1),
            ("local-unparsable", 1),
            ("s3-a-s1-400", 1),
            ("other-key-200", 1),
        ]);
        prune_oldest(&mut data, 4);
        let left: Vec<&str> = data.keys().map(String::as_str).collect();
        assert_eq!(left, ["s3-a-s1-400", "s3-a-s1-500.zip"]);
        prune_oldest(&mut data, 4);
        assert!(data.is_empty());
    }

    #[test]
    fn fit_prunes_4_then_8_more() {
        // 25 × 50 000 B: too large; −4 → 21 × 50 000 = 1 050 000 B, still too large; −8 → 13.
        let entries: Vec<(String, usize)> = (0..25)
            .map(|i| (format!("local-s-s1-{}", 1000 + i), 50_000))
            .collect();
        let refs: Vec<(&str, usize)> = entries.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        let fitted = fit(map(&refs)).unwrap();
        assert_eq!(fitted.len(), 13);
        assert!(fitted.contains_key("local-s-s1-1024") && fitted.contains_key("local-s-s1-1012"));
        assert!(!fitted.contains_key("local-s-s1-1011"));
        // Exactly the limit fits.
        assert_eq!(fit(map(&[("a", MAX_DATA_BYTES)])).unwrap().len(), 1);
        // Would have to drop everything: give up.
        assert_eq!(
            fit(map(&[("a-1", 400_000), ("b-2", 400_000), ("c-3", 400_000)])),
            None
        );
    }

    #[test]
    fn sync_writes_entries_finalizers_and_drops_stale_keys() {
        let fake = FakeApi::start();
        assert_eq!(data(&fake), None);
        sync(&fake, &config(true));
        assert_eq!(
            fake.get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots"),
            None
        );

        fake.put(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "k3s-etcd-snapshots", "namespace": "kube-system"},
            "data": {"local-gone-s9-1": "{}", "s3-gone-2": "{}", "unrelated": "keep"}}));
        let with = cr("local-with-1", "on-demand-s1-1717156805", true);
        fake.put(with.clone());
        fake.put(cr("local-without-1", "on-demand-s1-1717156806", false));
        sync(&fake, &config(true));
        let got = data(&fake).unwrap();
        let want: BTreeMap<String, String> = [
            (
                "local-on-demand-s1-1717156805".to_string(),
                entry_value(&with, S3ConfigShape::Embedded),
            ),
            ("unrelated".to_string(), "keep".to_string()),
        ]
        .into();
        assert_eq!(got, want);
        for name in ["local-with-1", "local-without-1"] {
            let obj = fake.get("ETCDSnapshotFile", None, name).unwrap();
            assert!(has_finalizer(&obj), "{obj}");
        }

        // A pass with nothing to do writes nothing.
        let rv = fake.resource_version();
        sync(&fake, &config(true));
        assert_eq!(fake.resource_version(), rv);

        // Without the metadata rule every CR gets an entry.
        sync(&fake, &config(false));
        assert_eq!(data(&fake).unwrap().len(), 3);
    }

    #[test]
    fn sync_handles_deletion() {
        let fake = FakeApi::start();
        fake.put(cr("local-a-1", "a-s1-1", true));
        let mut other = cr("local-b-1", "b-s1-2", true);
        other["metadata"]["finalizers"] = json!(["example.com/keep"]);
        fake.put(other);
        sync(&fake, &config(true));
        assert_eq!(data(&fake).unwrap().len(), 2);

        for name in ["local-a-1", "local-b-1"] {
            let mut obj = fake.get("ETCDSnapshotFile", None, name).unwrap();
            obj["metadata"]["deletionTimestamp"] = json!("2024-06-01T00:00:00Z");
            fake.put(obj);
        }
        sync(&fake, &config(true));
        assert_eq!(data(&fake).unwrap().len(), 0);
        assert_eq!(fake.get("ETCDSnapshotFile", None, "local-a-1"), None);
        let b = fake.get("ETCDSnapshotFile", None, "local-b-1").unwrap();
        assert_eq!(b["metadata"]["finalizers"], json!(["example.com/keep"]));
    }

    #[test]
    fn sync_prunes_oversized_configmap() {
        let fake = FakeApi::start();
        // 30 entries of ~53 kB (base64 of 40 kB of metadata): −4 → 26 still too large, −8 → 18.
        for i in 0..30 {
            let mut obj = cr(&format!("local-{i}"), &format!("e-s1-{}", 2_000 + i), true);
            obj["spec"]["metadata"] = json!({"k": "z".repeat(40_000)});
            fake.put(obj);
        }
        sync(&fake, &config(true));
        let got = data(&fake).unwrap();
        assert_eq!(got.len(), 18);
        assert!(data_size(&got) <= MAX_DATA_BYTES);
        assert!(got.contains_key("local-e-s1-2012") && !got.contains_key("local-e-s1-2011"));

        // Steady state: the same pruning gives the stored data, so nothing is written.
        let rv = |fake: &FakeApi| {
            let cm = fake
                .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
                .unwrap();
            cm["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let before = rv(&fake);
        sync(&fake, &config(true));
        assert_eq!(rv(&fake), before);

        // An older snapshot is pruned away at once (no error). Pruning restarts from all 31
        // entries (−4 → 27, −8 → 19), so 2011 comes back, as in k3s's reconcile.
        let mut old = cr("local-old", "e-s1-1000", true);
        old["spec"]["metadata"] = json!({"k": "z".repeat(40_000)});
        fake.put(old);
        sync(&fake, &config(true));
        let got = data(&fake).unwrap();
        assert_eq!(got.len(), 19);
        assert!(!got.contains_key("local-e-s1-1000") && got.contains_key("local-e-s1-2011"));
        let before = rv(&fake);
        sync(&fake, &config(true));
        assert_eq!(rv(&fake), before);
    }
}
