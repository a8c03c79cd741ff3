//! Where `--ignore` and the config file's `ignore:` list meet: the file is read here (I/O at
//! the edge); matching is `diagnose::suppression`'s.
//!
//! The config file is optional. `--config PATH` names it (and it must then exist); otherwise
//! `$XDG_CONFIG_HOME/k3sdoctor/config.yaml` (`~/.config/k3sdoctor/config.yaml` when
//! `XDG_CONFIG_HOME` is unset) is read when it exists. In a pod, mount a ConfigMap and pass
//! `--config` (deploy/base/serve-deployment.yaml shows where).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::diagnose::suppression::{Suppression, Suppressions};
use crate::exit::Failure;
use crate::settings::SuppressOptions;

/// The config file's schema: unknown keys are refused, so a typo never silently ignores nothing.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    /// `CODE` or `CODE=OBJECT`, as `--ignore` takes them.
    #[serde(default)]
    ignore: Vec<String>,
}

/// The default config path, when the environment names a home for it.
pub(super) fn default_config_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".config"),
    };
    Some(base.join("k3sdoctor").join("config.yaml"))
}

/// The flags' suppressions and the config file's together.
pub(super) fn suppressions(opts: &SuppressOptions) -> Result<Suppressions, Failure> {
    let mut all = opts.ignore.clone();
    let file = match &opts.config {
        Some(path) => Some(path.clone()),
        None => default_config_path().filter(|p| p.is_file()),
    };
    if let Some(path) = file {
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Failure::Refused(format!(
                "cannot read config file {}: {e}; pass an existing file to --config",
                path.display()
            ))
        })?;
        all.extend(parse_config(&path, &text)?);
    }
    Ok(Suppressions(all))
}

fn parse_config(path: &Path, text: &str) -> Result<Vec<Suppression>, Failure> {
    let refused = |what: String| {
        Failure::Refused(format!(
            "config file {}: {what}; fix the file or pass another with --config",
            path.display()
        ))
    };
    let config: ConfigFile = if text.trim().is_empty() {
        ConfigFile::default()
    } else {
        serde_yaml_ng::from_str(text).map_err(|e| refused(e.to_string()))?
    };
    config
        .ignore
        .iter()
        .map(|entry| Suppression::parse(entry).map_err(|e| refused(format!("ignore: {e}"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::finding::FindingCode;

    #[test]
    fn reads_the_ignore_list() {
        let got = parse_config(
            Path::new("c.yaml"),
            "ignore:\n  - version-affected\n  - lease-holder-agentless=node/server-3\n",
        )
        .unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].code, FindingCode::VersionAffected);
        assert_eq!(got[1].object.as_deref(), Some("node/server-3"));
        assert!(parse_config(Path::new("c.yaml"), "").unwrap().is_empty());
    }

    #[test]
    fn refuses_unknown_keys_and_codes_naming_the_file() {
        let err = parse_config(Path::new("c.yaml"), "ignores: [version-affected]\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("config file c.yaml: unknown field `ignores`"),
            "{err}"
        );
        let err = parse_config(Path::new("c.yaml"), "ignore: [nope]\n").unwrap_err();
        assert!(
            err.to_string().contains("'nope' is not a finding code"),
            "{err}"
        );
    }
}
