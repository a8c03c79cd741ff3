//! Reading `--from-file` input into the cluster state: dumps (what `kubectl get ... -o
//! yaml|json` prints) and support bundles, both opened by [`super::bundle`] into documents;
//! here their objects are kept (newest copy of each), typed, and what the input lacked or
//! showed only in part is recorded for the checks.

pub(crate) mod dump_coverage;
mod dump_fill;
mod dump_metrics;
pub(crate) mod dump_parse;
mod dump_time;
mod json_spans;
pub(crate) mod object_stream;
mod yaml_depth;
mod yaml_split;

use std::collections::BTreeMap;
use std::path::PathBuf;

use jiff::Timestamp;
use serde_json::Value;

use serde_json::Map;

use self::dump_fill::{add_object, collected_empty, mark_not_in_dump};
use self::dump_parse::{drop_secret_data, fields_key, is_relevant, object_key};
use self::dump_time::{heartbeat_ahead, newest_heartbeat, newest_timestamp};
use self::object_stream::{ObjectSink, Shape, read_objects};
use super::bundle::{self, Source};
use super::{ClusterState, Origin, ReadError};
use crate::input::limits::{BundleLimits, MAX_OBJECTS_PER_KIND};
use crate::model::bundle_provenance::{FileRead, feeds};
use crate::model::kinds::Kind;

/// One API object found in a dump, with where it came from.
struct Found {
    value: Value,
    file: String,
    /// Made from a kubectl table row: holds only what the table shows.
    from_table: bool,
}

/// Everything read so far, over all inputs.
#[derive(Default)]
struct Collected {
    objects: BTreeMap<(String, String, String), Found>,
    notes: Vec<String>,
    ignored: usize,
    newest: Option<(Timestamp, String)>,
    heartbeat: Option<(Timestamp, String)>,
    /// Objects kept of each kind.
    kept: BTreeMap<String, usize>,
    /// The cap on one kind's objects was reached: what to say.
    over_cap: Option<ReadError>,
    /// Kinds seen though none of their objects was kept (Events about Pods): the kind was
    /// dumped, so what needs it is read, and empty.
    dumped: Vec<&'static str>,
}

impl Collected {
    /// Keeps `object` if k3sdoctor uses it; returns its kind then.
    fn add(&mut self, object: Value, file: &str, from_table: bool) -> Option<String> {
        let Some(key) = object_key(&object).filter(is_relevant) else {
            self.ignored += 1;
            return None;
        };
        // `kubectl get events -A` holds every object's Events; only those about Nodes are
        // used, so only they are kept, and counted against the cap.
        if key.0 == "Event" && !about_a_node(&object) {
            self.ignored += 1;
            if !self.dumped.contains(&"Event") {
                self.dumped.push("Event");
            }
            return None;
        }
        // `kubectl get jobs -A` holds every Job; beyond kube-system only
        // system-upgrade-controller's are used.
        if key.0 == Kind::Job.name()
            && key.1 != Kind::Job.row().namespace()
            && object
                .pointer("/metadata/labels/upgrade.cattle.io~1plan")
                .is_none()
        {
            self.ignored += 1;
            return None;
        }
        if !self.objects.contains_key(&key) {
            let kept = self.kept.entry(key.0.clone()).or_default();
            if *kept >= MAX_OBJECTS_PER_KIND {
                self.over_cap.get_or_insert_with(|| over_cap(file, &key.0));
                return None;
            }
            *kept += 1;
        }
        if key.0 == Kind::Node.name()
            && let Some(beat) = newest_heartbeat(&object)
            && self.heartbeat.as_ref().is_none_or(|(t, _)| beat > *t)
        {
            self.heartbeat = Some((beat, key.2.clone()));
        }
        if let Some((time, field)) = newest_timestamp(&object)
            && self.newest.as_ref().is_none_or(|(t, _)| time > *t)
        {
            self.newest = Some((time, format!("{} {field}", shown_name(&key))));
        }
        let kind = key.0.clone();
        let found = Found {
            value: object,
            file: file.to_string(),
            from_table,
        };
        keep_newer(&mut self.objects, key, found, &mut self.notes);
        Some(kind)
    }
}

