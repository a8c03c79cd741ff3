//! Reading `--from-file` dumps: files or directories of what `kubectl get ... -o yaml|json`
//! prints — single objects, `List`s, multi-document YAML, or concatenated JSON.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Node};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::bounded_read::{BoundedReadError, DUMP_FILE_LIMIT, read_text};
use super::dump_files::{self, DumpFiles};
use super::yaml_depth::{MAX_FLOW_NESTING, too_deep};
use super::{ClusterState, Origin, ReadError};
use crate::distro::LOCK_NAMESPACE;
use crate::model::apiserver_endpoints::{
    ApiserverEndpoints, SERVICE_NAME, SERVICE_NAME_LABEL, SERVICE_NAMESPACE,
};
use crate::model::configmap::ConfigMapFacts;
use crate::model::lease::LeaseFacts;
use crate::model::node::NodeFacts;
use crate::model::snapshot_file::SnapshotFile;

const DUMP_HINT: &str = "a dump is what `kubectl get ... -o yaml` or `-o json` prints";

/// One API object found in a dump, with where it came from.
struct Found {
    value: Value,
    file: PathBuf,
}

pub fn read_dump(paths: &[PathBuf]) -> Result<ClusterState, ReadError> {
    let DumpFiles { files, mut notes } = dump_files::collect(paths)?;
    let mut objects: BTreeMap<(String, String, String), Found> = BTreeMap::new();
    let mut ignored = 0usize;
    let mut newest: Option<(Timestamp, String)> = None;
    let mut heartbeat: Option<(Timestamp, String)> = None;
    for file in &files {
        let text = if dump_files::is_stdin(file) {
            super::bounded_read::read_stdin(DUMP_FILE_LIMIT)
        } else {
            read_text(file, DUMP_FILE_LIMIT)
        }
        .map_err(|e| unreadable(file, &e))?;
        for value in parse_documents(&text, file)? {
            for object in flatten(value) {
                let Some(key) = object_key(&object) else {
                    ignored += 1;
                    continue;
                };
                if !is_relevant(&key) {
                    ignored += 1;
                    continue;
                }
                if key.0 == "Node"
                    && let Some(beat) = newest_heartbeat(&object)
                    && heartbeat.as_ref().is_none_or(|(t, _)| beat > *t)
                {
                    heartbeat = Some((beat, key.2.clone()));
                }
                if let Some((time, field)) = newest_timestamp(&object)
                    && newest.as_ref().is_none_or(|(t, _)| time > *t)
                {
                    newest = Some((time, format!("{} {field}", shown_name(&key))));
                }
                let found = Found {
                    value: object,
                    file: file.clone(),
                };
                keep_newer(&mut objects, key, found, &mut notes);
            }
        }
    }
    notes.extend(heartbeat_ahead(heartbeat.as_ref(), newest.as_ref()));
    if ignored > 0 {
        notes.push(format!(
            "{ignored} object(s) in the dump are not used by k3sdoctor and were skipped"
        ));
    }
    let mut state = ClusterState {
        origin: Origin::Dump {
            paths: paths.to_vec(),
        },
        newest_timestamp: newest.as_ref().map(|(t, _)| *t),
        newest_timestamp_from: newest.map(|(_, from)| from),
        notes,
        ..ClusterState::default()
    };
    for ((kind, _, _), found) in &objects {
        match kind.as_str() {
            "Node" => push(
                &mut state.nodes,
                NodeFacts::from_api(&typed::<Node>(found)?),
            ),
            "Lease" => push(
                &mut state.leases,
                LeaseFacts::from_api(&typed::<Lease>(found)?),
            ),
            "ConfigMap" => push(
                &mut state.configmaps,
                ConfigMapFacts::from_api(&typed::<ConfigMap>(found)?),
            ),
            "ETCDSnapshotFile" => push(
                &mut state.snapshot_files,
                SnapshotFile::from_json(&found.value),
            ),
            "Endpoints" => push(
                &mut state.kubernetes_endpoints,
                ApiserverEndpoints::from_endpoints(&typed::<Endpoints>(found)?),
            ),
            "EndpointSlice" => {
                let slice = typed::<EndpointSlice>(found)?;
                // `kubectl -n default get endpointslices` has every Service's; only the
                // kubernetes Service's count, and their presence says the kind was dumped.
                let slices = state
                    .kubernetes_endpoint_slices
                    .get_or_insert_with(Vec::new);
                let labels = slice.metadata.labels.as_ref();
                if labels
                    .and_then(|l| l.get(SERVICE_NAME_LABEL))
                    .map(String::as_str)
                    == Some(SERVICE_NAME)
                {
                    slices.push(ApiserverEndpoints::from_slice(&slice));
                }
            }
            _ => {}
        }
    }
    Ok(state)
}

