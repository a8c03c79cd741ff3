//! Support bundles and dumps as one input: whatever `--from-file` names (an archive, a
//! folder, a file, standard input) is opened by its content ([`archive`]), held as an
//! in-memory [`tree::Tree`], told apart by layout ([`layout`]) and turned into the
//! documents and objects `dump` builds the cluster state from, with what the bundle lacks
//! and where it came from ([`provenance`]).

mod archive;
mod configmap_table;
mod container;
mod dump_manifest;
mod holder_table;
mod layout;
mod memberlist;
pub(crate) mod metrics_files;
mod node_table;
mod pasted_table;
mod rancher_collector;
mod snapshot_ls_table;
mod snapshot_table;
mod support_bundle_kit;
mod tar_stream;
mod tree;
mod troubleshoot;
mod zip_directory;

use std::path::PathBuf;

use serde_json::Value;

use self::archive::Opener;
use self::metrics_files::{MetricsFile, metrics_file};
use self::tree::{Tree, is_log, wanted};
use super::ReadError;
use crate::input::files::bounded_read::{self, BoundedReadError, DUMP_FILE_LIMIT};
use crate::input::files::dump_files::{self, Input};
use crate::input::limits::{Budget, BundleLimits};
use crate::input::metrics::scrape_reader::MOST_METRICS_BYTES;
use crate::model::bundle_provenance::{BundleSource, Collector, NotCollected, feeds};
use crate::model::configmap_listing::ConfigMapListing;
use crate::model::source_gap::SourceGap;

/// Text to parse as API objects.
#[derive(Debug)]
pub(crate) struct Document {
    /// For messages: the file, or `bundle.tar.gz:path/inside`.
    pub name: String,
    /// Inside the bundle, for its provenance.
    pub path: String,
    pub text: String,
    /// (apiVersion, kind) its objects have when they do not say.
    pub assume: Option<(&'static str, &'static str)>,
    /// support-bundle-kit's `"null"` for every empty value.
    pub null_strings: bool,
    /// Files that happen to sit in an archive beside a bundle: unparsable ones are noted,
    /// not fatal.
    pub lenient: bool,
}

/// An object the bundle shows only as a table row, made into the API object it stands for.
#[derive(Debug)]
pub(crate) struct Built {
    pub path: String,
    pub name: String,
    pub value: Value,
}

/// What one input gives the cluster state.
#[derive(Debug, Default)]
pub(crate) struct Source {
    pub documents: Vec<Document>,
    pub built: Vec<Built>,
    /// Kinds the collector listed completely: read, even when no object of them is there.
    pub complete: Vec<&'static str>,
    pub gaps: Vec<SourceGap>,
    /// The file Leases came from when it names holders only (no renew times).
    pub holders_only: Option<String>,
    /// The file Nodes came from when it is a `kubectl get nodes` table: names, roles,
    /// readiness and versions only (no annotations, finalizers or heartbeats).
    pub nodes_from_table: Option<String>,
    /// The file ETCDSnapshotFiles came from when it is a `kubectl get etcdsnapshotfiles` table.
    pub snapshots_from_table: Option<String>,
    /// That table may list only what one server sees (`etcd-snapshot ls`), so a ConfigMap entry
    /// without a row is not shown to be orphaned.
    pub snapshots_partial: bool,
    /// What a pasted `kubectl get configmaps` table shows: entry counts, not entries.
    pub configmap_listing: Option<ConfigMapListing>,
    /// The bundle's CRD list has no ETCDSnapshotFile CRD (a cluster from before it).
    pub snapshot_crd_missing: bool,
    pub notes: Vec<String>,
    /// `None` for a plain dump.
    pub provenance: Option<BundleSource>,
    /// The servers' `/metrics` answers the dump holds.
    pub metrics: Vec<MetricsFile>,
}

impl Source {
    fn bundle(tree: &Tree, collector: Collector, root: &str) -> Source {
        let folder = root
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .or_else(|| tree.folder_name.clone());
        let time = folder.as_deref().and_then(layout::collection_time);
        Source {
            provenance: Some(BundleSource {
                path: tree.name.clone(),
                collector,
                container: tree.container.clone(),
                collected_at: time.as_ref().map(|(t, _)| *t),
                collected_at_from: time.map(|(_, from)| from),
                files: Vec::new(),
                not_collected: Vec::new(),
            }),
            ..Source::default()
        }
    }

