//! A dump's server metrics: `metrics/apiserver/<node>.txt` and `metrics/etcd/<node>.txt`,
//! each exactly what `GET /metrics` answered, as `k3sdoctor dump` writes them and as a
//! hand-made dump names them (`kubectl get --raw /metrics --server https://<ip>:6443 >
//! metrics/apiserver/<node>.txt`). The folder may sit anywhere in the dump.

/// Which server's which metrics a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MetricsRole {
    Apiserver,
    Etcd,
}

/// One metrics file, read up to the cap (the reader refuses what is past it).
#[derive(Debug)]
pub(crate) struct MetricsFile {
    pub role: MetricsRole,
    pub node: String,
    /// For messages: the file, or `dump.tar.gz:path/inside`.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// `(role, node)` when `path` is a metrics file of a dump.
pub(super) fn metrics_file(path: &str) -> Option<(MetricsRole, String)> {
    let mut parts = path.rsplit('/');
    let file = parts.next()?;
    let role = match parts.next()? {
        "apiserver" => MetricsRole::Apiserver,
        "etcd" => MetricsRole::Etcd,
        _ => return None,
    };
    if parts.next()? != "metrics" {
        return None;
    }
    let node = file.strip_suffix(".txt")?;
    (!node.is_empty()).then(|| (role, node.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_files_are_named_by_role_and_node() {
        assert_eq!(
            metrics_file("metrics/apiserver/s1.txt"),
            Some((MetricsRole::Apiserver, "s1".into()))
        );
        assert_eq!(
            metrics_file("dump-2026/metrics/etcd/ip-10-0-0-1.txt"),
            Some((MetricsRole::Etcd, "ip-10-0-0-1".into()))
        );
        for other in [
            "metrics/apiserver/.txt",
            "metrics/kubelet/s1.txt",
            "apiserver/s1.txt",
            "metrics/apiserver/s1.json",
            "x/metrics/apiserver/s1.txt/y",
        ] {
            assert_eq!(metrics_file(other), None, "{other}");
        }
    }
}
