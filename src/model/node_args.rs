//! The server's flags as its agent half records them on the Node: `<prog>.io/node-args` (a JSON
//! array) and `<prog>.io/node-env` (a JSON object of `<PROG>_*` variables), written by
//! `pkg/nodeconfig/nodeconfig.go`. Pure parsing; what the flags mean is the analysers' business.
//!
//! The array is `os.Args[1:]` after `configfilearg.MustParse`: the subcommand first, then the
//! config file's keys as `--key=value`, then the command line, each `-x=v` split at its first
//! `=` into two elements (only `--x=v` before commit 5a22c7d4e, July 2026). The element after
//! a flag on k3s's `isSecret` list is replaced by `********`.

use std::collections::BTreeMap;

/// What k3s writes instead of a secret value (`OmittedValue`, pkg/nodeconfig/nodeconfig.go).
pub(crate) const OMITTED: &str = "********";

/// One flag as the annotation carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeFlag {
    /// Without its leading dashes: `etcd-s3-bucket`, `t`.
    pub name: String,
    /// As written: `--etcd-s3-bucket`, `-t`.
    pub spelled: String,
    /// The next element when it is not a flag itself; `None` for a bare boolean flag.
    pub value: Option<String>,
}

/// `<prog>.io/node-args`, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct NodeArgs {
    /// `server` or `agent`.
    pub subcommand: String,
    /// In order; a flag given twice (config file, then command line) appears twice.
    pub flags: Vec<NodeFlag>,
}

/// A secret that anyone who can read Nodes can read. Never carries the value itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExposedSecret {
    /// Where: `--etcd-s3-session-token`, `--kube-apiserver-arg oidc-client-secret`, `K3S_…`.
    pub setting: String,
    /// Why k3s did not redact it.
    pub why: &'static str,
}

/// Flags whose value k3s redacts (`isSecret`, pkg/nodeconfig/nodeconfig.go L127-146).
const REDACTED_BY_K3S: [&str; 7] = [
    "token",
    "t",
    "agent-token",
    "datastore-endpoint",
    "etcd-s3-access-key",
    "etcd-s3-secret-key",
    "vpn-auth",
];

/// Secret flags k3s does not redact: the S3 session token (flag since Feb 2025, commit 0d028a228).
const NOT_REDACTED_BY_K3S: [&str; 1] = ["etcd-s3-session-token"];

impl NodeArgs {
    pub(crate) fn parse(annotation: &str) -> Result<NodeArgs, String> {
        let elements: Vec<String> = serde_json::from_str(annotation)
            .map_err(|e| format!("not a JSON array of strings: {e}"))?;
        let mut rest = elements.into_iter();
        let subcommand = rest.next().unwrap_or_default();
        // Split what k3s before 5a22c7d4e left whole (`-t=…`) the way the flag parser reads it.
        let mut split: Vec<String> = Vec::new();
        for e in rest {
            match e.split_once('=') {
                Some((flag, value)) if is_flag(flag) => {
                    split.push(flag.to_string());
                    split.push(value.to_string());
                }
                _ => split.push(e),
            }
        }
        let mut flags = Vec::new();
        let mut i = 0;
        while i < split.len() {
            let e = &split[i];
            if !is_flag(e) {
                // A positional argument; k3s servers take none, so it says nothing to us.
                i += 1;
                continue;
            }
            let value = split.get(i + 1).filter(|v| !is_flag(v)).cloned();
            i += if value.is_some() { 2 } else { 1 };
            flags.push(NodeFlag {
                name: e.trim_start_matches('-').to_string(),
                spelled: e.clone(),
                value,
            });
        }
        Ok(NodeArgs { subcommand, flags })
    }

    /// The value the server runs with: the last occurrence wins, as in urfave/cli (the
    /// command line comes after the config file). A bare boolean flag reads `true`.
    pub(crate) fn value(&self, name: &str) -> Option<&str> {
        self.flags
            .iter()
            .rev()
            .find(|f| f.name == name)
            .map(|f| f.value.as_deref().unwrap_or("true"))
    }

