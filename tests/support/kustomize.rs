//! The objects a kustomization under `deploy/` builds, without kustomize: its `resources`
//! (files, and directories holding a kustomization) and `components`, in order. deploy/ uses
//! nothing else (no patches, generators or `images:`), and this refuses any other field, so a
//! kustomization that starts using one fails here until the tests learn it. Where kubectl is
//! installed, `tests/cli/deploy_kustomize.rs` checks that kustomize builds the same objects.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::harness::repo_path;
use super::manifests::yaml_documents;

/// The fields a kustomization under deploy/ may have.
const KNOWN_FIELDS: [&str; 4] = ["apiVersion", "kind", "resources", "components"];

/// The objects `kubectl kustomize <dir>` builds, `dir` relative to the repository.
pub(crate) fn build(dir: &str) -> Vec<Value> {
    let mut objects = Vec::new();
    add(&normalize(Path::new(dir)), &mut objects);
    objects
}

/// Every file a kustomization directory reads, itself included (relative to the repository).
pub(crate) fn files(dir: &str) -> Vec<PathBuf> {
    let mut read = Vec::new();
    walk(&normalize(Path::new(dir)), &mut |file| {
        read.push(file.to_path_buf())
    });
    read
}

fn add(dir: &Path, objects: &mut Vec<Value>) {
    walk(dir, &mut |file| {
        if file.file_name().is_some_and(|n| n != "kustomization.yaml") {
            objects.extend(yaml_documents(file.to_str().unwrap()));
        }
    });
}

fn walk(dir: &Path, visit: &mut dyn FnMut(&Path)) {
    let file = dir.join("kustomization.yaml");
    let rel = file.to_str().unwrap();
    assert!(repo_path(rel).is_file(), "{rel} does not exist");
    visit(&file);
    let docs = yaml_documents(rel);
    assert_eq!(docs.len(), 1, "{rel}");
    let kustomization = &docs[0];
    for field in kustomization.as_object().expect("a mapping").keys() {
        assert!(
            KNOWN_FIELDS.contains(&field.as_str()),
            "{rel}: `{field}` is not built by tests/support/kustomize.rs; teach it"
        );
    }
    for list in ["resources", "components"] {
        for entry in kustomization[list].as_array().into_iter().flatten() {
            let entry = entry.as_str().unwrap_or_else(|| panic!("{rel}: {entry}"));
            let target = normalize(&dir.join(entry));
            let path = repo_path(target.to_str().unwrap());
            if path.is_dir() {
                walk(&target, visit);
            } else {
                assert!(
                    list == "resources" && path.is_file(),
                    "{rel}: {list} entry {entry} does not exist"
                );
                visit(&target);
            }
        }
    }
}

/// `a/b/../c` as `a/c`: kustomize's paths are relative to their kustomization.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => assert!(out.pop(), "{} leaves the repository", path.display()),
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