fn push<T>(collection: &mut Option<Vec<T>>, item: T) {
    collection.get_or_insert_with(Vec::new).push(item);
}

/// One line for a dump file that could not be read, with what to do about it.
fn unreadable(file: &Path, e: &BoundedReadError) -> ReadError {
    let what_to_do = match e {
        BoundedReadError::TooLarge { .. } => {
            "split it (one kubectl get per kind) or keep only the kinds k3sdoctor reads"
        }
        BoundedReadError::NotRegular(_) => "save the dump to a regular file and pass that",
        BoundedReadError::NotUtf8 | BoundedReadError::Io(_) => "pass a readable UTF-8 file",
    };
    let problem = match e {
        BoundedReadError::Io(io) => format!("cannot be read: {io}"),
        other => other.to_string(),
    };
    ReadError::new(format!(
        "dump file {} {problem}; {what_to_do} ({DUMP_HINT})",
        file.display()
    ))
}

fn parse_documents(text: &str, file: &Path) -> Result<Vec<Value>, ReadError> {
    let bad = |e: &dyn std::fmt::Display| {
        ReadError::new(format!(
            "cannot parse dump file {}: {e}; {DUMP_HINT}",
            file.display()
        ))
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let mut docs = Vec::new();
        for doc in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
            match doc.map_err(|e| bad(&e))? {
                Value::Array(items) => docs.extend(items),
                other => docs.push(other),
            }
        }
        return Ok(docs);
    }
    if let Some(line) = too_deep(text) {
        return Err(bad(&format!(
            "[ and {{ nest more than {MAX_FLOW_NESTING} deep at line {line}, deeper than any Kubernetes object"
        )));
    }
    let mut docs = Vec::new();
    for doc in serde_yaml_ng::Deserializer::from_str(text) {
        let value = Value::deserialize(doc).map_err(|e| bad(&e))?;
        if !value.is_null() {
            docs.push(value);
        }
    }
    if docs.is_empty() && !text.trim().is_empty() {
        return Err(bad(&"no documents found"));
    }
    Ok(docs)
}

/// Expands `List`s (`kind: List` from kubectl, `LeaseList` from the API) into their items; API
/// lists leave `kind`/`apiVersion` off their items, so they are filled in from the list.
fn flatten(value: Value) -> Vec<Value> {
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(items) = value
        .get("items")
        .and_then(Value::as_array)
        .filter(|_| kind.ends_with("List"))
    else {
        return vec![value];
    };
    let item_kind = kind
        .strip_suffix("List")
        .filter(|k| !k.is_empty())
        .map(str::to_string);
    let api_version = value.get("apiVersion").cloned();
    items
        .iter()
        .cloned()
        .flat_map(|mut item| {
            if let (Some(obj), Some(k)) = (item.as_object_mut(), &item_kind) {
                obj.entry("kind")
                    .or_insert_with(|| Value::String(k.clone()));
                if let Some(v) = &api_version {
                    obj.entry("apiVersion").or_insert_with(|| v.clone());
                }
            }
            flatten(item)
        })
        .collect()
}

/// (kind, namespace, name) of an object, if it has them.
fn object_key(object: &Value) -> Option<(String, String, String)> {
    let kind = object.get("kind")?.as_str()?;
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let meta = object.get("metadata")?;
    let name = meta.get("name")?.as_str()?;
    let namespace = meta
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let known = matches!(
        (api_version, kind),
        ("v1", "Node")
            | ("v1", "ConfigMap")
            | ("coordination.k8s.io/v1", "Lease")
            | ("k3s.cattle.io/v1", "ETCDSnapshotFile")
            | ("v1", "Endpoints")
            | ("discovery.k8s.io/v1", "EndpointSlice")
    );
    Some((
        if known {
            kind.to_string()
        } else {
            format!("{api_version}/{kind}")
        },
        namespace.to_string(),
        name.to_string(),
    ))
}