    /// A boolean flag: `Some(true)` when given bare or as `true`.
    pub(crate) fn enabled(&self, name: &str) -> bool {
        self.value(name)
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "t"))
    }

    /// An integer flag's value, when set and readable.
    pub(crate) fn number(&self, name: &str) -> Option<i64> {
        self.value(name)?.trim().parse().ok()
    }

    /// A Go duration flag's value (`10m`, `1h30m`, `90s`).
    pub(crate) fn duration(&self, name: &str) -> Option<jiff::SignedDuration> {
        parse_go_duration(self.value(name)?)
    }

    /// Every flag value that is a secret and is not `********`.
    pub(crate) fn exposed_secrets(&self) -> Vec<ExposedSecret> {
        let mut out = Vec::new();
        for f in &self.flags {
            let Some(value) = f.value.as_deref() else {
                continue;
            };
            if value == OMITTED || value.is_empty() {
                continue;
            }
            if REDACTED_BY_K3S.contains(&f.name.as_str()) {
                // Only reachable unsplit (`-t=…` before the July 2026 fix) or from a writer
                // other than k3s.
                out.push(ExposedSecret {
                    setting: f.spelled.clone(),
                    why: "written as one `-flag=value` argument, which k3s before the July 2026 releases \
                          (commit 5a22c7d4e) neither split nor redacted",
                });
            } else if NOT_REDACTED_BY_K3S.contains(&f.name.as_str()) {
                out.push(ExposedSecret {
                    setting: f.spelled.clone(),
                    why: "k3s does not redact this flag (it is missing from isSecret in pkg/nodeconfig/nodeconfig.go)",
                });
            } else if f.name.ends_with("-arg")
                && let Some((key, inner)) = value.split_once('=')
                && !inner.is_empty()
                && inner != OMITTED
                && secret_name(key)
            {
                out.push(ExposedSecret {
                    setting: format!("{} {key}", f.spelled),
                    why: "k3s never redacts values passed through --*-arg flags",
                });
            }
        }
        out
    }
}

/// `<prog>.io/node-env`, parsed: every `<PROG>_*` variable the server started with.
pub(crate) fn parse_node_env(annotation: &str) -> Result<BTreeMap<String, String>, String> {
    serde_json::from_str(annotation).map_err(|e| format!("not a JSON object of strings: {e}"))
}

/// Variables of `node-env` that hold a secret k3s did not replace by `********` (it redacts
/// `<PROG>_TOKEN`, `_AGENT_TOKEN`, `_DATASTORE_ENDPOINT`, `_CLUSTER_SECRET`, `_VPN_AUTH` only).
pub(crate) fn exposed_env_secrets(env: &BTreeMap<String, String>) -> Vec<ExposedSecret> {
    env.iter()
        .filter(|(k, v)| !v.is_empty() && v.as_str() != OMITTED && secret_name(k))
        .map(|(k, _)| ExposedSecret {
            setting: k.clone(),
            why: "k3s redacts only the token, agent token, datastore endpoint, cluster secret and VPN auth variables",
        })
        .collect()
}

/// A setting whose name says it holds a secret, not a path to one.
fn secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase().replace('_', "-");
    let secretish = ["token", "secret", "password", "passwd", "access-key"]
        .iter()
        .any(|w| lower.contains(w));
    let reference = ["-file", "-path", "-dir", "-name", "-config-secret"]
        .iter()
        .any(|s| lower.ends_with(s));
    secretish && !reference
}

fn is_flag(e: &str) -> bool {
    e.len() > 1 && e.starts_with('-') && !e.starts_with("---")
}