    /// The first of `candidates` (paths under `root`) the tree holds, as a document of `kind`;
    /// `false` when none is there.
    fn take(
        &mut self,
        tree: &Tree,
        root: &str,
        candidates: &[String],
        assume: (&'static str, &'static str),
        null_strings: bool,
    ) -> bool {
        for rel in candidates {
            let path = format!("{root}{rel}");
            if let Some(text) = self.text(tree, &path) {
                self.documents.push(Document {
                    name: format!("{}:{path}", tree.name),
                    path,
                    text,
                    assume: Some(assume),
                    null_strings,
                    lenient: false,
                });
                self.complete.push(assume.1);
                return true;
            }
        }
        false
    }

    /// The file at `path` (under no root) as a document of `assume`, without saying the kind
    /// was listed completely: system-upgrade-controller's Jobs and ConfigMap in its Plans'
    /// namespaces, beside a kind's own files. Whether it was there.
    fn add_beside(
        &mut self,
        tree: &Tree,
        path: &str,
        assume: (&'static str, &'static str),
        null_strings: bool,
    ) -> bool {
        let Some(text) = self.text(tree, path) else {
            return false;
        };
        self.documents.push(Document {
            name: format!("{}:{path}", tree.name),
            path: path.to_string(),
            text,
            assume: Some(assume),
            null_strings,
            lenient: false,
        });
        true
    }

    /// The file at `path` as text; a file that is not UTF-8 is noted and skipped.
    fn text(&mut self, tree: &Tree, path: &str) -> Option<String> {
        let bytes = tree.files.get(path)?;
        match String::from_utf8(bytes.to_vec()) {
            Ok(text) => Some(text),
            Err(_) => {
                self.notes.push(format!(
                    "skipped {path} in {}: it is not UTF-8 text",
                    tree.name
                ));
                None
            }
        }
    }

    /// `kind` is not in the bundle: the checks it feeds say so, naming `file`.
    fn gap(&mut self, kind: &'static str, file: &str, reason: &str, fix: &str) {
        self.gap_as(kind, file, reason, fix, format!("{file} ({reason})"));
    }

    /// [`Self::gap`], with the words the findings use (`the bundle has no {missing}`).
    fn gap_as(&mut self, kind: &'static str, file: &str, reason: &str, fix: &str, missing: String) {
        self.gaps.push(SourceGap {
            kind,
            missing,
            fix: fix.to_string(),
        });
        if let Some(p) = &mut self.provenance {
            p.not_collected.push(NotCollected {
                kind: kind.to_string(),
                file: file.to_string(),
                reason: reason.to_string(),
                feeds: feeds(kind),
            });
        }
    }
}

/// Every input of `--from-file`, each made a [`Source`]; an archive inside one is a source of
/// its own.
pub(crate) fn read(paths: &[PathBuf], limits: BundleLimits) -> Result<Vec<Source>, ReadError> {
    let budget = Budget::new(limits);
    let mut opener = Opener::new(&budget);
    let mut trees = Vec::new();
    for input in dump_files::collect(paths, &budget)? {
        match input {
            Input::Stdin => {
                let bytes = bounded_read::read_stdin_bytes(DUMP_FILE_LIMIT)
                    .map_err(|e| unreadable("-", &e))?;
                if !opener.bytes("-", bytes.clone())? {
                    trees.push(single("-", bytes));
                }
            }
            Input::File(path) => {
                let name = path.display().to_string();
                let head =
                    bounded_read::read_head(&path, 512).map_err(|e| unreadable(&name, &e))?;
                if !opener.file(&path, &head)? {
                    let bytes = bounded_read::read_bytes(&path, DUMP_FILE_LIMIT)
                        .map_err(|e| unreadable(&name, &e))?;
                    trees.push(single(&name, bytes));
                }
            }
            Input::Dir { root, files, notes } => {
                let mut tree = Tree::new(&root.display().to_string(), "folder");
                tree.notes = notes;
                tree.folder_name = root
                    .canonicalize()
                    .ok()
                    .and_then(|p| Some(p.file_name()?.to_string_lossy().into_owned()));
                for file in files {
                    let rel = file
                        .strip_prefix(&root)
                        .unwrap_or(&file)
                        .to_string_lossy()
                        .into_owned();
                    if metrics_file(&rel).is_some() {
                        // Past the cap the reader refuses it, for that server alone.
                        let bytes = bounded_read::read_head(&file, MOST_METRICS_BYTES as u64 + 1)
                            .map_err(|e| unreadable(&file.display().to_string(), &e))?;
                        tree.insert(&rel, bytes);
                    } else if wanted(&rel) {
                        let bytes = bounded_read::read_bytes(&file, DUMP_FILE_LIMIT)
                            .map_err(|e| unreadable(&file.display().to_string(), &e))?;
                        tree.insert(&rel, bytes);
                    } else if !is_log(&rel) {
                        opener.nested_file(&mut tree, &file, &rel)?;
                    }
                }
                trees.push(tree);
            }
        }
        trees.append(&mut opener.trees);
    }
    trees.into_iter().map(read_tree).collect()
}

