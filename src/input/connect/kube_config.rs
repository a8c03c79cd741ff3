//! A kubeconfig's chosen context as a `kube::Config`, built as kube's own
//! `Config::from_custom_kubeconfig` builds it (kube-client `config/file_loader.rs`
//! `load_from_kubeconfig` and `config/mod.rs` `new_from_loader`), less its choice of proxy.
//!
//! kube reads `NO_PROXY` itself whenever a proxy is set and fails the whole kubeconfig on an
//! entry its parser does not take (`NO_PROXY=foo,`, a trailing comma), where Go's httpproxy
//! skips the entry. Our choice (`proxy.rs`) replaced kube's anyway, so
//! kube's is never asked for: `proxy_url` is left empty here and set by the caller.

use kube::config::{ExecAuthCluster, Kubeconfig, KubeconfigError};

/// The config for `context` (else the kubeconfig's current context), with kube's errors, so a
/// broken kubeconfig reads as it always did.
pub(super) fn config_without_proxy(
    kubeconfig: &Kubeconfig,
    context: Option<&str>,
) -> Result<kube::Config, KubeconfigError> {
    let context_name = context
        .or(kubeconfig.current_context.as_deref())
        .ok_or(KubeconfigError::CurrentContextNotSet)?;
    let chosen = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context_name)
        .and_then(|c| c.context.clone())
        .ok_or_else(|| KubeconfigError::LoadContext(context_name.to_string()))?;
    let cluster = kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == chosen.cluster)
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| KubeconfigError::LoadClusterOfContext(chosen.cluster.clone()))?;
    // client-go does not fail on a missing user, and neither does kube.
    let mut user = chosen
        .user
        .as_ref()
        .and_then(|name| kubeconfig.auth_infos.iter().find(|u| &u.name == name))
        .and_then(|u| u.auth_info.clone())
        .unwrap_or_default();
    // Reads the certificate authority (data or file) as kube does, with kube's error.
    let cluster_info = ExecAuthCluster::try_from(&cluster)?;
    if let Some(exec) = user.exec.as_mut().filter(|e| e.provide_cluster_info) {
        exec.cluster = Some(cluster_info.clone());
    }
    let cluster_url = cluster
        .server
        .clone()
        .ok_or(KubeconfigError::MissingClusterUrl)?
        .parse::<http::Uri>()
        .map_err(KubeconfigError::ParseClusterUrl)?;
    let mut config = kube::Config::new(cluster_url);
    config.default_namespace = chosen.namespace.unwrap_or_else(|| "default".to_string());
    config.accept_invalid_certs = cluster.insecure_skip_tls_verify.unwrap_or(false);
    config.disable_compression = cluster.disable_compression.unwrap_or(false);
    config.root_cert = cluster_info
        .certificate_authority_data
        .as_deref()
        .map(certificates)
        .transpose()?;
    config.tls_server_name = cluster.tls_server_name;
    config.auth_info = user;
    Ok(config)
}

/// The DER of every `CERTIFICATE` block in a PEM bundle, as kube's `certs` takes them.
fn certificates(pem_bundle: &[u8]) -> Result<Vec<Vec<u8>>, KubeconfigError> {
    let blocks = pem::parse_many(pem_bundle).map_err(KubeconfigError::ParseCertificates)?;
    Ok(blocks
        .into_iter()
        .filter(|block| block.tag() == "CERTIFICATE")
        .map(pem::Pem::into_contents)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(yaml: &str) -> Kubeconfig {
        Kubeconfig::from_yaml(yaml).unwrap()
    }

    const TWO_CONTEXTS: &str = "apiVersion: v1\nkind: Config\ncurrent-context: a\n\
        clusters:\n- name: ca\n  cluster: {server: 'https://10.0.0.1:6443', tls-server-name: api, \
        insecure-skip-tls-verify: true, proxy-url: 'http://p:1'}\n\
        - name: cb\n  cluster: {server: 'https://10.0.0.2:6443'}\n\
        contexts:\n- name: a\n  context: {cluster: ca, user: ua, namespace: ns}\n\
        - name: b\n  context: {cluster: cb, user: nobody}\n\
        users:\n- name: ua\n  user: {token: t}\n";

    #[test]
    fn the_chosen_context_gives_its_cluster_user_and_namespace() {
        let kc = kubeconfig(TWO_CONTEXTS);
        let a = config_without_proxy(&kc, None).unwrap();
        assert_eq!(a.cluster_url, "https://10.0.0.1:6443/");
        assert_eq!(a.default_namespace, "ns");
        assert!(a.accept_invalid_certs);
        assert_eq!(a.tls_server_name.as_deref(), Some("api"));
        assert!(a.auth_info.token.is_some());
        assert_eq!(a.proxy_url, None, "the proxy is the caller's choice");
        let b = config_without_proxy(&kc, Some("b")).unwrap();
        assert_eq!(b.cluster_url, "https://10.0.0.2:6443/");
        assert_eq!(b.default_namespace, "default");
        assert!(b.auth_info.token.is_none(), "a missing user is no user");
    }

    #[test]
    fn a_broken_kubeconfig_fails_with_kubes_own_error() {
        let kc = kubeconfig(TWO_CONTEXTS);
        let err = config_without_proxy(&kc, Some("c")).unwrap_err();
        assert!(
            matches!(err, KubeconfigError::LoadContext(ref c) if c == "c"),
            "{err}"
        );
        let bad_ca = TWO_CONTEXTS.replace(
            "server: 'https://10.0.0.2:6443'",
            "server: 'https://10.0.0.2:6443', certificate-authority-data: '!!'",
        );
        let err = config_without_proxy(&kubeconfig(&bad_ca), Some("b")).unwrap_err();
        assert!(
            matches!(err, KubeconfigError::LoadCertificateAuthority(_)),
            "{err}"
        );
    }
}