fn is_relevant((kind, namespace, name): &(String, String, String)) -> bool {
    match kind.as_str() {
        "Node" | "ETCDSnapshotFile" => true,
        "Lease" | "ConfigMap" => namespace == LOCK_NAMESPACE,
        "Endpoints" => namespace == SERVICE_NAMESPACE && name == SERVICE_NAME,
        "EndpointSlice" => namespace == SERVICE_NAMESPACE,
        _ => false,
    }
}

/// The same object in two files (dumps pasted together): the newer resourceVersion wins.
fn keep_newer(
    objects: &mut BTreeMap<(String, String, String), Found>,
    key: (String, String, String),
    found: Found,
    notes: &mut Vec<String>,
) {
    let rv = |v: &Value| -> u64 {
        v.pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    };
    let Some(existing) = objects.get(&key) else {
        objects.insert(key, found);
        return;
    };
    let (kind, ns, name) = &key;
    let shown = if ns.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {ns}/{name}")
    };
    let (old_rv, new_rv) = (rv(&existing.value), rv(&found.value));
    let (kept, kept_rv) = if new_rv > old_rv {
        (&found.file, new_rv)
    } else {
        (&existing.file, old_rv)
    };
    notes.push(format!(
        "{shown} appears more than once in the dump; kept resourceVersion {kept_rv} from {}",
        kept.display()
    ));
    if new_rv > old_rv {
        objects.insert(key, found);
    }
}

fn typed<T: DeserializeOwned>(found: &Found) -> Result<T, ReadError> {
    serde_json::from_value(found.value.clone()).map_err(|e| {
        let kind = found
            .value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("object");
        let name = found
            .value
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("?");
        ReadError::new(format!(
            "dump file {}: {kind} {name} is malformed: {e}; re-create it with kubectl get -o yaml",
            found.file.display()
        ))
    })
}

/// The newest time the API server or a control-plane lock holder wrote into an object, and
/// where: the newest over a dump stands in for "when the dump was taken". Lease renewals
/// (`spec.renewTime`: the k3s locks every 2 s, the apiserver identity leases every 10 s),
/// `metadata.creationTimestamp` and `metadata.managedFields[].time` (both set by the API
/// server). Not the Node conditions' `lastHeartbeatTime`: each kubelet writes that with its own
/// clock, so one agent running minutes fast would make every fresh lock look expired.
fn newest_timestamp(object: &Value) -> Option<(Timestamp, &'static str)> {
    let at = |pointer: &str, field: &'static str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok())
            .map(|t| (t, field))
    };
    let managed = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.get("time")?.as_str()?.parse::<Timestamp>().ok())
        .map(|t| (t, "metadata.managedFields[].time"));
    [
        at("/metadata/creationTimestamp", "metadata.creationTimestamp"),
        at("/spec/renewTime", "spec.renewTime"),
    ]
    .into_iter()
    .flatten()
    .chain(managed)
    .max_by_key(|(t, _)| *t)
}

/// A kubelet heartbeat this far past the newest server-written time means that node's clock
/// runs fast (heartbeats come every 10 s at most); the same allowance as lock freshness.
const HEARTBEAT_SKEW: SignedDuration = SignedDuration::from_secs(10);

/// The newest `lastHeartbeatTime` of a Node's conditions: written by its kubelet's clock.
fn newest_heartbeat(node: &Value) -> Option<Timestamp> {
    node.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .filter_map(|c| c.get("lastHeartbeatTime")?.as_str()?.parse().ok())
        .max()
}

