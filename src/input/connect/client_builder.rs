//! The kube client for a resolved config: kubectl's one request timeout, no retries behind
//! our back, our user agent, impersonation headers, the refreshing token, and a one-line
//! error that never prints a credential.

use std::path::Path;
use std::time::Duration;

use crate::input::ReadError;
use crate::input::read_error::cause_chain;

use super::Connection;
use super::bounded_answers::{BoundedAnswers, MOST_BODY_BYTES};
use super::credential_refresh::{RefreshingToken, WithToken};

fn user_agent() -> String {
    format!("k3sdoctor/{}", env!("CARGO_PKG_VERSION"))
}

pub(super) fn server_url(config: &kube::Config) -> String {
    config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_string()
}

pub(super) fn client_for(
    mut config: kube::Config,
    context: Option<String>,
    request_timeout: Option<Duration>,
    refresh: Option<RefreshingToken>,
) -> Result<Connection, ReadError> {
    settle_config(&mut config, request_timeout)?;
    let client = base_client(config.clone(), refresh.clone())?;
    Ok(connection_for(
        config,
        context,
        request_timeout,
        refresh,
        client,
    ))
}

/// kubectl's one request timeout, no retries behind our back, our user agent and the
/// impersonation headers, put in `config`.
pub(super) fn settle_config(
    config: &mut kube::Config,
    request_timeout: Option<Duration>,
) -> Result<(), ReadError> {
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
    impersonate(config)
}

/// The connection of `client`, a kube client built from `config` (see `base_client`), with
/// every answer bounded.
pub(super) fn connection_for(
    config: kube::Config,
    context: Option<String>,
    request_timeout: Option<Duration>,
    refresh: Option<RefreshingToken>,
    client: kube::Client,
) -> Connection {
    let server = server_url(&config);
    let client_certificate = client_certificate(&config);
    // What a kubeconfig that skips verification names as its CA vouches for nothing.
    let cluster_ca = (!config.accept_invalid_certs)
        .then(|| config.root_cert.clone())
        .flatten()
        .filter(|roots| !roots.is_empty());
    let proxy = config.proxy_url.as_ref().map(|uri| {
        let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
        let host = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        format!("{}://{host}", uri.scheme_str().unwrap_or("http"))
    });
    let peers = PeerClients { config, refresh };
    Connection {
        client: bounded(client),
        server,
        activity: Default::default(),
        context,
        read_timeout: request_timeout,
        notice: None,
        proxy,
        user: None,
        client_certificate,
        cluster_ca,
        peers,
        serving_certificate: None,
    }
}

/// The kube client of a settled config with the refreshing token, its errors in one line.
pub(super) fn base_client(
    config: kube::Config,
    refresh: Option<RefreshingToken>,
) -> Result<kube::Client, ReadError> {
    let server = server_url(&config);
    with_token(config, refresh).map_err(|e| client_error(&server, &e))
}

/// Why no client could be set up for `server`, in one line without a credential.
pub(super) fn client_error(server: &str, e: &kube::Error) -> ReadError {
    match e {
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
            let text = super::redact::redact_patterns(&e.to_string());
            ReadError::new(format!("cannot set up a client for {server}: {text}"))
        }
        _ => ReadError::new(format!("cannot set up a client for {server}: {e}"))
            .with_detail(cause_chain(e)),
    }
}

/// kube's client for a resolved config, with the refreshing token.
fn with_token(
    config: kube::Config,
    refresh: Option<RefreshingToken>,
) -> Result<kube::Client, kube::Error> {
    kube::Client::try_from(config).map(|client| token_on(client, refresh))
}

/// `client` with the refreshing token on every request, when there is one.
pub(super) fn token_on(client: kube::Client, refresh: Option<RefreshingToken>) -> kube::Client {
    match refresh {
        None => client,
        Some(token) => {
            let namespace = client.default_namespace().to_string();
            kube::Client::new(WithToken { client, token }, namespace)
        }
    }
}

/// The bound on every answer (see `bounded_answers`).
fn bounded(client: kube::Client) -> kube::Client {
    let namespace = client.default_namespace().to_string();
    let bounded = BoundedAnswers {
        client,
        limit: MOST_BODY_BYTES,
        chains: Default::default(),
    };
    kube::Client::new(bounded, namespace)
}

/// What it takes to reach another server of the same cluster with the same credentials and
/// trust, as `kubectl --server https://<ip>:6443` does: each server's own `/metrics`.
#[derive(Clone)]
pub(crate) struct PeerClients {
    config: kube::Config,
    refresh: Option<RefreshingToken>,
}

impl PeerClients {
    /// A client for `https://<address>`: connected within `connect`, each read within `read`.
    pub(crate) fn at(
        &self,
        address: &str,
        connect: Duration,
        read: Duration,
    ) -> Result<kube::Client, String> {
        let mut config = self.config.clone();
        config.cluster_url = format!("https://{address}")
            .parse()
            .map_err(|_| format!("{address} is not an address"))?;
        config.connect_timeout = Some(connect);
        config.read_timeout = Some(read);
        config.write_timeout = Some(read);
        with_token(config, self.refresh.clone())
            .map(bounded)
            .map_err(|e| e.to_string())
    }
}

/// The user's client certificate as kubectl finds it: inline data, else the file it names.
/// Only read, for its dates; a file that cannot be read is the connection's problem, not this.
fn client_certificate(config: &kube::Config) -> Option<Vec<u8>> {
    use base64::Engine;
    let user = &config.auth_info;
    if let Some(data) = &user.client_certificate_data {
        return base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .ok();
    }
    std::fs::read(user.client_certificate.as_ref()?).ok()
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
