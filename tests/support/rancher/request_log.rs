//! What the Rancher proxy records of each request, and how it reads a request's path.

/// One request as the proxy saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RequestRecord {
    /// The `<id>` of `/k8s/clusters/<id>/…` (empty when the path named none).
    pub cluster: String,
    pub method: String,
    /// The path under the cluster prefix, with its query: what the apiserver was asked.
    pub path: String,
    pub watch: bool,
    /// The status sent (0 until the response head went out).
    pub status: u16,
}

impl RequestRecord {
    /// `get`, `list`, `watch`, or the lower-cased method of anything else (`post`, `patch`…),
    /// judged from the path as the apiserver's request info does for resource paths.
    pub(crate) fn verb(&self) -> String {
        let method = self.method.to_ascii_lowercase();
        if method != "get" {
            return method;
        }
        if self.watch {
            return "watch".to_string();
        }
        let path = self.path.split('?').next().unwrap_or_default();
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let rest = match segments.as_slice() {
            ["api", _version, rest @ ..] => rest,
            ["apis", _group, _version, rest @ ..] => rest,
            _ => return "get".to_string(),
        };
        let rest = match rest {
            ["namespaces", _ns, inner @ ..] if !inner.is_empty() => inner,
            other => other,
        };
        if rest.len() == 1 { "list" } else { "get" }.to_string()
    }
}

/// `/k8s/clusters/<id>/<rest>` → (`<id>`, `/<rest>`); anything else → ("", path).
pub(super) fn split_cluster(path: &str) -> (String, String) {
    let Some(tail) = path.strip_prefix("/k8s/clusters/") else {
        return (String::new(), path.to_string());
    };
    match tail.split_once('/') {
        Some((id, rest)) => (id.to_string(), format!("/{rest}")),
        None => (tail.to_string(), "/".to_string()),
    }
}

pub(super) fn is_watch(path: &str, query: &str) -> bool {
    let segments: Vec<&str> = path.split('/').collect();
    let watch_path = matches!(segments.as_slice(), ["", "api", _, "watch", ..])
        || matches!(segments.as_slice(), ["", "apis", _, _, "watch", ..]);
    watch_path
        || query
            .trim_start_matches('?')
            .split('&')
            .any(|p| p == "watch=true" || p == "watch=1")
}
