//! Exec credential plugins that hang, fail, or print secrets.
//!
//! [`ExecPlugin::new`] writes a bash script into its own temp dir that behaves as one
//! [`Mode`]; [`write_kubeconfig`] writes a kubeconfig whose users run such scripts through
//! `users[].user.exec`, each with `env: [{name: VAULT_TOKEN, value: <ENV_SECRET>}]`. The plugin
//! records the pids it and its helpers run as, so a test can check that none survived.
//! It works against the fake API server (print `Role::Admin.token()`) and the real test bed
//! (print the token of `DIR/kubeconfig/admin`: [`RealBedUser::read`]).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The value of `VAULT_TOKEN` in every exec section: must never be printed or logged.
pub(crate) const ENV_SECRET: &str = "s3cr3t-vault-7d41c09b";

/// The token a failing plugin prints (stdout and, inside a sentence, stderr).
pub(crate) const FAILING_TOKEN: &str = "tok-0a1b2c3d4e5f6789";

/// What the plugin does when run.
#[derive(Clone, Debug)]
pub(crate) enum Mode {
    /// Never answers (`sleep`), like a plugin waiting for an SSO login in a browser.
    Hang,
    /// Forks a helper that keeps stdout open and exits 0 itself: the output never ends.
    HangWithHelper,
    /// Prints [`FAILING_TOKEN`] to stdout, a line on stderr that quotes it and the env secret,
    /// and exits 1.
    Fail,
    /// Prints a valid ExecCredential with this token.
    Token(String),
    /// Exits 0 after printing something that is not an ExecCredential (and holds a secret).
    Garbage,
    /// Prints a valid ExecCredential with this token, expiring 10 s from now: within the
    /// minute before expiry in which clients fetch a new one, so every request runs it again.
    Expiring(String),
    /// Like `Expiring` the first time, then hangs (a refresh that waits for a new login).
    ExpiringThenHang(String),
}

pub(crate) struct ExecPlugin {
    dir: tempfile::TempDir,
    pub mode: Mode,
}

impl ExecPlugin {
    pub(crate) fn new(mode: Mode) -> ExecPlugin {
        let dir = tempfile::Builder::new()
            .prefix("k3sdoctor-plugin-")
            .tempdir()
            .expect("a temp dir for the plugin");
        let pids = dir.path().join("pids");
        let record = format!(
            "echo $$ >> '{}'\necho run >> '{}'",
            pids.display(),
            dir.path().join("runs").display()
        );
        let body = match &mode {
            Mode::Hang => format!("{record}\nsleep 600\n"),
            Mode::HangWithHelper => format!(
                "{record}\nsleep 600 &\necho $! >> '{}'\nexit 0\n",
                pids.display()
            ),
            Mode::Fail => format!(
                "{record}\necho '{FAILING_TOKEN}'\n\
                 echo \"error: the identity provider refused token {FAILING_TOKEN} (VAULT_TOKEN=$VAULT_TOKEN)\" >&2\n\
                 echo 'second line of stderr' >&2\nexit 1\n"
            ),
            Mode::Token(token) => format!(
                "{record}\ncat <<'EOF'\n{}\nEOF\n",
                json!({
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "kind": "ExecCredential",
                    "status": {"token": token},
                })
            ),
            Mode::Expiring(token) => format!("{record}\n{}", expiring_credential(token)),
            Mode::ExpiringThenHang(token) => format!(
                "{record}\nif [ \"$(wc -l < '{}')\" -gt 1 ]; then sleep 600; fi\n{}",
                dir.path().join("runs").display(),
                expiring_credential(token)
            ),
            Mode::Garbage => format!(
                "{record}\necho '<html>login page {FAILING_TOKEN} $VAULT_TOKEN</html>'\nexit 0\n"
            ),
        };
        let path = dir.path().join("kubelogin");
        std::fs::write(&path, format!("#!/bin/bash\n{body}")).expect("write the plugin");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("make the plugin executable");
        ExecPlugin { dir, mode }
    }

