//! Kubeconfig resolution the way kubectl does it: `--kubeconfig`, else the files in
//! `KUBECONFIG` (merged, missing ones skipped), else `~/.kube/config`, else the in-cluster
//! service account; only when all of these find nothing, the admin kubeconfig a k3s or RKE2
//! server writes for itself (as `k3s kubectl` and `k3s etcd-snapshot ls` do), and then the
//! connection says which file it used, so it never acts with root's rights unannounced.

pub mod connection_overrides;
pub mod context_selection;
pub mod credential_plugin;
pub mod credential_refresh;
pub mod kube_config;
pub mod proxy;
pub mod redact;

use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::Kubeconfig;

use super::ReadError;
use super::dump::bounded_read::{BoundedReadError, KUBECONFIG_LIMIT, ensure_regular_file};

use self::credential_refresh::{RefreshingToken, WithToken};
use super::live::read_error::cause_chain;
use crate::distro::Distro;

#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// `None`: no limit at all (`--request-timeout 0`).
    pub request_timeout: Option<Duration>,
    /// kubectl's connection flags.
    pub overrides: self::connection_overrides::Overrides,
}

/// A client ready to use, the server it talks to (for messages), and the requests in flight
/// on it (for progress).
pub struct Connection {
    pub client: kube::Client,
    pub server: String,
    pub activity: super::live::activity::Activity,
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
}

pub fn user_agent() -> String {
    format!("k3sdoctor/{}", env!("CARGO_PKG_VERSION"))
}

pub async fn connect(opts: &ConnectOptions) -> Result<Connection, ReadError> {
    prepare(opts).await?.authenticate().await
}

/// A kubeconfig read and resolved, before its credential plugin (if any) has run: the server
/// is known, so `serve` can listen and log while a slow plugin runs.
pub struct Prepared {
    config: kube::Config,
    context: Option<String>,
    request_timeout: Option<Duration>,
    /// How long the exec credential plugin may take (`None`: no limit).
    pub plugin_timeout: Option<Duration>,
    pub server: String,
    /// Set when the server's own kubeconfig was used: the line that says so.
    pub notice: Option<String>,
    user: Option<String>,
}

pub async fn prepare(opts: &ConnectOptions) -> Result<Prepared, ReadError> {
    let (config, context, notice, user) = load_config(opts).await?;
    Ok(Prepared {
        server: server_url(&config),
        config,
        context,
        notice,
        user,
        request_timeout: opts.request_timeout,
        plugin_timeout: opts.request_timeout,
    })
}

impl Prepared {
    /// Runs the credential plugin (bounded, off the runtime's thread) and builds the client.
    pub async fn authenticate(mut self) -> Result<Connection, ReadError> {
        let refresh = use_plugin_credential(&mut self.config, self.plugin_timeout)
            .await
            .map_err(|e| match &self.context {
                // One cluster, one line: the line names the context whose user runs it.
                Some(context) => ReadError::new(format!("context {context}: {}", e.message)),
                None => e,
            })?;
        let mut conn = client_for(self.config, self.context, self.request_timeout, refresh)?;
        conn.notice = self.notice;
        conn.user = self.user;
        Ok(conn)
    }
}