/// Whether a core/v1 (`involvedObject`) or events.k8s.io/v1 (`regarding`) Event is about a
/// Node.
fn about_a_node(event: &Value) -> bool {
    ["/involvedObject/kind", "/regarding/kind"]
        .iter()
        .any(|at| event.pointer(at).and_then(Value::as_str) == Some(Kind::Node.name()))
}

pub(crate) fn read_dump(
    paths: &[PathBuf],
    limits: BundleLimits,
) -> Result<ClusterState, ReadError> {
    let sources = bundle::read(paths, limits)?;
    let mut collected = Collected::default();
    let mut state = ClusterState {
        origin: Origin::Dump {
            paths: paths.to_vec(),
        },
        ..ClusterState::default()
    };
    let mut complete = Vec::new();
    let mut metrics = Vec::new();
    for mut source in sources {
        metrics.append(&mut source.metrics);
        read_source(source, &mut collected, &mut state, &mut complete)?;
    }
    state.server_metrics = dump_metrics::server_metrics(metrics);
    // A table's holders beside a real dump of the same Leases: the objects won, so the
    // freshness of every lock kept was judged after all.
    let leases = || {
        collected
            .objects
            .iter()
            .filter(|((k, _, _), _)| k == Kind::Lease.name())
    };
    if leases().next().is_some() && !leases().any(|(_, found)| found.from_table) {
        state.holders_only = None;
    }
    // Nodes from a dump beside a nodes table win over its rows.
    let nodes = || {
        collected
            .objects
            .iter()
            .filter(|((k, _, _), _)| k == Kind::Node.name())
    };
    if nodes().next().is_some() && !nodes().any(|(_, found)| found.from_table) {
        state.nodes_from_table = None;
    }
    // The same for ETCDSnapshotFiles: the table counts only while one of its rows is kept.
    let snapshots = || {
        collected
            .objects
            .iter()
            .filter(|((k, _, _), _)| k == Kind::SnapshotFile.name())
    };
    if !snapshots().any(|(_, found)| found.from_table) {
        state.snapshots_from_table = None;
        state.snapshots_partial = false;
    }
    let Collected {
        objects,
        mut notes,
        ignored,
        newest,
        heartbeat,
        dumped,
        ..
    } = collected;
    // A bundle's `now` is its collection time, not the newest time inside.
    if state.collected_at().is_none() {
        notes.extend(heartbeat_ahead(heartbeat.as_ref(), newest.as_ref()));
    }
    if ignored > 0 {
        notes.push(format!(
            "{ignored} object(s) in the dump are not used by k3sdoctor and were skipped"
        ));
    }
    state.newest_timestamp = newest.as_ref().map(|(t, _)| *t);
    state.newest_timestamp_from = newest.map(|(_, from)| from);
    state.notes.append(&mut notes);
    for ((kind, _, _), found) in &objects {
        add_object(&mut state, kind, found)?;
    }
    for kind in complete.into_iter().chain(dumped) {
        collected_empty(&mut state, kind);
    }
    mark_not_in_dump(&mut state);
    Ok(state)
}

