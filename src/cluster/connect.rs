//! Kubeconfig resolution the way kubectl does it: `--kubeconfig`, else the files in
//! `KUBECONFIG` (merged, missing ones skipped), else `~/.kube/config`, else the in-cluster
//! service account. The k3s/RKE2 admin kubeconfigs are only ever named in hints: reading
//! them silently would make the tool act with root's rights behind the user's back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use super::ReadError;
use super::bounded_read::{BoundedReadError, KUBECONFIG_LIMIT, ensure_regular_file};
use super::read_error::cause_chain;
use crate::distro::Distro;

#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// `None`: no limit at all (`--request-timeout 0`).
    pub request_timeout: Option<Duration>,
}

/// A client ready to use, the server it talks to (for messages), and the requests in flight
/// on it (for progress).
pub struct Connection {
    pub client: kube::Client,
    pub server: String,
    pub activity: super::activity::Activity,
    /// The kubeconfig context in use (`None` in a Pod's service account), for prompts.
    pub context: Option<String>,
    /// How long a response may keep us waiting (`None`: no limit); watches must end before it.
    pub read_timeout: Option<Duration>,
}

pub fn user_agent() -> String {
    format!("k3sdoctor/{}", env!("CARGO_PKG_VERSION"))
}

pub async fn connect(opts: &ConnectOptions) -> Result<Connection, ReadError> {
    let (config, context) = load_config(opts).await?;
    client_for(config, context, opts.request_timeout)
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
    let config = config_for(kubeconfig.clone(), origin, Some(context)).await?;
    client_for(config, Some(context.to_string()), request_timeout)
}

fn client_for(
    mut config: kube::Config,
    context: Option<String>,
    request_timeout: Option<Duration>,
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
        activity: Default::default(),
        context,
        read_timeout: request_timeout,
    })
}

async fn load_config(opts: &ConnectOptions) -> Result<(kube::Config, Option<String>), ReadError> {
    let (kubeconfig, origin) = match find_kubeconfig(opts.kubeconfig.as_deref())? {
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
    if let Some(wanted) = &opts.context {
        check_context(&kubeconfig, wanted, &origin)?;
    }
    let context = opts
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone());
    config_for(kubeconfig, &origin, opts.context.as_deref())
        .await
        .map(|c| (c, context))
}

async fn config_for(
    kubeconfig: Kubeconfig,
    origin: &str,
    context: Option<&str>,
) -> Result<kube::Config, ReadError> {
    let options = KubeConfigOptions {
        context: context.map(str::to_string),
        ..KubeConfigOptions::default()
    };
    kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
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
        "no kubeconfig found (no --kubeconfig, KUBECONFIG unset, no ~/.kube/config; {why}); on a server \
         pass --kubeconfig {} (k3s) or --kubeconfig {} (RKE2), or read a dump with --from-file",
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
        "context {wanted:?} is not in kubeconfig {origin} ({known}); pick one with --context"
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
