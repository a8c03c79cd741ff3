//! Connecting the way kubectl does: a kubeconfig resolved (`kubeconfig_files`,
//! `config_resolution`, kubectl's connection flags in `connection_overrides`), its exec
//! credential plugin run by us (`plugin_credential`, `credential_plugin`,
//! `credential_refresh`), and the client built (`client_builder`). A single cluster and each
//! context of a fleet take the same path: a `Prepared`, then `authenticate`; the clusters
//! behind one Rancher share one client instead (`rancher_pool`).

pub(crate) mod activity;
pub(crate) mod bounded_answers;
mod client_builder;
mod config_resolution;
pub(crate) mod connection_overrides;
pub(crate) mod context_selection;
pub(crate) mod credential_plugin;
mod credential_refresh;
mod gated_connector;
mod kube_config;
mod kubeconfig_files;
pub(crate) mod paging;
mod plugin_credential;
mod proxy;
pub(crate) mod rancher_pool;
pub(crate) mod rancher_proxy;
pub(crate) mod redact;
mod shared_serving;
mod unread_window;

use std::path::PathBuf;
use std::time::Duration;

use kube::config::Kubeconfig;

use super::ReadError;
use crate::input::read_error::cause_chain;

use self::client_builder::{client_for, server_url};
pub(crate) use self::kubeconfig_files::find_kubeconfig;
use self::plugin_credential::use_plugin_credential;

#[derive(Debug, Clone, Default)]
pub(crate) struct ConnectOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// `None`: no limit at all (`--request-timeout 0`).
    pub request_timeout: Option<Duration>,
    /// kubectl's connection flags.
    pub overrides: self::connection_overrides::Overrides,
}

/// A client ready to use, the server it talks to (for messages), and the requests in flight
/// on it (for progress).
pub(crate) struct Connection {
    pub client: kube::Client,
    pub server: String,
    pub activity: self::activity::Activity,
    /// The kubeconfig context in use (`None` in a Pod's service account), for prompts.
    pub context: Option<String>,
    /// How long a response may keep us waiting (`None`: no limit); watches must end before it.
    pub read_timeout: Option<Duration>,
    /// Set when the server's own kubeconfig was used: the line that says so.
    pub notice: Option<String>,
    /// The proxy the requests go through, without credentials (for `-v`).
    pub proxy: Option<String>,
    /// Who the requests act as, in the kubeconfig's words (the context's user, `as` another
    /// when impersonating), for the note of the Event a repair records.
    pub user: Option<String>,
    /// The client certificate the requests authenticate with (PEM, never the key), when the
    /// kubeconfig's user has one: `kubeconfig-cert-expiring` reads its dates.
    pub client_certificate: Option<Vec<u8>>,
    /// The CA certificates (DER) the kubeconfig trusts for this cluster
    /// (`certificate-authority[-data]`, or a Pod's service-account CA); `None` when it names
    /// none or skips verification: the servers' chains are then verified against
    /// `kube-root-ca.crt`.
    pub cluster_ca: Option<Vec<Vec<u8>>>,
    /// Clients for the cluster's other servers, with these credentials.
    pub peers: self::client_builder::PeerClients,
    /// The serving certificate of `server`'s host when connections share it (the clusters of
    /// one Rancher); `None`: read for this connection alone.
    pub serving_certificate: Option<std::sync::Arc<shared_serving::SharedServing>>,
}

/// One cluster, from the command line's connection options.
pub(crate) async fn connect(opts: &ConnectOptions) -> Result<Connection, ReadError> {
    prepare(opts).await?.authenticate().await
}

/// One context of a kubeconfig that is already read and merged: a fleet reads the files once,
/// and each context still gets its own config, credentials and exec plugin.
pub(crate) async fn connect_context(
    kubeconfig: &Kubeconfig,
    origin: &str,
    context: &str,
    request_timeout: Option<Duration>,
) -> Result<Connection, ReadError> {
    Prepared::for_context(kubeconfig, origin, context, request_timeout)?
        .authenticate()
        .await
}

/// A kubeconfig read and resolved, before its credential plugin (if any) has run: the server
/// is known, so `serve` can listen and log while a slow plugin runs.
#[derive(Clone)]
pub(crate) struct Prepared {
    config: kube::Config,
    context: Option<String>,
    request_timeout: Option<Duration>,
    /// How long the exec credential plugin may take (`None`: no limit).
    pub plugin_timeout: Option<Duration>,
    pub server: String,
    /// Set when the server's own kubeconfig was used: the line that says so.
    pub notice: Option<String>,
    user: Option<String>,
    /// A single cluster's error is one line, so a plugin's failure names its context there;
    /// a fleet's entry names the context already.
    plugin_failure_names_context: bool,
}

/// The connection options resolved into a `Prepared` (see `config_resolution`).
pub(crate) async fn prepare(opts: &ConnectOptions) -> Result<Prepared, ReadError> {
    let (config, context, notice, user) = config_resolution::load_config(opts).await?;
    Ok(Prepared {
        server: server_url(&config),
        config,
        context,
        notice,
        user,
        request_timeout: opts.request_timeout,
        plugin_timeout: opts.request_timeout,
        plugin_failure_names_context: true,
    })
}

impl Prepared {
    /// The same credentials and trust at another URL of the same server, as `--server` would
    /// give them: each cluster behind one Rancher, without reading the kubeconfig again.
    pub(crate) fn at_server(&self, server: &str) -> Result<Prepared, ReadError> {
        let mut prepared = self.clone();
        prepared.config.cluster_url = server
            .parse()
            .map_err(|_| ReadError::new(format!("{server} is not a URL")))?;
        prepared.server = server_url(&prepared.config);
        Ok(prepared)
    }

