//! An ETCDSnapshotFile as it comes off the wire, keeping only what [`SnapshotFile`] reads.
//!
//! A page of 500 CRs decoded as `DynamicObject`s holds every field of every object (the
//! managedFields alone are about a kilobyte each), and turning each into a `serde_json::Value`
//! copied it all again: at 50,000 CRs the CLI peaked past 600 MiB. This type is what
//! the list and the watch decode instead: while the page is parsed, everything
//! [`SnapshotFile::from_json`] never looks at is skipped unread, and the few fields it does read
//! are turned into a `SnapshotFile` at once. `from_json` itself is unchanged, so the facts are
//! the ones a whole-object read (a dump) gives.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::model::kinds::Kind;
use crate::model::snapshot_file::SnapshotFile;

/// One decoded ETCDSnapshotFile: its facts, and the name and resourceVersion a watch needs.
#[derive(Debug, Clone)]
pub(crate) struct SnapshotFileObject {
    meta: ObjectMeta,
    pub file: Arc<SnapshotFile>,
}

impl SnapshotFileObject {
    pub(crate) fn into_file(self) -> Arc<SnapshotFile> {
        self.file
    }
}

/// What of a JSON value to keep.
#[derive(Clone, Copy)]
enum Keep {
    /// The whole value.
    All,
    /// Only these keys of an object, each kept as its rule says; anything else becomes null
    /// (`from_json` reads by JSON pointer, and a pointer into a non-object finds nothing
    /// either way).
    Fields(&'static [(&'static str, Keep)]),
    /// Only the `etcd.*.cattle.io/` keys of an object: the labels and annotations k3s writes
    /// (`from_json` keeps no others; `kubectl.kubernetes.io/last-applied-configuration` can be
    /// the size of the object).
    EtcdKeys,
}

const METADATA: &[(&str, Keep)] = &[
    ("name", Keep::All),
    ("resourceVersion", Keep::All),
    ("creationTimestamp", Keep::All),
    ("deletionTimestamp", Keep::All),
    ("finalizers", Keep::All),
    ("labels", Keep::EtcdKeys),
    ("annotations", Keep::EtcdKeys),
];

/// Everything [`SnapshotFile::from_json`] reads: `spec` and `status` whole (small, and all of
/// it is read), and some of `metadata`.
const OBJECT: Keep = Keep::Fields(&[
    ("metadata", Keep::Fields(METADATA)),
    ("spec", Keep::All),
    ("status", Keep::All),
]);

fn is_etcd_key(key: &str) -> bool {
    key.starts_with("etcd.") && key.contains(".cattle.io/")
}

impl<'de> DeserializeSeed<'de> for Keep {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self {
            Keep::All => serde::Deserialize::deserialize(deserializer),
            keep => deserializer.deserialize_any(Pruning(keep)),
        }
    }
}

/// Builds the kept part of an object; any other type is read and dropped.
struct Pruning(Keep);

impl<'de> Visitor<'de> for Pruning {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut kept = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let rule = match self.0 {
                Keep::Fields(fields) => fields.iter().find(|(k, _)| *k == key).map(|(_, r)| *r),
                Keep::EtcdKeys => is_etcd_key(&key).then_some(Keep::All),
                Keep::All => Some(Keep::All),
            };
            match rule {
                Some(rule) => {
                    let value = map.next_value_seed(rule)?;
                    kept.insert(key, value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(kept))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_str<E>(self, _: &str) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::Deserialize<'de> for SnapshotFileObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let kept = OBJECT.deserialize(deserializer)?;
        let text = |key: &str| {
            kept.pointer(&format!("/metadata/{key}"))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Ok(SnapshotFileObject {
            meta: ObjectMeta {
                name: text("name"),
                resource_version: text("resourceVersion"),
                ..ObjectMeta::default()
            },
            file: Arc::new(SnapshotFile::from_json(&kept)),
        })
    }
}

impl kube::Resource for SnapshotFileObject {
    type DynamicType = ();
    type Scope = k8s_openapi::ClusterResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        Kind::SnapshotFile.name().into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        Kind::SnapshotFile.row().group().into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        Kind::SnapshotFile.row().version().into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        Kind::SnapshotFile.row().plural.into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.meta
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn both_ways(object: Value) {
        let whole = SnapshotFile::from_json(&object);
        let decoded: SnapshotFileObject = serde_json::from_str(&object.to_string()).unwrap();
        assert_eq!(*decoded.file, whole, "{object}");
    }

    #[test]
    fn decodes_the_facts_a_whole_object_read_gives() {
        both_ways(json!({
            "apiVersion": "k3s.cattle.io/v1", "kind": "ETCDSnapshotFile",
            "metadata": {"name": "s3-x", "resourceVersion": "17", "uid": "u",
                         "creationTimestamp": "2024-05-31T12:00:00Z",
                         "deletionTimestamp": "2024-05-31T12:05:00Z",
                         "finalizers": ["wrangler.cattle.io/managed-etcd-snapshots-controller", "other"],
                         "labels": {"etcd.k3s.cattle.io/snapshot-storage-node": "s3", "app": "x"},
                         "annotations": {"etcd.k3s.cattle.io/snapshot-token-hash": "37831a857fac",
                                         "kubectl.kubernetes.io/last-applied-configuration": "{}"},
                         "managedFields": [{"manager": "k3s", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"snapshotName": "x", "nodeName": "s3", "location": "s3://b/x",
                     "metadata": {"a": "b", "n": 1, "o": {"x": [1]}},
                     "s3": {"endpoint": "e", "bucket": "b", "prefix": "p", "skipSSLVerify": true}},
            "status": {"readyToUse": false, "size": "12 MB",
                       "error": {"time": "2024-05-31T11:00:00Z", "message": "boom"}}
        }));
    }

    #[test]
    fn odd_shapes_give_what_a_whole_object_read_gives() {
        for object in [
            json!({}),
            json!({"metadata": "x", "spec": [1, 2], "status": null}),
            json!({"metadata": {"name": 5, "labels": ["etcd.k3s.cattle.io/x"], "annotations": null,
                                "finalizers": "f"}, "status": {"size": {"a": 1}}}),
            json!({"metadata": {"labels": {"etcd.k3s.cattle.io/snapshot-storage-node": 1}},
                   "spec": {"s3": "yes", "metadata": []}, "status": {"size": 5_328_929, "error": "e"}}),
            json!({"status": {"size": true, "readyToUse": "true"}}),
        ] {
            both_ways(object);
        }
    }

    #[test]
    fn keeps_the_name_and_resource_version_for_the_watch() {
        let decoded: SnapshotFileObject = serde_json::from_value(json!({
            "metadata": {"name": "local-x", "resourceVersion": "42", "generation": 1}
        }))
        .unwrap();
        use kube::Resource;
        assert_eq!(decoded.meta().name.as_deref(), Some("local-x"));
        assert_eq!(decoded.meta().resource_version.as_deref(), Some("42"));
    }
}