fn single(name: &str, bytes: Vec<u8>) -> Tree {
    let mut tree = Tree::new(name, "file");
    tree.single = true;
    tree.insert(name, bytes);
    tree
}

/// The source a tree gives, by its layout.
fn read_tree(tree: Tree) -> Result<Source, ReadError> {
    let mut source = match layout::detect(&tree) {
        Some(found) => {
            let mut source = Source::bundle(&tree, found.collector, &found.root);
            match found.collector {
                Collector::Troubleshoot => troubleshoot::read(&tree, &found.root, &mut source),
                Collector::SupportBundleKit => {
                    support_bundle_kit::read(&tree, &found.root, &mut source)
                }
                Collector::RancherLogs | Collector::Supportconfig => {
                    let distro = found.distro_folder.as_deref().unwrap_or("k3s");
                    rancher_collector::read(&tree, &found.root, distro, &mut source)
                }
            }
            source
        }
        None => plain(&tree)?,
    };
    source.notes.splice(0..0, tree.notes);
    Ok(source)
}

/// No collector's layout: every YAML/JSON file is a dump (a folder of `kubectl get` output),
/// and a file given alone may also be a kubectl table someone pasted ([`pasted_table`]).
fn plain(tree: &Tree) -> Result<Source, ReadError> {
    let mut source = Source::default();
    let in_archive = !matches!(tree.container.as_str(), "folder" | "file");
    for (path, bytes) in &tree.files {
        let name = if tree.container == "folder" {
            format!("{}/{path}", tree.name.trim_end_matches('/'))
        } else if tree.single {
            tree.name.clone()
        } else {
            format!("{}:{path}", tree.name)
        };
        if let (false, Some((role, node))) = (tree.single, metrics_file(path)) {
            source.metrics.push(MetricsFile {
                role,
                node,
                name,
                bytes: bytes.to_vec(),
            });
            continue;
        }
        if !tree.single && !has_dump_extension(path) {
            continue;
        }
        if let Some(manifest) = dump_manifest::read(path, bytes) {
            dump_manifest::add(manifest, &name, &mut source);
            continue;
        }
        let text = match String::from_utf8(bytes.to_vec()) {
            Ok(text) => text,
            Err(_) if in_archive => {
                source
                    .notes
                    .push(format!("skipped {name}: it is not UTF-8 text"));
                continue;
            }
            Err(_) => return Err(unreadable(&name, &BoundedReadError::NotUtf8)),
        };
        if let Some(pasted) = pasted_table::detect(&text) {
            pasted_table::add_all(pasted, &name, path, &mut source);
            continue;
        }
        source.documents.push(Document {
            name,
            path: path.clone(),
            text,
            assume: None,
            null_strings: false,
            lenient: in_archive,
        });
    }
    Ok(source)
}

fn has_dump_extension(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(_, ext)| {
        matches!(ext.to_ascii_lowercase().as_str(), "yaml" | "yml" | "json")
    })
}

/// One line for an input file that could not be read, with what to do about it.
pub(crate) fn unreadable(file: &str, e: &BoundedReadError) -> ReadError {
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
        "dump file {file} {problem}; {what_to_do} ({})",
        crate::input::files::DUMP_HINT
    ))
}
