//! `--rancher-from-file`: the management cluster's objects from dumps (`kubectl get
//! etcdsnapshots.rke.cattle.io,… -A -o yaml`) and from the Rancher logs collector's
//! `kubectl/rancher-prov/` files, read with the downstream dumps' limits and parser.

use std::path::PathBuf;

use serde_json::Value;

use super::rancher_selection::{ManagementObjects, RANCHER_KINDS};
use crate::input::ReadError;
use crate::input::bundle::{self, limits::BundleLimits};
use crate::input::dump::dump_parse::{assume_kind, drop_null_strings, flatten, parse_documents};

/// How to make a management-cluster dump, for the messages that need one.
pub const RANCHER_DUMP_HINT: &str = "dump it on the management cluster with `kubectl get \
     etcdsnapshots.rke.cattle.io,clusters.provisioning.cattle.io,clusters.management.cattle.io,\
     machines.cluster.x-k8s.io,rkecontrolplanes.rke.cattle.io -A -o yaml`";

pub fn read_rancher_dump(
    paths: &[PathBuf],
    limits: BundleLimits,
) -> Result<ManagementObjects, ReadError> {
    let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let mut objects = ManagementObjects {
        source: files.join(", "),
        ..ManagementObjects::default()
    };
    let mut kept = 0;
    for source in bundle::read(paths, limits)? {
        for doc in source.documents {
            let values = match parse_documents(&doc.text, &doc.name) {
                Ok(values) => values,
                // The collector saves kubectl's error text where a kind is not served.
                Err(_) if doc.lenient => continue,
                Err(e) => return Err(e),
            };
            if let Some(resource) = resource_of(doc.assume) {
                objects.mark_read(resource);
            }
            for mut value in values {
                if doc.null_strings {
                    drop_null_strings(&mut value);
                }
                mark_typed_list(&mut objects, &value);
                if let Some((api_version, kind)) = doc.assume {
                    assume_kind(&mut value, api_version, kind);
                }
                for object in flatten(value) {
                    kept += usize::from(objects.add(&object));
                }
            }
        }
    }
    if kept == 0 && objects.records.is_none() {
        return Err(ReadError::new(format!(
            "--rancher-from-file {} holds no Rancher object (ETCDSnapshot, provisioning or \
             management Cluster, Machine, RKEControlPlane, Feature, Setting); {RANCHER_DUMP_HINT}",
            objects.source
        )));
    }
    Ok(objects)
}

/// The resource a collector file stands for, from the kind it is read as.
fn resource_of(assume: Option<(&str, &str)>) -> Option<&'static str> {
    let (api_version, kind) = assume?;
    let group = api_version.split_once('/').map_or(api_version, |(g, _)| g);
    RANCHER_KINDS
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map(|(_, _, resource)| *resource)
}

/// An API list (`ETCDSnapshotList`) says its kind even when empty: that kind was read.
fn mark_typed_list(objects: &mut ManagementObjects, value: &Value) {
    let Some(kind) = value
        .get("kind")
        .and_then(Value::as_str)
        .and_then(|k| k.strip_suffix("List"))
    else {
        return;
    };
    let api_version = value.get("apiVersion").and_then(Value::as_str);
    if let Some(resource) = resource_of(api_version.map(|v| (v, kind))) {
        objects.mark_read(resource);
    }
}
