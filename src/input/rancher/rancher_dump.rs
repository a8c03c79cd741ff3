//! `--rancher-from-file`: the management cluster's objects from dumps (`kubectl get
//! etcdsnapshots.rke.cattle.io,… -A -o yaml`) and from the Rancher logs collector's
//! `kubectl/rancher-prov/` files, read with the downstream dumps' limits and parser.

use std::path::PathBuf;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::rancher_selection::{ManagementObjects, RANCHER_KINDS};
use crate::input::ReadError;
use crate::input::bundle;
use crate::input::dump::object_stream::{ObjectSink, Shape, read_objects};
use crate::input::limits::{BundleLimits, MAX_OBJECTS_PER_KIND};

/// How to make a management-cluster dump, for the messages that need one.
pub(crate) const RANCHER_DUMP_HINT: &str = "dump it on the management cluster with `kubectl get \
     etcdsnapshots.rke.cattle.io,clusters.provisioning.cattle.io,clusters.management.cattle.io,\
     machines.cluster.x-k8s.io,rkecontrolplanes.rke.cattle.io -A -o yaml`";

pub(crate) fn read_rancher_dump(
    paths: &[PathBuf],
    limits: BundleLimits,
) -> Result<ManagementObjects, ReadError> {
    let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let mut objects = ManagementObjects {
        source: files.join(", "),
        ..ManagementObjects::default()
    };
    let mut sink = Keep {
        objects: &mut objects,
        file: String::new(),
        kept: BTreeMap::new(),
        over_cap: None,
    };
    for source in bundle::read(paths, limits)? {
        for doc in source.documents {
            let shape = Shape {
                assume: doc.assume,
                null_strings: doc.null_strings,
            };
            sink.file.clone_from(&doc.name);
            match read_objects(&doc.text, &doc.name, shape, &mut sink) {
                Ok(()) => {}
                // The collector saves kubectl's error text where a kind is not served.
                Err(_) if doc.lenient => continue,
                Err(e) => return Err(e),
            }
            if let Some(e) = sink.over_cap.take() {
                return Err(e);
            }
            if let Some(resource) = resource_of(doc.assume) {
                sink.objects.mark_read(resource);
            }
        }
    }
    if let Some(e) = sink.over_cap.take() {
        return Err(e);
    }
    let kept: usize = sink.kept.values().sum();
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
fn mark_typed_list(objects: &mut ManagementObjects, fields: &Map<String, Value>) {
    let Some(kind) = fields
        .get("kind")
        .and_then(Value::as_str)
        .and_then(|k| k.strip_suffix("List"))
    else {
        return;
    };
    let api_version = fields.get("apiVersion").and_then(Value::as_str);
    if let Some(resource) = resource_of(api_version.map(|v| (v, kind))) {
        objects.mark_read(resource);
    }
}

/// The Rancher kind an object's fields name (`rke.cattle.io/ETCDSnapshot`), if it is one.
fn rancher_kind(fields: &Map<String, Value>) -> Option<&'static str> {
    let kind = fields.get("kind").and_then(Value::as_str)?;
    let group = fields
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.split_once('/'))
        .map_or("", |(g, _)| g);
    RANCHER_KINDS
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map(|(_, _, resource)| *resource)
}

/// The management objects of every file, each kept as its typed record at once.
struct Keep<'a> {
    objects: &'a mut ManagementObjects,
    /// The file being read, for the message when a kind passes the cap.
    file: String,
    /// Objects kept of each resource.
    kept: BTreeMap<&'static str, usize>,
    over_cap: Option<ReadError>,
}

impl ObjectSink for Keep<'_> {
    fn document(&mut self, fields: &Map<String, Value>) {
        mark_typed_list(self.objects, fields);
    }

    fn wants(&self, fields: &Map<String, Value>) -> bool {
        rancher_kind(fields).is_some()
    }

    fn object(&mut self, object: Value) {
        let Some(resource) = object.as_object().and_then(rancher_kind) else {
            return;
        };
        let kept = self.kept.entry(resource).or_default();
        if *kept >= MAX_OBJECTS_PER_KIND {
            let file = &self.file;
            self.over_cap.get_or_insert_with(|| {
                ReadError::new(format!(
                    "--rancher-from-file {file} takes the {resource} past \
                     {MAX_OBJECTS_PER_KIND}, the most k3sdoctor keeps of one kind; dump only \
                     the kinds it reads (docs/rancher.md) and pass that file"
                ))
            });
            return;
        }
        if self.objects.add(&object) {
            *kept += 1;
        }
    }
}