/// One input's documents and objects into `collected`; its gaps and provenance into `state`.
fn read_source(
    source: Source,
    collected: &mut Collected,
    state: &mut ClusterState,
    complete: &mut Vec<&'static str>,
) -> Result<(), ReadError> {
    let Source {
        documents,
        built,
        complete: listed,
        gaps,
        holders_only,
        nodes_from_table,
        snapshots_from_table,
        snapshots_partial,
        configmap_listing,
        snapshot_crd_missing,
        notes,
        mut provenance,
        metrics: _,
    } = source;
    state.snapshot_crd_missing |= snapshot_crd_missing;
    state.notes.extend(notes);
    let mut files: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for doc in documents {
        let shape = Shape {
            assume: doc.assume,
            null_strings: doc.null_strings,
        };
        let mut sink = Keep {
            collected: &mut *collected,
            used: BTreeMap::new(),
            file: &doc.name,
        };
        match read_objects(&doc.text, &doc.name, shape, &mut sink) {
            Ok(()) => {}
            Err(e) if doc.lenient => {
                state
                    .notes
                    .push(format!("skipped {}: {}", doc.name, e.message));
                continue;
            }
            Err(e) => return Err(e),
        }
        let used = sink.used;
        if let Some(e) = collected.over_cap.take() {
            return Err(e);
        }
        let counts = files.entry(doc.path.clone()).or_default();
        for (kind, n) in used {
            *counts.entry(kind).or_default() += n;
        }
    }
    for object in built {
        if let Some(kind) = collected.add(object.value, &object.name, true) {
            *files
                .entry(object.path)
                .or_default()
                .entry(kind)
                .or_default() += 1;
        }
    }
    if let Some(e) = collected.over_cap.take() {
        return Err(e);
    }
    complete.extend(listed);
    state.gaps.extend(gaps);
    if holders_only.is_some() {
        state.holders_only = holders_only;
    }
    if nodes_from_table.is_some() {
        state.nodes_from_table = nodes_from_table;
    }
    if snapshots_from_table.is_some() {
        state.snapshots_from_table = snapshots_from_table;
    }
    state.snapshots_partial |= snapshots_partial;
    if let Some(listing) = configmap_listing {
        state
            .configmap_listing
            .get_or_insert_with(Default::default)
            .merge(listing);
    }
    if let Some(p) = &mut provenance {
        p.files = file_reads(files);
    }
    state.bundles.extend(provenance);
    Ok(())
}

/// What each file of a bundle gave, by kind, and the checks those kinds feed.
fn file_reads(files: BTreeMap<String, BTreeMap<String, usize>>) -> Vec<FileRead> {
    files
        .into_iter()
        .map(|(path, objects)| {
            let mut checks: Vec<&'static str> = objects.keys().flat_map(|k| feeds(k)).collect();
            checks.sort_unstable();
            checks.dedup();
            FileRead {
                path,
                objects,
                feeds: checks,
            }
        })
        .collect()
}

/// The objects of one file on their way into [`Collected`], counted by kind for its provenance.
struct Keep<'a> {
    collected: &'a mut Collected,
    used: BTreeMap<String, usize>,
    file: &'a str,
}

impl ObjectSink for Keep<'_> {
    fn wants(&self, fields: &Map<String, Value>) -> bool {
        fields_key(fields).filter(is_relevant).is_some()
    }

    fn object(&mut self, mut object: Value) {
        drop_secret_data(&mut object);
        if let Some(kind) = self.collected.add(object, self.file, false) {
            *self.used.entry(kind).or_default() += 1;
        }
    }
}

/// The one line for a dump with more objects of one kind than are kept.
fn over_cap(file: &str, kind: &str) -> ReadError {
    ReadError::new(format!(
        "dump file {file} takes the {kind} objects past {MAX_OBJECTS_PER_KIND}, the most \
         k3sdoctor keeps of one kind; dump only what it reads (one namespace, the kinds in \
         docs/dumps.md) and pass that file with --from-file"
    ))
}

/// The same object in two files (dumps pasted together): the newer resourceVersion wins, and
/// an object over a table row of it (which has no resourceVersion).
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
    let replace = new_rv > old_rv || (existing.from_table && !found.from_table);
    let (kept, kept_rv) = if replace {
        (&found.file, new_rv)
    } else {
        (&existing.file, old_rv)
    };
    notes.push(format!(
        "{shown} appears more than once in the dump; kept resourceVersion {kept_rv} from {}",
        kept
    ));
    if replace {
        objects.insert(key, found);
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
mod tests;
