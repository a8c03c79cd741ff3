//! Rancher's proxy to a downstream cluster, as a server URL shows it: reads of a cluster
//! reached through it, and of the certificates it presents, are told from its path.

/// The path under which Rancher proxies each cluster's API server.
pub(crate) const PROXY_PATH: &str = "/k8s/clusters/";

/// `https://H[/prefix]/k8s/clusters/<id>` → (`https://H[/prefix]`, id).
pub(crate) fn proxy_url(server: &str) -> Option<(String, String)> {
    let at = server.rfind(PROXY_PATH)?;
    let id = server[at + PROXY_PATH.len()..].trim_end_matches('/');
    (!id.is_empty() && !id.contains('/')).then(|| (server[..at].to_string(), id.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_rancher_proxy_urls() {
        assert_eq!(
            proxy_url("https://rancher.example.com/k8s/clusters/c-m-abcd1234"),
            Some(("https://rancher.example.com".into(), "c-m-abcd1234".into()))
        );
        assert_eq!(
            proxy_url("https://h:8443/rancher/k8s/clusters/local/"),
            Some(("https://h:8443/rancher".into(), "local".into()))
        );
        assert_eq!(proxy_url("https://10.0.0.1:6443"), None);
        assert_eq!(proxy_url("https://h/k8s/clusters/"), None);
    }
}