    /// The script; its file name is `kubelogin`, as the error lines name it.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.path().join("kubelogin")
    }

    /// `users[].user` running this plugin, with a secret in its env and in an argument.
    pub(crate) fn user(&self) -> Value {
        json!({"exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": self.path().display().to_string(),
            "args": ["get-token", "--oidc-client-secret", ENV_SECRET],
            "env": [{"name": "VAULT_TOKEN", "value": ENV_SECRET}],
            "interactiveMode": "IfAvailable",
        }})
    }

    /// The pids the plugin and its helpers ran as, so far.
    pub(crate) fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(self.dir.path().join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// How many times the plugin was run.
    pub(crate) fn runs(&self) -> usize {
        std::fs::read_to_string(self.dir.path().join("runs"))
            .unwrap_or_default()
            .lines()
            .count()
    }

    /// The plugin's processes (and helpers) still running (zombies count as gone).
    pub(crate) fn survivors(&self) -> Vec<u32> {
        self.pids().into_iter().filter(|&pid| alive(pid)).collect()
    }
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or_default().trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        })
        .unwrap_or(false)
}

/// Prints an ExecCredential whose token expires 10 s after the plugin runs.
fn expiring_credential(token: &str) -> String {
    format!(
        "expires=$(date -u -d '+10 seconds' +%Y-%m-%dT%H:%M:%SZ)\n\
         printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\
         \"status\":{{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"}}}}\\n' '{token}' \"$expires\"\n"
    )
}

/// A context of a kubeconfig written by [`write_kubeconfig`].
pub(crate) struct PluginContext<'a> {
    pub name: &'a str,
    pub server: &'a str,
    /// `certificate-authority-data` (base64 PEM), for an HTTPS server.
    pub ca_data: Option<&'a str>,
    pub plugin: &'a ExecPlugin,
}

/// Writes `dir/file`: one cluster, user and context per entry, the first current.
pub(crate) fn write_kubeconfig(dir: &Path, file: &str, contexts: &[PluginContext<'_>]) -> PathBuf {
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": contexts.iter().map(|c| {
            let mut cluster = json!({"server": c.server});
            if let Some(ca) = c.ca_data {
                cluster["certificate-authority-data"] = json!(ca);
            }
            json!({"name": format!("{}-cluster", c.name), "cluster": cluster})
        }).collect::<Vec<_>>(),
        "users": contexts.iter().map(|c| json!({
            "name": format!("{}-user", c.name), "user": c.plugin.user(),
        })).collect::<Vec<_>>(),
        "contexts": contexts.iter().map(|c| json!({
            "name": c.name,
            "context": {"cluster": format!("{}-cluster", c.name), "user": format!("{}-user", c.name)},
        })).collect::<Vec<_>>(),
        "current-context": contexts.first().map(|c| c.name).unwrap_or_default(),
    });
    let path = dir.join(file);
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap())
        .unwrap_or_else(|e| panic!("write kubeconfig {}: {e}", path.display()));
    path
}

/// The server, CA and token of a kubeconfig the real test bed wrote (`DIR/kubeconfig/admin`).
pub(crate) struct RealBedUser {
    pub server: String,
    pub ca_data: String,
    pub token: String,
}

impl RealBedUser {
    pub(crate) fn read(kubeconfig: &Path) -> RealBedUser {
        let text = std::fs::read_to_string(kubeconfig).expect("read the test bed's kubeconfig");
        let doc: Value = serde_yaml_ng::from_str(&text).expect("a YAML kubeconfig");
        let field = |v: &Value| v.as_str().expect("a string field").to_string();
        RealBedUser {
            server: field(&doc["clusters"][0]["cluster"]["server"]),
            ca_data: field(&doc["clusters"][0]["cluster"]["certificate-authority-data"]),
            token: field(&doc["users"][0]["user"]["token"]),
        }
    }
}

/// Asserts that no secret of a plugin run appears in `text` (stdout, stderr, a log).
#[track_caller]
pub(crate) fn assert_no_secret(text: &str, extra: &[&str]) {
    for secret in [ENV_SECRET, FAILING_TOKEN, "s3cr3t", "0a1b2c3d4e5f"]
        .iter()
        .chain(extra)
    {
        assert!(
            !text.contains(secret),
            "the secret {secret:?} leaked into:\n{text}"
        );
    }
}