/// A client for one context of a kubeconfig that is already read and merged: a fleet reads
/// the files once, and each context still gets its own config, credentials and exec plugin.
pub async fn connect_context(
    kubeconfig: &Kubeconfig,
    origin: &str,
    context: &str,
    request_timeout: Option<Duration>,
) -> Result<Connection, ReadError> {
    check_context(kubeconfig, context, origin)?;
    let user = context_user(kubeconfig, Some(context));
    let mut config = config_for(kubeconfig, origin, Some(context))?;
    let refresh = use_plugin_credential(&mut config, request_timeout).await?;
    let mut conn = client_for(config, Some(context.to_string()), request_timeout, refresh)?;
    conn.user = user;
    Ok(conn)
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

/// Runs the user's exec credential plugin ourselves and puts what it printed in its place, so
/// kube never runs it (see `credential_plugin`). As in kube and client-go, a token, token file,
/// basic auth or auth provider in the same user wins over `exec`, which then never runs.
/// A token that expires comes back as the layer that fetches it again when due.
async fn use_plugin_credential(
    config: &mut kube::Config,
    limit: Option<Duration>,
) -> Result<Option<RefreshingToken>, ReadError> {
    let user = &mut config.auth_info;
    let preferred = user.auth_provider.is_some()
        || (user.username.is_some() && user.password.is_some())
        || user.token.is_some()
        || user.token_file.is_some();
    if preferred {
        return Ok(None);
    }
    let Some(exec) = user.exec.take() else {
        return Ok(None);
    };
    let status = credential_plugin::run(&exec, limit).await?;
    let expires = status.expires();
    match (
        status.client_certificate_data,
        status.client_key_data,
        status.token,
    ) {
        // A client certificate lives in the TLS setup: not refreshed (kube does not either).
        (Some(cert), Some(key), _) => {
            use base64::Engine as _;
            let b64 = base64::engine::general_purpose::STANDARD;
            user.client_certificate_data = Some(b64.encode(cert));
            user.client_key_data = Some(b64.encode(key).into());
        }
        (_, _, Some(token)) => match expires {
            Some(expires) => return Ok(Some(RefreshingToken::new(exec, limit, token, expires))),
            None => user.token = Some(token.into()),
        },
        _ => {}
    }
    Ok(None)
}

fn server_url(config: &kube::Config) -> String {
    config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_string()
}

fn client_for(
    mut config: kube::Config,
    context: Option<String>,
    request_timeout: Option<Duration>,
    refresh: Option<RefreshingToken>,
) -> Result<Connection, ReadError> {
    // One limit for every phase of a request, as kubectl's --request-timeout; `0` lifts
    // kube's own connect (30 s) and write (295 s) limits too.
    config.connect_timeout = request_timeout;
    config.read_timeout = request_timeout;
    config.write_timeout = request_timeout;
    config.reset_reader_on_write = request_timeout.is_some();
    // Retries are ours to decide: a repair must never be sent twice behind our back.
    config.default_retry = false;
    if let Ok(value) = http::HeaderValue::from_str(&user_agent()) {
        config.headers.push((http::header::USER_AGENT, value));
    }
    impersonate(&mut config)?;
    let server = server_url(&config);
    let proxy = config.proxy_url.as_ref().map(|uri| {
        let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
        let host = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        format!("{}://{host}", uri.scheme_str().unwrap_or("http"))
    });
    let client = kube::Client::try_from(config).map(|client| match refresh {
        None => client,
        Some(token) => {
            let namespace = client.default_namespace().to_string();
            kube::Client::new(WithToken { client, token }, namespace)
        }
    });
    let client = client.map_err(|e| match &e {
        // kube still runs a GCP auth-provider's `cmd-path` itself; its failure carries the
        // command's output (a token) in `Debug` form: only its exit status is told.
        kube::Error::Auth(kube::client::AuthError::AuthExecRun { cmd, out }) => {
            let name = cmd.split_whitespace().next().unwrap_or_default();
            let name = Path::new(name)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            ReadError::new(format!(
                "cannot set up a client for {server}: the auth-provider command {name} failed ({}); run it by \
                 hand to see why",
                out.status
            ))
        }
        kube::Error::Auth(_) => {
            let text = self::redact::redact_patterns(&e.to_string());
            ReadError::new(format!("cannot set up a client for {server}: {text}"))
        }
        _ => ReadError::new(format!("cannot set up a client for {server}: {e}"))
            .with_detail(cause_chain(&e)),
    })?;
    Ok(Connection {
        client,
        server,
        activity: Default::default(),
        context,
        read_timeout: request_timeout,
        notice: None,
        proxy,
        user: None,
    })
}

/// A kubeconfig as resolved: the config, the context chosen, the notice about the server's own
/// file, and the user it acts as (`context_user`).
type LoadedConfig = (kube::Config, Option<String>, Option<String>, Option<String>);

async fn load_config(opts: &ConnectOptions) -> Result<LoadedConfig, ReadError> {
    let (mut kubeconfig, origin, notice) = match find_kubeconfig(opts.kubeconfig.as_deref())? {
        Some((kubeconfig, origin)) => (kubeconfig, origin, None),
        // kubectl --server URL --token T needs no file at all.
        None if opts.overrides.stands_alone() => {
            (Kubeconfig::default(), "(none: --server)".to_string(), None)
        }
        None => {
            // kubectl's order ends with the Pod's service account (not with --context, which
            // names a kubeconfig context); the server's own file comes after all of it.
            let in_cluster = match &opts.context {
                None => Some(kube::Config::incluster()),
                Some(_) => None,
            };
            let in_cluster_error = match in_cluster {
                Some(Ok(mut config)) => {
                    let o = &opts.overrides;
                    if let Some(token) = &o.token {
                        config.auth_info.token = Some(token.clone().into());
                        config.auth_info.token_file = None;
                    }
                    if o.impersonate.is_some() {
                        config.auth_info.impersonate = o.impersonate.clone();
                        config.auth_info.impersonate_groups = (!o.impersonate_groups.is_empty())
                            .then(|| o.impersonate_groups.clone());
                    }
                    if o.insecure_skip_tls_verify {
                        config.accept_invalid_certs = true;
                        config.root_cert = None;
                    }
                    // In a Pod, kubectl honours the proxy variables as well.
                    let config = with_proxy(config, None).map_err(|e| {
                        ReadError::new(format!("cannot use the proxy set in the environment: {e}"))
                    })?;
                    let who = match &o.impersonate {
                        Some(who) => format!("the Pod's service account as {who}"),
                        None => "the Pod's service account".to_string(),
                    };
                    return Ok((config, None, None, Some(who)));
                }
                Some(Err(e)) => Some(e),
                None => None,
            };
            match server_kubeconfig()? {
                Some((kubeconfig, path)) => {
                    let notice = format!(
                        "using {path}: no --kubeconfig, KUBECONFIG or ~/.kube/config, and not in a Pod"
                    );
                    (kubeconfig, path, Some(notice))
                }
                None => {
                    return Err(match in_cluster_error {
                        None => no_config("--context needs a kubeconfig"),
                        Some(e) => no_config("not running in a cluster either")
                            .with_detail(cause_chain(&e)),
                    });
                }
            }
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

/// Test-only: a `:`-separated list of files that stands for the two server kubeconfigs, so
/// tests need not write under /etc. Not documented for users.
const SERVER_KUBECONFIGS_ENV: &str = "K3SDOCTOR_TEST_SERVER_KUBECONFIGS";

/// The first server kubeconfig that exists: k3s writes `/etc/rancher/k3s/k3s.yaml`
/// (pkg/cli/server/server.go, `--write-kubeconfig`), RKE2 `/etc/rancher/rke2/rke2.yaml`.
/// One that exists but cannot be read (mode 0600, not root) is an error naming it.
fn server_kubeconfig() -> Result<Option<(Kubeconfig, String)>, ReadError> {
    let paths: Vec<PathBuf> = match std::env::var_os(SERVER_KUBECONFIGS_ENV) {
        Some(list) => std::env::split_paths(&list).collect(),
        None => [Distro::K3s, Distro::Rke2]
            .iter()
            .map(|d| PathBuf::from(d.default_kubeconfig()))
            .collect(),
    };
    let Some(path) = paths.into_iter().find(|p| p.exists()) else {
        return Ok(None);
    };
    if let Err(e) = std::fs::File::open(&path) {
        return Err(ReadError::new(format!(
            "cannot read {}, the only kubeconfig found (no --kubeconfig, KUBECONFIG or ~/.kube/config): {e}; \
             run as root (sudo) or pass --kubeconfig",
            path.display()
        )));
    }
    read_one(&path).map(|kc| Some((kc, path.display().to_string())))
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

/// kube reads a kubeconfig user's `as`/`as-groups` (and `--as`/`--as-group`, put there by
/// `connection_overrides`) but sends nothing: the headers client-go's impersonating transport
/// sends (k8s.io/client-go/transport/round_trippers.go) are added here.
fn impersonate(config: &mut kube::Config) -> Result<(), ReadError> {
    let user = config.auth_info.impersonate.clone();
    let groups = config
        .auth_info
        .impersonate_groups
        .clone()
        .unwrap_or_default();
    let Some(user) = user.filter(|u| !u.is_empty()) else {
        if groups.is_empty() {
            return Ok(());
        }
        return Err(ReadError::new(
            "the kubeconfig user sets as-groups without as; name the user to act as with --as"
                .to_string(),
        ));
    };
    let header = |name: &'static str, value: &str| {
        http::HeaderValue::from_str(value)
            .map(|v| (http::HeaderName::from_static(name), v))
            .map_err(|_| {
                ReadError::new(format!(
                    "cannot send {value:?} as {name}: not a valid header value"
                ))
            })
    };
    config.headers.push(header("impersonate-user", &user)?);
    for group in &groups {
        config.headers.push(header("impersonate-group", group)?);
    }
    Ok(())
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
pub fn server_of(kubeconfig: &Kubeconfig, context: &str) -> Option<String> {
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

fn no_config(why: &str) -> ReadError {
    ReadError::new(format!(
        "no kubeconfig found (no --kubeconfig, KUBECONFIG unset, no ~/.kube/config, no {} or {}; {why}); \
         pass --kubeconfig, or read a dump with --from-file",
        Distro::K3s.default_kubeconfig(),
        Distro::Rke2.default_kubeconfig()
    ))
}

/// The kubeconfig kubectl would use and where it came from (for messages): `--kubeconfig`,
/// else every existing file in `KUBECONFIG` merged in order, else `~/.kube/config`.
pub fn find_kubeconfig(explicit: Option<&Path>) -> Result<Option<(Kubeconfig, String)>, ReadError> {
    if let Some(path) = explicit {
        return read_one(path).map(|kc| Some((kc, path.display().to_string())));
    }
    if let Some(value) = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        let paths: Vec<PathBuf> = std::env::split_paths(&value)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        let existing: Vec<&PathBuf> = paths.iter().filter(|p| p.exists()).collect();
        if existing.is_empty() {
            return Err(ReadError::new(format!(
                "KUBECONFIG names no file that exists ({}); fix KUBECONFIG or pass --kubeconfig",
                value.to_string_lossy()
            )));
        }
        let mut merged = Kubeconfig::default();
        for path in &existing {
            let next = read_one(path)?;
            merged = merged.merge(next).map_err(|e| {
                ReadError::new(format!("cannot merge kubeconfig {}: {e}", path.display()))
            })?;
        }
        let origin = existing
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        return Ok(Some((merged, origin)));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match home.map(|h| h.join(".kube").join("config")) {
        Some(path) if path.exists() => {
            read_one(&path).map(|kc| Some((kc, path.display().to_string())))
        }
        _ => Ok(None),
    }
}

fn read_one(path: &Path) -> Result<Kubeconfig, ReadError> {
    // kube reads the file whole: `/dev/zero` or a FIFO would never end.
    // A missing or unreadable file gets kube's own words below.
    if let Err(e @ (BoundedReadError::NotRegular(_) | BoundedReadError::TooLarge { .. })) =
        ensure_regular_file(path, KUBECONFIG_LIMIT)
    {
        return Err(ReadError::new(format!(
            "kubeconfig {} {e}; pass the kubeconfig file itself with --kubeconfig",
            path.display()
        )));
    }
    Kubeconfig::read_from(path).map_err(|e| {
        let message = match std::fs::metadata(path) {
            Err(io) => format!(
                "cannot read kubeconfig {}: {io}; pass an existing file with --kubeconfig",
                path.display()
            ),
            Ok(_) => format!(
                "kubeconfig {} is not valid: {}; fix the file there or pass another with --kubeconfig",
                path.display(),
                first_line_of_parse_error(&e.to_string())
            ),
        };
        ReadError::new(message).with_detail(cause_chain(&e))
    })
}

/// The YAML parser's message is `failed to parse kubeconfig YAML: error: line 6 column 1:
/// <problem>` followed by a caret diagram of the source; a one-line error keeps the position
/// and the problem.
fn first_line_of_parse_error(text: &str) -> &str {
    let first = text.lines().next().unwrap_or_default();
    let first = first
        .strip_prefix("failed to parse kubeconfig YAML: ")
        .unwrap_or(first);
    first.strip_prefix("error: ").unwrap_or(first).trim_end()
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
    fn parse_errors_keep_position_and_problem_only() {
        let kube = "failed to parse kubeconfig YAML: error: line 6 column 1: while parsing a flow mapping, \
                    did not find expected ',' or '}'\n --> <input>:6:1\n  |\n6 | contexts: []\n  | ^ while parsing";
        assert_eq!(
            first_line_of_parse_error(kube),
            "line 6 column 1: while parsing a flow mapping, did not find expected ',' or '}'"
        );
        assert_eq!(
            first_line_of_parse_error("missing field `name`"),
            "missing field `name`"
        );
    }

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
