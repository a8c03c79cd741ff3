//! The repository's Kubernetes and Prometheus YAML files, read as JSON values.

use serde::Deserialize;
use serde_json::Value;

use super::harness::repo_path;

/// Every document of the multi-document YAML file at `rel` (relative to the repository).
pub(crate) fn yaml_documents(rel: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(repo_path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).unwrap_or_else(|e| panic!("{rel}: {e}")))
        .collect()
}
