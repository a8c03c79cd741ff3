//! `etcdsnapshots.rke.cattle.io` records as each Rancher line writes them, computed from the
//! downstream cluster's ETCDSnapshotFiles and `<prog>-etcd-snapshots` ConfigMap: the tests'
//! oracle, checked against
//! rancher/rancher's `plansecret` (≤2.10), `snapshotbackpopulate` (all lines) and wrangler's
//! `SafeConcatName`.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use base64::Engine;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::support::envtest::admin::AdminApi;

pub(crate) const CLUSTER_NAME_LABEL: &str = "rke.cattle.io/cluster-name";
pub(crate) const NODE_NAME_LABEL: &str = "rke.cattle.io/node-name";
pub(crate) const MACHINE_ID_LABEL: &str = "rke.cattle.io/machine-id";
pub(crate) const STORAGE: &str = "etcdsnapshot.rke.io/storage";
pub(crate) const SNAPSHOT_NAME: &str = "etcdsnapshot.rke.io/snapshot-name";
pub(crate) const SNAPSHOT_FILE_NAME: &str = "etcdsnapshot.rke.io/snapshot-file-name";
pub(crate) const RECONCILED: &str = "etcdsnapshot.rke.io/snapshotbackpopulate-reconciled";
pub(crate) const RESTORE_MODES: &str = "etcdsnapshot.rke.io/restore-mode-options";

/// A Rancher release, as far as the rules that differ between lines go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Rancher {
    pub minor: u32,
    pub patch: u32,
}

impl Rancher {
    /// `v2.10.4`, `2.14.0`, `v2.11.2-rc1`; `None` for anything not 2.x.y.
    pub(crate) fn parse(version: &str) -> Option<Rancher> {
        let core = version.trim_start_matches('v').split(['-', '+']).next()?;
        let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
        match (parts.next()??, parts.next()??, parts.next().flatten()) {
            (2, minor, patch) => Some(Rancher {
                minor,
                patch: patch.unwrap_or(0),
            }),
            _ => None,
        }
    }

    /// 2.11+ (rancher/rancher#49158) reads ETCDSnapshotFiles, not the ConfigMap.
    pub(crate) fn reads_snapshot_files(self) -> bool {
        self.minor >= 11
    }

    /// ConfigMap node names lower-cased from v2.9.8 / v2.10.4 (rancher/rancher#49230).
    pub(crate) fn lowercases_node_names(self) -> bool {
        self.minor > 10
            || (self.minor == 10 && self.patch >= 4)
            || (self.minor == 9 && self.patch >= 8)
    }
}

/// What Rancher reads downstream and on the management cluster for one provisioning cluster.
pub(crate) struct Source<'a> {
    /// The provisioning Cluster's name (`prod`), also the records' cluster-name label.
    pub cluster: &'a str,
    /// Its namespace (`fleet-default`), where the records are written.
    pub namespace: &'a str,
    /// The downstream ETCDSnapshotFiles, as listed.
    pub snapshot_files: &'a [Value],
    /// The `data` of the downstream `<prog>-etcd-snapshots` ConfigMap (read by ≤2.10 only).
    pub configmap: &'a Map<String, Value>,
    /// Node name → the `rke.cattle.io/machine-id` of its CAPI Machine.
    pub machine_ids: &'a HashMap<String, String>,
}

/// One object to write: the object, and the status Rancher sets through the subresource.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Record {
    pub object: Value,
    pub status: Option<Value>,
}

impl Record {
    pub(crate) fn name(&self) -> &str {
        self.object["metadata"]["name"].as_str().unwrap_or_default()
    }
}

/// wrangler `name.SafeConcatName`: the parts joined with `-`; from 64 characters on, cut to
/// 57 (or 56 when the 57th would end the name in something other than `[a-z0-9]`) plus `-` and
/// the first 5 (or 6) hex of the sha256 of the whole, 63 characters either way.
pub(crate) fn safe_concat_name(parts: &[&str]) -> String {
    let full = parts.join("-");
    if full.len() < 64 {
        return full;
    }
    let digest = hex(&Sha256::digest(full.as_bytes()));
    let c = full.as_bytes()[56];
    if c.is_ascii_lowercase() || c.is_ascii_digit() {
        format!("{}-{}", &full[..57], &digest[..5])
    } else {
        format!("{}-{}", &full[..56], &digest[..6])
    }
}