/// Go's `time.ParseDuration` for the units k3s's flags use (`h`, `m`, `s`, `ms`), e.g. `10m0s`.
pub(crate) fn parse_go_duration(text: &str) -> Option<jiff::SignedDuration> {
    let text = text.trim();
    if text == "0" {
        return Some(jiff::SignedDuration::ZERO);
    }
    let mut total_ms: i64 = 0;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&n| n > 0)?;
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (unit_ms, len) = if rest.starts_with("ms") {
            (1.0, 2)
        } else if rest.starts_with('h') {
            (3_600_000.0, 1)
        } else if rest.starts_with('m') {
            (60_000.0, 1)
        } else if rest.starts_with('s') {
            (1000.0, 1)
        } else {
            return None;
        };
        rest = &rest[len..];
        total_ms = total_ms.checked_add((number * unit_ms) as i64)?;
    }
    Some(jiff::SignedDuration::from_millis(total_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_annotation_k3s_writes() {
        let a = NodeArgs::parse(
            r#"["server","--cluster-init","true","--token","********","--etcd-s3","true","--etcd-s3-bucket","b","--node-name","n1","--etcd-snapshot-reconcile-interval","5m","--disable-agent"]"#,
        )
        .unwrap();
        assert_eq!(a.subcommand, "server");
        assert_eq!(a.value("etcd-s3-bucket"), Some("b"));
        assert!(a.enabled("etcd-s3") && a.enabled("cluster-init") && a.enabled("disable-agent"));
        assert!(!a.enabled("etcd-disable-snapshots"));
        assert_eq!(
            a.duration("etcd-snapshot-reconcile-interval"),
            Some(jiff::SignedDuration::from_mins(5))
        );
        assert!(a.exposed_secrets().is_empty());
    }

    #[test]
    fn the_command_line_wins_over_the_config_file() {
        let a = NodeArgs::parse(
            r#"["server","--etcd-snapshot-retention","5","--etcd-snapshot-retention=12"]"#,
        )
        .unwrap();
        assert_eq!(a.number("etcd-snapshot-retention"), Some(12));
    }

    #[test]
    fn an_unredacted_session_token_is_exposed_a_redacted_one_is_not() {
        let a = NodeArgs::parse(r#"["server","--etcd-s3-session-token","FwoGZXIvYXdzE"]"#).unwrap();
        let exposed = a.exposed_secrets();
        assert_eq!(exposed.len(), 1);
        assert_eq!(exposed[0].setting, "--etcd-s3-session-token");
        let redacted =
            NodeArgs::parse(r#"["server","--etcd-s3-session-token","********"]"#).unwrap();
        assert!(redacted.exposed_secrets().is_empty());
    }

    #[test]
    fn a_single_dash_token_with_equals_is_exposed_before_the_fix_and_redacted_after() {
        // Before 5a22c7d4e: one element, not redacted.
        let before = NodeArgs::parse(r#"["server","-t=K10abc::server:s3cr3t"]"#).unwrap();
        assert_eq!(before.exposed_secrets()[0].setting, "-t");
        // After: split and redacted.
        let after = NodeArgs::parse(r#"["server","-t","********"]"#).unwrap();
        assert!(after.exposed_secrets().is_empty());
    }

    #[test]
    fn secrets_inside_component_args_are_exposed_paths_are_not() {
        let a = NodeArgs::parse(
            r#"["server","--kube-apiserver-arg","oidc-client-secret=abc123","--kube-apiserver-arg","service-account-key-file=/x","--kube-apiserver-arg","token-auth-file=/y","--etcd-s3-config-secret","s3-cfg"]"#,
        )
        .unwrap();
        let settings: Vec<String> = a.exposed_secrets().into_iter().map(|s| s.setting).collect();
        assert_eq!(settings, ["--kube-apiserver-arg oidc-client-secret"]);
    }

    #[test]
    fn env_secrets_other_than_the_redacted_ones_are_exposed() {
        let env = parse_node_env(
            r#"{"K3S_TOKEN":"********","K3S_ETCD_S3_SESSION_TOKEN":"abc","K3S_TOKEN_FILE":"/t","K3S_NODE_NAME":"n"}"#,
        )
        .unwrap();
        let settings: Vec<String> = exposed_env_secrets(&env)
            .into_iter()
            .map(|s| s.setting)
            .collect();
        assert_eq!(settings, ["K3S_ETCD_S3_SESSION_TOKEN"]);
    }

    #[test]
    fn bad_annotations_are_errors_not_panics() {
        assert!(NodeArgs::parse("server --x").is_err());
        assert!(NodeArgs::parse("{}").is_err());
        assert_eq!(NodeArgs::parse("[]").unwrap(), NodeArgs::default());
        assert!(parse_node_env("[1]").is_err());
    }

    #[test]
    fn go_durations() {
        let d = |s| parse_go_duration(s).map(|d| d.as_millis());
        assert_eq!(d("10m0s"), Some(600_000));
        assert_eq!(d("1h30m"), Some(5_400_000));
        assert_eq!(d("1.5s"), Some(1500));
        assert_eq!(d("250ms"), Some(250));
        assert_eq!(d("0"), Some(0));
        assert_eq!(d("10"), None);
        assert_eq!(d("x"), None);
        assert_eq!(d(""), None);
    }
}
