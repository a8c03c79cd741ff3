//! `k3sdoctor completions SHELL`, and the answers every completion script and kubectl's
//! plugin completion ask for (`k3sdoctor __complete WORD...`, `kubectl_complete-k3s_doctor`).

use std::io::Write;
use std::time::Duration;

use clap_complete::Shell;

use crate::cli::complete::{ClusterValues, Dynamic, TypedFlags, complete_with};
use crate::distro::Distro;
use crate::input::connect::connection_overrides::Overrides;
use crate::input::connect::{ConnectOptions, connect, find_kubeconfig, server_of};

/// How long a completion may wait for the cluster: a shell that hangs on TAB is worse than
/// one that offers nothing.
pub(crate) const CLUSTER_WAIT: Duration = Duration::from_secs(2);

/// The script for `shell` that completes the executable `script_name` (`k3sdoctor` or
/// `kubectl-k3s_doctor`): bash, zsh and fish ask the binary (`__complete`), so they offer
/// contexts, nodes and lock names too; PowerShell and Elvish get clap_complete's static
/// scripts (subcommands, flags and fixed values).
pub(crate) fn write(shell: Shell, script_name: &str, out: &mut dyn Write) {
    let dynamic = match shell {
        Shell::Bash => Some(include_str!("completions/dynamic.bash")),
        Shell::Zsh => Some(include_str!("completions/dynamic.zsh")),
        Shell::Fish => Some(include_str!("completions/dynamic.fish")),
        _ => None,
    };
    match dynamic {
        Some(template) => {
            let function = script_name.replace(['-', '.'], "_");
            let script = template
                .replace("__PROG__", script_name)
                .replace("__FUNC__", &function);
            // A closed pipe (`| head`) is no error worth reporting for a script.
            let _ = out.write_all(script.as_bytes());
        }
        None => clap_complete::generate(
            shell,
            &mut crate::cli::command_for_scripts(script_name),
            script_name,
            out,
        ),
    }
}

/// Cobra's `__complete` answer for `words` (the words after the program name, the last one
/// under the cursor), with the kubeconfig's and the cluster's values.
pub(crate) fn write_protocol(words: &[String], out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(
        complete_with(&crate::cli::command(), words, &FromCluster)
            .to_protocol()
            .as_bytes(),
    )?;
    out.flush()
}

/// The kubeconfig named on the line (else kubectl's order) and the cluster it points at,
/// read within [`CLUSTER_WAIT`]; any failure is no candidates, never a message.
struct FromCluster;

impl ClusterValues for FromCluster {
    fn values(&self, kind: Dynamic, typed: &TypedFlags) -> Vec<(String, String)> {
        match kind {
            Dynamic::Contexts => contexts(typed),
            Dynamic::ServerNodes => server_nodes(typed),
            Dynamic::LockNames => lock_names(typed),
        }
    }
}

fn contexts(typed: &TypedFlags) -> Vec<(String, String)> {
    let explicit = typed.last("kubeconfig").map(std::path::PathBuf::from);
    let Ok(Some((kubeconfig, _))) = find_kubeconfig(explicit.as_deref()) else {
        return Vec::new();
    };
    kubeconfig
        .contexts
        .iter()
        .map(|c| {
            let server = server_of(&kubeconfig, &c.name).unwrap_or_default();
            (c.name.clone(), server)
        })
        .collect()
}

/// The servers that can hold the locks (control-plane nodes), each by node name and, when it
/// differs, by the hostname its k3s campaigns with: `--to` takes either.
fn server_nodes(typed: &TypedFlags) -> Vec<(String, String)> {
    let Some((state, distro)) = read_locks(typed) else {
        return Vec::new();
    };
    let distro = distro.unwrap_or(Distro::K3s);
    let mut values = Vec::new();
    for node in state.nodes().iter().filter(|n| n.runs_control_plane()) {
        values.push((node.name.clone(), "server node".to_string()));
        let hostname = node.lock_identity(distro);
        if hostname != node.name {
            values.push((hostname.to_string(), format!("hostname of {}", node.name)));
        }
    }
    values.sort();
    values.dedup_by(|a, b| a.0 == b.0);
    values
}

/// `--distro` when typed, else the distro the cluster's locks show, else both distros' names.
fn lock_names(typed: &TypedFlags) -> Vec<(String, String)> {
    let distros = match typed_distro(typed) {
        Some(distro) => vec![distro],
        None => match read_locks(typed).and_then(|(_, distro)| distro) {
            Some(distro) => vec![distro],
            None => Distro::ALL.to_vec(),
        },
    };
    distros
        .into_iter()
        .flat_map(|d| {
            [
                (d.core_lock(), format!("the {} lock (default)", d.product())),
                (d.etcd_lock(), format!("the {} etcd lock", d.product())),
            ]
        })
        .collect()
}

fn typed_distro(typed: &TypedFlags) -> Option<Distro> {
    Distro::ALL
        .into_iter()
        .find(|d| typed.last("distro") == Some(d.prog()))
}

/// Leases and Nodes as `leases` reads them, within [`CLUSTER_WAIT`], with the connection
/// flags typed on the line.
fn read_locks(
    typed: &TypedFlags,
) -> Option<(crate::model::cluster_state::ClusterState, Option<Distro>)> {
    let opts = ConnectOptions {
        kubeconfig: typed.last("kubeconfig").map(Into::into),
        context: typed.last("context").map(str::to_string),
        request_timeout: Some(CLUSTER_WAIT),
        overrides: Overrides {
            server: typed.last("server").map(str::to_string),
            cluster: typed.last("cluster").map(str::to_string),
            user: typed.last("user").map(str::to_string),
            token: typed.last("token").map(str::to_string),
            certificate_authority: typed.last("certificate_authority").map(Into::into),
            // `--insecure-skip-tls-verify` or `=true`; `=false` as kubectl reads it.
            insecure_skip_tls_verify: typed
                .last("insecure_skip_tls_verify")
                .is_some_and(|v| v != "false"),
            impersonate: typed.last("impersonate").map(str::to_string),
            impersonate_groups: typed
                .all("impersonate_group")
                .into_iter()
                .map(str::to_string)
                .collect(),
        },
    };
    let explicit = typed_distro(typed);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let read = async {
        let conn = connect(&opts).await.ok()?;
        crate::input::live::read_lease_state(&conn, explicit, &|_| {})
            .await
            .ok()
    };
    let result = runtime
        .block_on(async { tokio::time::timeout(CLUSTER_WAIT, read).await })
        .ok()
        .flatten();
    // A credential plugin still running is not waited for: the answer is due now.
    runtime.shutdown_background();
    result
}
