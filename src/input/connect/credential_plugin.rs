//! Exec credential plugins (`users[].user.exec`: kubelogin, aws, gke-gcloud-auth-plugin …),
//! run by k3sdoctor itself rather than by kube.
//!
//! kube-client 5 runs the plugin synchronously with `std::process::Command::output()` inside
//! `Client::try_from` — up to three times: `Config::exec_identity_pem` for the TLS connector and
//! for the client's expiry, and `Config::auth_layer` (`src/client/builder.rs`,
//! `src/client/config_ext.rs`) — and again on the blocking pool from its auth layer when an
//! `expirationTimestamp` comes near (`src/client/auth/mod.rs`, `RefreshableToken::to_header`).
//! None of these is bounded, so a plugin waiting for an SSO login stalled the single-threaded
//! runtime, a whole fleet, and `serve`'s listener and signals. Its errors also carry the
//! plugin's stdout (a token) and, through `Command`'s `Debug`, the exec `env` values.
//!
//! Here the plugin runs as an async child in its own process group, under the request timeout;
//! on timeout or when the caller gives up (SIGTERM in `serve`) the whole group is killed, since
//! plugins fork helpers that keep stdout open. The credential it prints replaces the exec
//! section before kube sees the config, so kube never runs it. What a failure says is built
//! here: the command's file name, its exit status and the first line of its stderr, with
//! anything that may be a secret redacted.

use std::process::Stdio;
use std::time::Duration;

use kube::config::ExecConfig;
use serde::Deserialize;
use tokio::io::AsyncReadExt;

use super::redact::Redactor;

/// What a plugin handed back (client-go's `ExecCredentialStatus`).
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CredentialStatus {
    pub token: Option<String>,
    pub client_certificate_data: Option<String>,
    pub client_key_data: Option<String>,
    pub expiration_timestamp: Option<String>,
}

impl CredentialStatus {
    /// When the credential stops being valid; `None` when the plugin did not say (or said
    /// something that is not an RFC 3339 time, which client-go rejects and we ignore).
    pub(crate) fn expires(&self) -> Option<jiff::Timestamp> {
        self.expiration_timestamp.as_deref()?.parse().ok()
    }
}

#[derive(Deserialize)]
struct ExecCredential {
    status: Option<CredentialStatus>,
}

pub(crate) use crate::input::read_error::causes::PluginFailure;

/// The plugin's file name: its directory may name a user, its arguments may hold secrets.
pub(crate) fn plugin_name(exec: &ExecConfig) -> String {
    let command = exec.command.as_deref().unwrap_or_default();
    std::path::Path::new(command)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "(no command)".to_string())
}

/// Runs `exec` once, at most `limit` long (`None`: no limit), and returns its credential.
pub(crate) async fn run(
    exec: &ExecConfig,
    limit: Option<Duration>,
) -> Result<CredentialStatus, PluginFailure> {
    let name = plugin_name(exec);
    let Some(command) = exec.command.as_deref().filter(|c| !c.is_empty()) else {
        return Err(PluginFailure::NotStarted {
            name,
            why: "the exec section has no command".into(),
        });
    };
    let mut redactor = Redactor::default();
    for value in exec_env(exec).map(|(_, v)| v) {
        redactor.secret(value);
    }
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(exec.args.iter().flatten())
        .envs(exec_env(exec))
        .env("KUBERNETES_EXEC_INFO", exec_info(exec))
        // Never interactive: nobody can answer a prompt on a stderr we capture, and a plugin
        // that would wait for one should fail at once rather than at the timeout.
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for name in exec.drop_env.iter().flatten() {
        cmd.env_remove(name);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|e| PluginFailure::NotStarted {
        name: name.clone(),
        why: io_reason(&e),
    })?;
    let group = ProcessGroup(child.id());
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let finished = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            if let Some(pipe) = &mut stdout {
                let _ = pipe.read_to_end(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(pipe) = &mut stderr {
                let _ = pipe.read_to_end(&mut err).await;
            }
        };
        let (status, (), ()) = tokio::join!(child.wait(), read_out, read_err);
        (status, out, err)
    };
    let (status, out, err) = match limit {
        Some(limit) => match tokio::time::timeout(limit, finished).await {
            Ok(done) => done,
            Err(_) => return Err(PluginFailure::TimedOut { name, limit }),
        },
        None => finished.await,
    };
    // Done: the helpers it left behind (if any) are not ours to stop any more.
    group.forget();
    let status = status.map_err(|e| PluginFailure::NotStarted {
        name: name.clone(),
        why: io_reason(&e),
    })?;
    redactor.secret_text(&String::from_utf8_lossy(&out));
    if !status.success() {
        return Err(PluginFailure::Failed {
            name,
            status: exit_status(&status),
            stderr: first_line(&String::from_utf8_lossy(&err)).map(|l| redactor.redact(l)),
        });
    }
    parse(&out).map_err(|why| PluginFailure::NoCredential { name, why })
}