    /// One context of an already-read kubeconfig, as a fleet connects to each.
    pub(crate) fn for_context(
        kubeconfig: &Kubeconfig,
        origin: &str,
        context: &str,
        request_timeout: Option<Duration>,
    ) -> Result<Prepared, ReadError> {
        check_context(kubeconfig, context, origin)?;
        let user = context_user(kubeconfig, Some(context));
        let config = config_for(kubeconfig, origin, Some(context))?;
        Ok(Prepared {
            server: server_url(&config),
            config,
            context: Some(context.to_string()),
            notice: None,
            user,
            request_timeout,
            plugin_timeout: request_timeout,
            plugin_failure_names_context: false,
        })
    }

    /// Runs the credential plugin (bounded, off the runtime's thread) and builds the client.
    pub(crate) async fn authenticate(mut self) -> Result<Connection, ReadError> {
        let refresh = use_plugin_credential(&mut self.config, self.plugin_timeout)
            .await
            .map_err(|e| match &self.context {
                Some(context) if self.plugin_failure_names_context => {
                    ReadError::new(format!("context {context}: {}", e.message))
                }
                _ => e,
            })?;
        let mut conn = client_for(self.config, self.context, self.request_timeout, refresh)?;
        conn.notice = self.notice;
        conn.user = self.user;
        Ok(conn)
    }
}

/// The user a context acts as, as the kubeconfig names it (`alice`, or `alice as bob` with
/// `as`/`--as`): what an Event's note says about who asked for a repair.
fn context_user(kubeconfig: &Kubeconfig, context: Option<&str>) -> Option<String> {
    let context = context.or(kubeconfig.current_context.as_deref())?;
    let name = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)?
        .context
        .as_ref()?
        .user
        .clone()?;
    let impersonated = kubeconfig
        .auth_infos
        .iter()
        .find(|u| u.name == name)
        .and_then(|u| u.auth_info.as_ref())
        .and_then(|a| a.impersonate.clone())
        .filter(|who| !who.is_empty());
    Some(match impersonated {
        Some(who) => format!("{name} as {who}"),
        None => name,
    })
}

fn config_for(
    kubeconfig: &Kubeconfig,
    origin: &str,
    context: Option<&str>,
) -> Result<kube::Config, ReadError> {
    let kubeconfig_proxy = kubeconfig_proxy_url(kubeconfig, context);
    self::kube_config::config_without_proxy(kubeconfig, context)
        .and_then(|config| with_proxy(config, kubeconfig_proxy.as_deref()))
        .map_err(|e| {
            let context = context
                .map(|c| format!(" with context {c:?}"))
                .unwrap_or_default();
            ReadError::new(format!(
                "cannot use kubeconfig {origin}{context}: {e}; check the file or pick a context with --context"
            ))
            .with_detail(cause_chain(&e))
        })
}

/// The `proxy-url` of the cluster that `context` (else the current context) points at.
fn kubeconfig_proxy_url(kubeconfig: &Kubeconfig, context: Option<&str>) -> Option<String> {
    let context = context.or(kubeconfig.current_context.as_deref())?;
    let cluster = &kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)?
        .context
        .as_ref()?
        .cluster;
    kubeconfig
        .clusters
        .iter()
        .find(|c| &c.name == cluster)?
        .cluster
        .as_ref()?
        .proxy_url
        .clone()
}

/// Puts kubectl's choice of proxy in place of kube's (see `proxy`).
fn with_proxy(
    mut config: kube::Config,
    kubeconfig_proxy: Option<&str>,
) -> Result<kube::Config, kube::config::KubeconfigError> {
    let env = |name: &str| std::env::var(name).ok();
    config.proxy_url = self::proxy::proxy_for(&config.cluster_url, kubeconfig_proxy, &env)
        .map(|url| url.parse::<http::Uri>())
        .transpose()
        .map_err(kube::config::KubeconfigError::ParseProxyUrl)?;
    Ok(config)
}

/// The API server a context points at, as written in the kubeconfig: known even when the
/// context's credentials cannot be loaded.
pub(crate) fn server_of(kubeconfig: &Kubeconfig, context: &str) -> Option<String> {
    let cluster = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)?
        .context
        .as_ref()?
        .cluster
        .clone();
    kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == cluster)?
        .cluster
        .as_ref()?
        .server
        .as_ref()
        .map(|s| s.trim_end_matches('/').to_string())
}

/// kube only says `failed to load current context: nope`; naming the contexts that exist
/// lets the user pick one without opening the file.
fn check_context(kubeconfig: &Kubeconfig, wanted: &str, origin: &str) -> Result<(), ReadError> {
    let names: Vec<&str> = kubeconfig
        .contexts
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    if names.contains(&wanted) {
        return Ok(());
    }
    let known = if names.is_empty() {
        "it has no contexts".to_string()
    } else {
        format!("it has {}", names.join(", "))
    };
    Err(ReadError::new(format!(
        "context {wanted:?} is not in kubeconfig {origin} ({known}); {}",
        self::context_selection::pick_hint(wanted, &names)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_context_names_the_known_ones() {
        let kubeconfig: Kubeconfig = serde_yaml_ng::from_str(
            "contexts:\n- name: one\n  context: {cluster: a}\n- name: two\n  context: {cluster: a}\n",
        )
        .unwrap();
        assert!(check_context(&kubeconfig, "two", "f").is_ok());
        assert_eq!(
            check_context(&kubeconfig, "nope", "f").unwrap_err().message,
            "context \"nope\" is not in kubeconfig f (it has one, two); pick one with --context"
        );
    }
}
