//! What this binary is and how it was built, for `k3sdoctor version`.
//! The facts come from build.rs at compile time: nothing is looked up at run time.

use serde::Serialize;

/// `kind: Version`; the field names follow `kubectl version -o json`'s where it has one.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BuildInfo {
    pub api_version: &'static str,
    pub kind: &'static str,
    /// The crate's version, e.g. `0.1.0`.
    pub version: &'static str,
    /// The full git commit it was built from, or `unknown` (built outside a git checkout).
    pub git_commit: &'static str,
    /// `clean`, `dirty` (tracked files differed from the commit) or `unknown`.
    pub git_tree_state: &'static str,
    /// RFC 3339, from SOURCE_DATE_EPOCH or else the commit's time (never the build's clock,
    /// so that builds are reproducible); `unknown` without either.
    pub build_date: String,
    /// Where `buildDate` comes from: `SOURCE_DATE_EPOCH`, `commit time` or `unknown`.
    pub build_date_source: &'static str,
    /// `rustc -V` of the compiler that built it.
    pub rustc_version: &'static str,
    /// The target triple, e.g. `x86_64-unknown-linux-musl`.
    pub target: &'static str,
    /// The cargo features enabled in the build (`default` included when it is).
    pub features: Vec<&'static str>,
}

impl BuildInfo {
    pub(crate) fn current() -> BuildInfo {
        let build_date = env!("K3SDOCTOR_BUILD_EPOCH")
            .parse::<i64>()
            .ok()
            .and_then(|s| jiff::Timestamp::from_second(s).ok())
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_else(|| "unknown".into());
        BuildInfo {
            api_version: crate::report::API_VERSION,
            kind: "Version",
            version: env!("CARGO_PKG_VERSION"),
            git_commit: env!("K3SDOCTOR_GIT_COMMIT"),
            git_tree_state: env!("K3SDOCTOR_GIT_TREE_STATE"),
            build_date,
            build_date_source: env!("K3SDOCTOR_BUILD_DATE_SOURCE"),
            rustc_version: env!("K3SDOCTOR_RUSTC_VERSION"),
            target: env!("K3SDOCTOR_TARGET"),
            features: env!("K3SDOCTOR_FEATURES")
                .split(',')
                .filter(|f| !f.is_empty())
                .collect(),
        }
    }

    /// `k3sdoctor 0.1.0`, as `--version` prints it.
    pub(crate) fn short_line(&self, name: &str) -> String {
        format!("{name} {}", self.version)
    }

    /// The lines of `k3sdoctor version` (and `--version -v`).
    pub(crate) fn lines(&self, name: &str) -> Vec<String> {
        let commit = match self.git_tree_state {
            "dirty" => format!("{} (dirty tree)", self.git_commit),
            _ => self.git_commit.to_string(),
        };
        let date = match self.build_date_source {
            "unknown" => self.build_date.clone(),
            source => format!("{} ({source})", self.build_date),
        };
        let features = if self.features.is_empty() {
            "none".to_string()
        } else {
            self.features.join(", ")
        };
        vec![
            self.short_line(name),
            format!("commit:     {commit}"),
            format!("build date: {date}"),
            format!("rustc:      {}", self.rustc_version),
            format!("target:     {}", self.target),
            format!("features:   {features}"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fact_is_known_or_says_unknown() {
        let info = BuildInfo::current();
        for value in [
            info.git_commit,
            info.git_tree_state,
            info.rustc_version,
            info.target,
            info.build_date.as_str(),
        ] {
            assert!(!value.is_empty());
        }
        assert!(["clean", "dirty", "unknown"].contains(&info.git_tree_state));
        assert!(info.rustc_version.starts_with("rustc ") || info.rustc_version == "unknown");
        let lines = info.lines("k3sdoctor");
        assert_eq!(lines[0], format!("k3sdoctor {}", env!("CARGO_PKG_VERSION")));
        assert_eq!(lines.len(), 6);
    }
}