/// The `env` entries of the exec section, as client-go passes them.
fn exec_env(exec: &ExecConfig) -> impl Iterator<Item = (&str, &str)> {
    exec.env
        .iter()
        .flatten()
        .filter_map(|e| Some((e.get("name")?.as_str(), e.get("value")?.as_str())))
}

/// `KUBERNETES_EXEC_INFO`: the ExecCredential spec client-go hands every plugin.
fn exec_info(exec: &ExecConfig) -> String {
    let mut spec = serde_json::json!({ "interactive": false });
    if exec.provide_cluster_info
        && let Some(cluster) = &exec.cluster
        && let Ok(value) = serde_json::to_value(cluster)
    {
        spec["cluster"] = value;
    }
    serde_json::json!({
        "apiVersion": exec.api_version.as_deref().unwrap_or("client.authentication.k8s.io/v1beta1"),
        "kind": "ExecCredential",
        "spec": spec,
    })
    .to_string()
}

/// The credential in a plugin's stdout. The reason for a refusal never quotes the output: it
/// is a token more often than not.
fn parse(out: &[u8]) -> Result<CredentialStatus, String> {
    let text = String::from_utf8_lossy(out);
    if text.trim().is_empty() {
        return Err("exited 0 but printed nothing".into());
    }
    // client-go decodes the output with a YAML-tolerant codec: JSON, or YAML from some plugins.
    let credential: ExecCredential = serde_json::from_str(&text)
        .or_else(|_| serde_yaml_ng::from_str(&text))
        .map_err(|_| {
            format!(
                "printed {} bytes that are not an ExecCredential (JSON or YAML)",
                out.len()
            )
        })?;
    let status = credential.status.unwrap_or_default();
    let has_token = status.token.as_deref().is_some_and(|t| !t.is_empty());
    let has_cert = status.client_certificate_data.is_some() && status.client_key_data.is_some();
    if has_token || has_cert {
        Ok(status)
    } else {
        Err("printed an ExecCredential without status.token or a client certificate and key".into())
    }
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

fn exit_status(status: &std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    "no exit status".to_string()
}

/// `No such file or directory`, without the `(os error 2)` noise.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    // std writes an OS error as `<strerror> (os error <code>)`: the suffix follows from the code.
    match e.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .unwrap_or(&text)
            .to_string(),
        None => text,
    }
}

/// The plugin's process group, killed as a whole unless forgotten: on timeout, and when the
/// future running the plugin is dropped (a SIGTERM in `serve`, the end of the process).
struct ProcessGroup(Option<u32>);

impl ProcessGroup {
    fn forget(mut self) {
        self.0 = None;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|p| libc::pid_t::try_from(p).ok()) {
            // SAFETY: killpg(2) has no memory-safety preconditions; the group is the one the
            // plugin leads (process_group(0)), so no other process is signalled.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests;