/// 2.7–2.13's name body: lower-cased, every character outside `[-.a-zA-Z0-9]` as `-`.
pub(crate) fn sanitized(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// 2.14+ (rancher/rancher#52463) `generateSafeSnapshotName`: `<storage>-<name>-<hex6>`, the name
/// replaced by `etcd-snapshot-<short host>-<unix>` when it is no DNS-1123 subdomain or too long.
pub(crate) fn safe_snapshot_name(
    snapshot_name: &str,
    node: &str,
    location: &str,
    s3: bool,
    created_unix: i64,
) -> String {
    let storage = if s3 { "s3" } else { "local" };
    let hex6 = hex(&Sha256::digest(format!("{node}{location}").as_bytes()))[..6].to_string();
    let mut name = snapshot_name.to_lowercase();
    if !is_dns1123_subdomain(&name) || name.len() + "local".len() + 2 + 6 > 253 {
        let short_host = node.split('.').next().unwrap_or_default();
        name = format!("etcd-snapshot-{short_host}-{created_unix}");
    }
    format!("{storage}-{name}-{hex6}")
}

fn is_dns1123_subdomain(name: &str) -> bool {
    let label = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    };
    name.len() <= 253 && name.split('.').all(label)
}

/// The records `rancher` keeps for `source`.
pub(crate) fn records(rancher: Rancher, source: &Source) -> Vec<Record> {
    if rancher.reads_snapshot_files() {
        source
            .snapshot_files
            .iter()
            .filter_map(|esf| from_snapshot_file(rancher, source, esf))
            .map(|object| Record {
                object,
                status: None,
            })
            .collect()
    } else {
        super::records_legacy::records(rancher, source)
    }
}

/// 2.11+ `populateUpstreamSnapshotFromDownstream`; `None` where Rancher's handler errors (a
/// local snapshot whose node has no Machine) and so never writes one.
fn from_snapshot_file(rancher: Rancher, source: &Source, esf: &Value) -> Option<Value> {
    let spec = &esf["spec"];
    let status = &esf["status"];
    let s3 = spec["s3"].is_object();
    let storage = if s3 { "s3" } else { "local" };
    let snapshot_name = spec["snapshotName"].as_str().unwrap_or_default();
    let node = spec["nodeName"].as_str().unwrap_or_default();
    let location = spec["location"].as_str().unwrap_or_default();
    let created = status["creationTime"].as_str().unwrap_or_default();
    let name = if rancher.minor >= 14 {
        let unix = created
            .parse::<jiff::Timestamp>()
            .map_or(0, |t| t.as_second());
        safe_concat_name(&[
            source.cluster,
            &safe_snapshot_name(snapshot_name, node, location, s3, unix),
        ])
    } else {
        safe_concat_name(&[source.cluster, &sanitized(snapshot_name), storage])
    };
    let mut labels = json!({CLUSTER_NAME_LABEL: source.cluster});
    if !s3 {
        let machine_id = source.machine_ids.get(node)?;
        labels[MACHINE_ID_LABEL] = json!(machine_id);
        labels[NODE_NAME_LABEL] = json!(node);
    }
    let mut annotations = json!({STORAGE: storage, SNAPSHOT_NAME: esf["metadata"]["name"]});
    if rancher.minor >= 14 {
        annotations[SNAPSHOT_FILE_NAME] = json!(snapshot_name);
        annotations[RESTORE_MODES] = json!(restore_modes(&spec["metadata"]));
    }
    let mut file = Map::new();
    put_str(&mut file, "name", snapshot_name);
    put_str(&mut file, "nodeName", node);
    put_str(&mut file, "location", location);
    put_str(&mut file, "createdAt", created);
    file.insert("metadata".into(), json!(metadata_base64(&spec["metadata"])));
    put_str(
        &mut file,
        "message",
        status["error"]["message"].as_str().unwrap_or_default(),
    );
    let size = status["size"].as_str().and_then(quantity_i64).unwrap_or(0);
    if size != 0 {
        file.insert("size".into(), json!(size));
    }
    let ready = status["readyToUse"].as_bool() == Some(true);
    file.insert(
        "status".into(),
        json!(if ready { "successful" } else { "failed" }),
    );
    if s3 {
        let s = &spec["s3"];
        let mut out = Map::new();
        for (to, from) in [
            ("endpoint", "endpoint"),
            ("endpointCA", "endpointCA"),
            ("bucket", "bucket"),
            ("region", "region"),
            ("folder", "prefix"),
        ] {
            put_str(&mut out, to, s[from].as_str().unwrap_or_default());
        }
        if s["skipSSLVerify"].as_bool() == Some(true) {
            out.insert("skipSSLVerify".into(), json!(true));
        }
        file.insert("s3".into(), Value::Object(out));
    }
    Some(json!({
        "apiVersion": "rke.cattle.io/v1",
        "kind": "ETCDSnapshot",
        "metadata": {"name": name, "namespace": source.namespace, "labels": labels, "annotations": annotations},
        "spec": {"clusterName": source.cluster},
        "snapshotFile": file,
    }))
}

