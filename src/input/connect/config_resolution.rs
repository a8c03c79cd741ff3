//! The kubeconfig a single-cluster run uses, in kubectl's order: a file (`kubeconfig_files`),
//! else `--server` alone, else the in-cluster service account; only when all of these find
//! nothing, the admin kubeconfig a k3s or RKE2 server writes for itself (as `k3s kubectl` and
//! `k3s etcd-snapshot ls` do), and then the connection says which file it used, so it never
//! acts with root's rights unannounced.

use kube::config::Kubeconfig;

use crate::distro::Distro;
use crate::input::ReadError;
use crate::input::read_error::cause_chain;

use super::kubeconfig_files::{find_kubeconfig, server_kubeconfig};
use super::{ConnectOptions, check_context, config_for, context_user, with_proxy};

/// A kubeconfig as resolved: the config, the context chosen, the notice about the server's own
/// file, and the user it acts as (`context_user`).
pub(super) type LoadedConfig = (kube::Config, Option<String>, Option<String>, Option<String>);

pub(super) async fn load_config(opts: &ConnectOptions) -> Result<LoadedConfig, ReadError> {
    let (mut kubeconfig, origin, notice) = match find_kubeconfig(opts.kubeconfig.as_deref())? {
        Some((kubeconfig, origin)) => (kubeconfig, origin, None),
        // kubectl --server URL --token T needs no file at all.
        None if opts.overrides.stands_alone() => {
            (Kubeconfig::default(), "(none: --server)".to_string(), None)
        }
        // kubectl's order ends with the Pod's service account (not with --context, which
        // names a kubeconfig context); the server's own file comes after all of it.
        None => {
            let in_cluster_error = match &opts.context {
                Some(_) => None,
                None => match kube::Config::incluster() {
                    Ok(config) => return in_cluster(config, opts),
                    Err(e) => Some(e),
                },
            };
            server_file(in_cluster_error)?
        }
    };
    if let Some(wanted) = &opts.context {
        check_context(&kubeconfig, wanted, &origin)?;
    }
    let chosen = opts
        .overrides
        .apply(&mut kubeconfig, opts.context.as_deref(), &origin)?;
    let context = opts.context.clone().or_else(|| chosen.clone());
    let user = context_user(&kubeconfig, chosen.as_deref());
    config_for(&kubeconfig, &origin, chosen.as_deref()).map(|c| (c, context, notice, user))
}

/// The server's own kubeconfig, when nothing else was found: where it was and the notice
/// that says so.
fn server_file(
    in_cluster_error: Option<kube::config::InClusterError>,
) -> Result<(Kubeconfig, String, Option<String>), ReadError> {
    match server_kubeconfig()? {
        Some((kubeconfig, path)) => {
            let notice = format!(
                "using {path}: no --kubeconfig, KUBECONFIG or ~/.kube/config, and not in a Pod"
            );
            Ok((kubeconfig, path, Some(notice)))
        }
        None => Err(match in_cluster_error {
            None => no_config("--context needs a kubeconfig"),
            Some(e) => no_config("not running in a cluster either").with_detail(cause_chain(&e)),
        }),
    }
}

/// The Pod's service account, with the connection flags kubectl honours there.
fn in_cluster(mut config: kube::Config, opts: &ConnectOptions) -> Result<LoadedConfig, ReadError> {
    let o = &opts.overrides;
    if let Some(token) = &o.token {
        config.auth_info.token = Some(token.clone().into());
        config.auth_info.token_file = None;
    }
    if o.impersonate.is_some() {
        config.auth_info.impersonate = o.impersonate.clone();
        config.auth_info.impersonate_groups =
            (!o.impersonate_groups.is_empty()).then(|| o.impersonate_groups.clone());
    }
    if o.insecure_skip_tls_verify {
        config.accept_invalid_certs = true;
        config.root_cert = None;
    }
    // In a Pod, kubectl honours the proxy variables as well.
    let config = with_proxy(config, None)
        .map_err(|e| ReadError::new(format!("cannot use the proxy set in the environment: {e}")))?;
    let who = match &o.impersonate {
        Some(who) => format!("the Pod's service account as {who}"),
        None => "the Pod's service account".to_string(),
    };
    Ok((config, None, None, Some(who)))
}

fn no_config(why: &str) -> ReadError {
    ReadError::new(format!(
        "no kubeconfig found (no --kubeconfig, KUBECONFIG unset, no ~/.kube/config, no {} or {}; {why}); \
         pass --kubeconfig, or read a dump with --from-file",
        Distro::K3s.default_kubeconfig(),
        Distro::Rke2.default_kubeconfig()
    ))
}
