//! The connection flags a run was given, put into every command it tells the user to run next
//! (`render::rerun`), so that the suggestion reads the same cluster the same way.

use crate::cli::{Cli, DistroChoice};
use crate::input::connect::connection_overrides::Overrides;
use crate::render::rerun::{RerunFlags, shell_quote};

#[derive(Debug, Clone)]
pub(crate) struct ConnectionFlags {
    kubeconfig: Option<String>,
    /// `--context` when given once.
    context: Option<String>,
    distro: Option<&'static str>,
    overrides: Overrides,
}

impl ConnectionFlags {
    pub(crate) fn of(cli: &Cli) -> ConnectionFlags {
        let global = &cli.global;
        ConnectionFlags {
            kubeconfig: global.kubeconfig.as_ref().map(|p| p.display().to_string()),
            context: global.single_context().map(str::to_string),
            distro: match global.distro {
                DistroChoice::Auto => None,
                DistroChoice::K3s => Some("k3s"),
                DistroChoice::Rke2 => Some("rke2"),
            },
            overrides: global.connection_overrides(),
        }
    }

    /// `--kubeconfig`, `--context` and a `--distro` other than auto, as this run had them.
    pub(crate) fn rerun(&self) -> RerunFlags {
        self.rerun_for(self.context.as_deref())
    }

    /// The flags for commands about a cluster reached at `server` with `context`'s
    /// credentials (a cluster Rancher manages, through its proxy).
    pub(crate) fn rerun_for_server(&self, context: Option<&str>, server: &str) -> RerunFlags {
        let mut through = self.clone();
        through.overrides.server = Some(server.to_string());
        through.rerun_for(context.or(self.context.as_deref()))
    }

    /// The flags for commands about one `context` of this run (a fleet's member).
    pub(crate) fn rerun_for(&self, context: Option<&str>) -> RerunFlags {
        let mut flags = RerunFlags::new(self.kubeconfig.as_deref(), context, self.distro);
        // The other connection flags kubectl spells the same; never --token, a secret that
        // would end up in shell history and logs.
        let mut extra = String::new();
        for (flag, value) in given(&self.overrides) {
            match value {
                _ if flag == "--token" => {}
                Some(value) if value.is_empty() => extra.push_str(&format!(" {flag}")),
                Some(value) => extra.push_str(&format!(" {flag} {}", shell_quote(&value))),
                None => {}
            }
        }
        flags.kubectl.push_str(&extra);
        flags.k3sdoctor.push_str(&extra);
        flags
    }
}

/// kubectl's connection flags (besides `--kubeconfig` and `--context`), spelled once: each
/// with its value as given, `Some("")` for a switch that is on, `None` when absent, in the
/// order a rerun repeats them and a refusal names them.
pub(crate) fn given(o: &Overrides) -> Vec<(&'static str, Option<String>)> {
    let mut flags = vec![
        ("--server", o.server.clone()),
        ("--cluster", o.cluster.clone()),
        ("--user", o.user.clone()),
        ("--token", o.token.clone()),
        (
            "--certificate-authority",
            o.certificate_authority
                .as_ref()
                .map(|p| p.display().to_string()),
        ),
        (
            "--insecure-skip-tls-verify",
            o.insecure_skip_tls_verify.then(String::new),
        ),
        ("--as", o.impersonate.clone()),
    ];
    for group in &o.impersonate_groups {
        flags.push(("--as-group", Some(group.clone())));
    }
    flags
}
