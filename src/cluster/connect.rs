//! Kubeconfig resolution the way kubectl does it: `--kubeconfig`, else the files in
//! `KUBECONFIG` (merged, missing ones skipped), else `~/.kube/config`, else the in-cluster
//! service account. The k3s/RKE2 admin kubeconfigs are only ever named in hints: reading
//! them silently would make the tool act with root's rights behind the user's back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use super::ReadError;
use super::read_error::cause_chain;
use crate::distro::Distro;

#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// `None`: no limit (kubectl's `--request-timeout=0`).
    pub request_timeout: Option<Duration>,
}

/// A client ready to use, and the server it talks to (for messages).
pub struct Connection {
    pub client: kube::Client,
    pub server: String,
    /// The kubeconfig context in use (`None` in a Pod's service account), for prompts.
    pub context: Option<String>,
}

pub fn user_agent() -> String {
    format!("k3sdoctor/{}", env!("CARGO_PKG_VERSION"))
}

pub async fn connect(opts: &ConnectOptions) -> Result<Connection, ReadError> {
    let (mut config, context) = load_config(opts).await?;
    if let Some(timeout) = opts.request_timeout {
        config.connect_timeout = Some(timeout);
        config.read_timeout = Some(timeout);
        config.write_timeout = Some(timeout);
        config.reset_reader_on_write = true;
    }
    // Retries are ours to decide: a repair must never be sent twice behind our back.
    config.default_retry = false;
    if let Ok(value) = http::HeaderValue::from_str(&user_agent()) {
        config.headers.push((http::header::USER_AGENT, value));
    }
    let server = config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_string();
    let client = kube::Client::try_from(config).map_err(|e| {
        ReadError::new(format!("cannot set up a client for {server}: {e}"))
            .with_detail(cause_chain(&e))
    })?;
    Ok(Connection {
        client,
        server,
        context,
    })
}

async fn load_config(opts: &ConnectOptions) -> Result<(kube::Config, Option<String>), ReadError> {
    let options = KubeConfigOptions {
        context: opts.context.clone(),
        ..KubeConfigOptions::default()
    };
    let (kubeconfig, origin) = match find_kubeconfig(opts)? {
        Some(found) => found,
        None => {
            if opts.context.is_some() {
                return Err(no_config("--context needs a kubeconfig"));
            }
            return kube::Config::incluster().map(|c| (c, None)).map_err(|e| {
                no_config("not running in a cluster either").with_detail(cause_chain(&e))
            });
        }
    };
    let context = opts
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone());
    kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map(|c| (c, context))
        .map_err(|e| {
            let context = opts
                .context
                .as_deref()
                .map(|c| format!(" with context {c:?}"))
                .unwrap_or_default();
            ReadError::new(format!(
                "cannot use kubeconfig {origin}{context}: {e}; check the file or pick a context with --context"
            ))
            .with_detail(cause_chain(&e))
        })
}

fn no_config(why: &str) -> ReadError {
    ReadError::new(format!(
        "no kubeconfig found (no --kubeconfig, KUBECONFIG unset, no ~/.kube/config; {why}); on a server \
         pass --kubeconfig {} (k3s) or --kubeconfig {} (RKE2), or read a dump with --from-file",
        Distro::K3s.default_kubeconfig(),
        Distro::Rke2.default_kubeconfig()
    ))
}

fn find_kubeconfig(opts: &ConnectOptions) -> Result<Option<(Kubeconfig, String)>, ReadError> {
    if let Some(path) = &opts.kubeconfig {
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
    Kubeconfig::read_from(path).map_err(|e| {
        let why = match std::fs::metadata(path) {
            Err(io) => io.to_string(),
            Ok(_) => e.to_string(),
        };
        ReadError::new(format!(
            "cannot read kubeconfig {}: {why}; pass an existing file with --kubeconfig",
            path.display()
        ))
        .with_detail(cause_chain(&e))
    })
}