/// Go's omitempty for a string field.
pub(super) fn put_str(map: &mut Map<String, Value>, key: &str, value: &str) {
    if !value.is_empty() {
        map.insert(key.to_string(), json!(value));
    }
}

/// base64 of Go's `json.Marshal(&spec.Metadata)`: keys sorted, `<>&` and U+2028/9 escaped, a
/// nil map as `null` (`bnVsbA==`).
pub(crate) fn metadata_base64(metadata: &Value) -> String {
    let text = match metadata.as_object() {
        None => "null".to_string(),
        Some(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            go_escape(&serde_json::to_string(&sorted).unwrap_or_default())
        }
    };
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn go_escape(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// 2.14+ `getRestoreModesAnnotation`: `none`, plus `kubernetesVersion` when the gzipped,
/// base64 `provisioning-cluster-spec` decodes to a ClusterSpec with one, plus `all` when it
/// also has an rkeConfig.
pub(crate) fn restore_modes(metadata: &Value) -> String {
    let spec = metadata["provisioning-cluster-spec"]
        .as_str()
        .filter(|s| !s.is_empty())
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .and_then(|gz| {
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(gz.as_slice())
                .read_to_end(&mut text)
                .ok()?;
            serde_json::from_slice::<Value>(&text).ok()
        });
    let Some(spec) = spec else {
        return "none".to_string();
    };
    let has_version = spec["kubernetesVersion"]
        .as_str()
        .is_some_and(|v| !v.is_empty());
    match (has_version, !spec["rkeConfig"].is_null()) {
        (true, true) => "none,kubernetesVersion,all",
        (true, false) => "none,kubernetesVersion",
        _ => "none",
    }
    .to_string()
}

/// `resource.Quantity.AsInt64` for the integer quantities k3s writes (`6160230`, `6077k`,
/// `5Mi`); `None` for what AsInt64 refuses.
pub(crate) fn quantity_i64(q: &str) -> Option<i64> {
    let split = q.find(|c: char| !c.is_ascii_digit()).unwrap_or(q.len());
    let (digits, suffix) = q.split_at(split);
    let number: i64 = digits.parse().ok()?;
    let factor: i64 = match suffix {
        "" => 1,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        _ => return None,
    };
    number.checked_mul(factor)
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Creates every record in its namespace, then sets the status Rancher sets through the
/// status subresource (a create drops it).
pub(crate) fn write(admin: &AdminApi, records: &[Record]) {
    for record in records {
        let namespace = record.object["metadata"]["namespace"]
            .as_str()
            .unwrap_or("fleet-default");
        let collection = format!("/apis/rke.cattle.io/v1/namespaces/{namespace}/etcdsnapshots");
        let mut created = admin.create(&collection, &record.object);
        if let Some(status) = &record.status {
            created["status"] = status.clone();
            let path = format!("{collection}/{}/status", record.name());
            admin
                .replace(&path, &created)
                .unwrap_or_else(|e| panic!("admin PUT {path}: {e:?}"));
        }
    }
}