/// Says which time "now" is and why a later heartbeat was passed over, when one was.
fn heartbeat_ahead(
    heartbeat: Option<&(Timestamp, String)>,
    newest: Option<&(Timestamp, String)>,
) -> Option<String> {
    let ((beat, node), (now, from)) = (heartbeat?, newest?);
    let ahead = beat.duration_since(*now);
    (ahead > HEARTBEAT_SKEW).then(|| {
        format!(
            "Node {node}'s heartbeat is {} past the newest server-written time in the dump (its clock \
             probably runs fast) and was not used as now; now is {} from {from}, override with --now",
            minutes_seconds(ahead),
            now.strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    })
}

/// `6m0s`, `45s`.
fn minutes_seconds(d: SignedDuration) -> String {
    let secs = d.as_secs();
    if secs >= 60 {
        format!("{}m{}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

/// `Lease kube-system/k3s` for messages.
fn shown_name(key: &(String, String, String)) -> String {
    let (kind, namespace, name) = key;
    if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> Vec<Value> {
        parse_documents(text, Path::new("test.yaml"))
            .unwrap()
            .into_iter()
            .flat_map(flatten)
            .collect()
    }

    #[test]
    fn reads_kubectl_lists_and_multi_document_yaml() {
        let yaml = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n---\n\
                    apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: k3s, namespace: kube-system}\n";
        let found = docs(yaml);
        assert_eq!(found.len(), 2);
        assert_eq!(object_key(&found[1]).unwrap().0, "Lease");
    }

    #[test]
    fn api_lists_give_their_items_a_kind() {
        let json = r#"{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","items":[{"metadata":{"name":"k3s","namespace":"kube-system"}}]}"#;
        let found = docs(json);
        assert_eq!(
            object_key(&found[0]).unwrap(),
            ("Lease".into(), "kube-system".into(), "k3s".into())
        );
    }

    #[test]
    fn crlf_and_single_quoted_json_values_parse() {
        let yaml = "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: k3s\r\n  namespace: kube-system\r\n  annotations:\r\n    control-plane.alpha.kubernetes.io/leader: '{\"holderIdentity\":\"a\"}'\r\n";
        let found = docs(yaml);
        assert_eq!(
            found[0]
                .pointer("/metadata/annotations/control-plane.alpha.kubernetes.io~1leader")
                .unwrap(),
            r#"{"holderIdentity":"a"}"#
        );
    }

    #[test]
    fn only_the_kubernetes_services_endpoints_and_slices_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("default.yaml");
        std::fs::write(
            &file,
            "apiVersion: v1\nkind: List\nitems:\n\
             - apiVersion: v1\n  kind: Endpoints\n  metadata: {name: kubernetes, namespace: default}\n  \
               subsets: [{addresses: [{ip: 10.0.0.1}], ports: [{name: https, port: 6443}]}]\n\
             - apiVersion: v1\n  kind: Endpoints\n  metadata: {name: web, namespace: default}\n\
             - apiVersion: discovery.k8s.io/v1\n  kind: EndpointSlice\n  \
               metadata: {name: kubernetes, namespace: default, labels: {kubernetes.io/service-name: kubernetes}}\n  \
               addressType: IPv4\n  endpoints: [{addresses: [10.0.0.1]}]\n\
             - apiVersion: discovery.k8s.io/v1\n  kind: EndpointSlice\n  \
               metadata: {name: web-x1, namespace: default, labels: {kubernetes.io/service-name: web}}\n  \
               addressType: IPv4\n  endpoints: []\n",
        )
        .unwrap();
        let state = read_dump(std::slice::from_ref(&file)).unwrap();
        let endpoints = state.kubernetes_endpoints.unwrap();
        assert_eq!(endpoints.len(), 1);
        assert_eq!(endpoints[0].ready_ips().collect::<Vec<_>>(), ["10.0.0.1"]);
        let slices = state.kubernetes_endpoint_slices.unwrap();
        assert_eq!(slices.len(), 1);
        assert_eq!(slices[0].name, "kubernetes");
        let without = dir.path().join("nodes.yaml");
        std::fs::write(
            &without,
            "apiVersion: v1\nkind: Node\nmetadata: {name: s1}\n",
        )
        .unwrap();
        let state = read_dump(&[without]).unwrap();
        assert!(state.kubernetes_endpoints.is_none() && state.kubernetes_endpoint_slices.is_none());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(parse_documents("{not json", Path::new("x.json")).is_err());
        assert!(parse_documents("a: [unclosed", Path::new("x.yaml")).is_err());
        assert!(parse_documents("", Path::new("x.yaml")).unwrap().is_empty());
    }

    /// Issue 18 item 13: adversarial nesting fails fast with the clear error. The times are
    /// printed for the report (`--nocapture`), not asserted. In a debug build on a loaded
    /// machine: 0.2 ms (flow, caught by the pre-scan), 0.3 ms (JSON, serde_json's own limit of
    /// 128), 0.8 s (block sequences: linear, stopped by serde_yaml_ng's recursion limit) and
    /// 1.9 s for a mebibyte of tokens at the deepest flow level allowed, where a flat
    /// one-level list of the same size takes 1.5 s: what is left is the parser's own speed.
    #[test]
    fn a_mebibyte_of_nesting_fails_fast_and_clearly() {
        let mib = 1 << 20;
        let cases = [
            ("yaml flow", format!("a: {}", "[".repeat(mib - 3))),
            ("yaml flow maps", format!("a: {}", "{a: ".repeat(mib / 4))),
            ("json", "[".repeat(mib)),
            ("yaml block", format!("a:\n{}", "- ".repeat(mib / 2))),
            // The worst the pre-scan lets through: every token at the deepest flow level.
            (
                "yaml flow at the limit",
                format!(
                    "a: {}{}",
                    "[".repeat(MAX_FLOW_NESTING),
                    "a, ".repeat(mib / 3)
                ),
            ),
        ];
        for (what, text) in cases {
            let started = std::time::Instant::now();
            let err = parse_documents(&text, Path::new("deep.yaml")).unwrap_err();
            eprintln!("{what}: {:?} for {} bytes", started.elapsed(), text.len());
            assert!(
                err.message
                    .starts_with("cannot parse dump file deep.yaml: "),
                "{what}: {}",
                err.message
            );
        }
    }

    #[test]
    fn newest_timestamp_looks_at_renewals_and_heartbeats() {
        let v: Value = serde_json::json!({
            "metadata": {"creationTimestamp": "2024-05-01T00:00:00Z"},
            "spec": {"renewTime": "2024-05-31T12:10:33.918204Z"},
        });
        let (time, field) = newest_timestamp(&v).unwrap();
        assert_eq!(time.to_string(), "2024-05-31T12:10:33.918204Z");
        assert_eq!(field, "spec.renewTime");
    }

    #[test]
    fn a_heartbeat_ahead_of_now_is_named_with_the_time_used() {
        let t = |s: &str| s.parse::<Timestamp>().unwrap();
        let now = (
            t("2024-05-31T12:10:40Z"),
            "Lease kube-system/k3s spec.renewTime".to_string(),
        );
        let fast = (t("2024-05-31T12:16:40Z"), "w1".to_string());
        let note = heartbeat_ahead(Some(&fast), Some(&now)).unwrap();
        assert!(
            note.starts_with("Node w1's heartbeat is 6m0s past"),
            "{note}"
        );
        assert!(
            note.contains("now is 2024-05-31T12:10:40Z from Lease kube-system/k3s spec.renewTime")
        );
        let usual = (t("2024-05-31T12:10:48Z"), "w1".to_string());
        assert_eq!(heartbeat_ahead(Some(&usual), Some(&now)), None);
    }

    /// Issue 18 item 14: a kubelet's clock six minutes fast does not move the dump's "now".
    #[test]
    fn node_heartbeats_do_not_count_but_server_written_times_do() {
        let node: Value = serde_json::json!({
            "metadata": {"creationTimestamp": "2024-05-01T00:00:00Z",
                         "managedFields": [{"manager": "k3s", "time": "2024-05-31T12:10:30Z"}]},
            "status": {"conditions": [{"type": "Ready", "lastHeartbeatTime": "2024-05-31T12:16:40Z"}]},
        });
        let (time, field) = newest_timestamp(&node).unwrap();
        assert_eq!(time.to_string(), "2024-05-31T12:10:30Z");
        assert_eq!(field, "metadata.managedFields[].time");
    }
}
