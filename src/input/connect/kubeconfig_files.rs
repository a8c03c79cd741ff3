//! Which kubeconfig files kubectl would read, and reading them: `--kubeconfig`, else the files
//! in `KUBECONFIG` (merged, missing ones skipped), else `~/.kube/config`; and the admin
//! kubeconfig a k3s or RKE2 server writes for itself, the last resort.

use std::path::{Path, PathBuf};

use kube::config::Kubeconfig;

use crate::distro::Distro;
use crate::input::ReadError;
use crate::input::files::bounded_read::{BoundedReadError, KUBECONFIG_LIMIT, ensure_regular_file};
use crate::input::read_error::cause_chain;

/// The kubeconfig kubectl would use and where it came from (for messages): `--kubeconfig`,
/// else every existing file in `KUBECONFIG` merged in order, else `~/.kube/config`.
pub(crate) fn find_kubeconfig(
    explicit: Option<&Path>,
) -> Result<Option<(Kubeconfig, String)>, ReadError> {
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

/// Test-only: a `:`-separated list of files that stands for the two server kubeconfigs, so
/// tests need not write under /etc. Not documented for users.
const SERVER_KUBECONFIGS_ENV: &str = "K3SDOCTOR_TEST_SERVER_KUBECONFIGS";

/// The first server kubeconfig that exists: k3s writes `/etc/rancher/k3s/k3s.yaml`
/// (pkg/cli/server/server.go, `--write-kubeconfig`), RKE2 `/etc/rancher/rke2/rke2.yaml`.
/// One that exists but cannot be read (mode 0600, not root) is an error naming it.
pub(super) fn server_kubeconfig() -> Result<Option<(Kubeconfig, String)>, ReadError> {
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
}
