//! What a report says it read from a support bundle: the collector, when it ran, and which
//! files fed which check (`readFrom` in JSON, `-v` on the terminal).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use crate::model::kinds::Kind;

/// The collector whose layout a bundle has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Collector {
    /// replicatedhq/troubleshoot (`kubectl support-bundle`).
    Troubleshoot,
    /// rancher/support-bundle-kit (Harvester, Longhorn).
    SupportBundleKit,
    /// rancherlabs/support-tools `rancher2_logs_collector.sh`.
    #[serde(rename = "rancher-logs-collector")]
    RancherLogs,
    /// SUSE supportconfig with the k8s plugin (the Rancher collector's tree inside).
    Supportconfig,
}

impl Collector {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Collector::Troubleshoot => "troubleshoot (kubectl support-bundle)",
            Collector::SupportBundleKit => "support-bundle-kit",
            Collector::RancherLogs => "Rancher logs collector",
            Collector::Supportconfig => "supportconfig (Rancher logs collector inside)",
        }
    }
}

/// One file a bundle's objects came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileRead {
    /// Inside the bundle.
    pub path: String,
    /// Objects k3sdoctor used from it, by kind.
    pub objects: BTreeMap<String, usize>,
    /// The checks those objects feed.
    pub feeds: Vec<&'static str>,
}

/// A kind the bundle does not hold: the checks it feeds did not run on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NotCollected {
    pub kind: String,
    /// The file that would have held it.
    pub file: String,
    pub reason: String,
    pub feeds: Vec<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BundleSource {
    /// As given to --from-file; `outer:inner` for an archive inside another.
    pub path: String,
    pub collector: Collector,
    /// `gzip tar`, `zip`, `folder`, ...
    pub container: String,
    /// When the collector ran, as it recorded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collected_at: Option<Timestamp>,
    /// Where that time was read, e.g. `folder name support-bundle-2024-05-31T12_10_45`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collected_at_from: Option<String>,
    pub files: Vec<FileRead>,
    pub not_collected: Vec<NotCollected>,
}

/// The checks (as `check` names them) that objects of `kind` feed.
pub(crate) fn feeds(kind: &str) -> Vec<&'static str> {
    Kind::named(kind).map_or_else(Vec::new, |kind| kind.row().feeds.to_vec())
}

/// One line: what was read. `note: read a troubleshoot (kubectl support-bundle) bundle
/// (gzip tar) b.tar.gz, collected 2024-05-31T12:10:45Z; -v lists the files`.
pub(crate) fn summary(bundle: &BundleSource) -> String {
    let when = bundle
        .collected_at
        .map(|t| format!(", collected {}", t.strftime("%Y-%m-%dT%H:%M:%SZ")))
        .unwrap_or_else(|| ", collection time not recorded".to_string());
    let missing = match bundle.not_collected.len() {
        0 => String::new(),
        n => format!("; {n} kind(s) it does not hold"),
    };
    format!(
        "note: read a {} bundle ({}) {}{when}{missing}; -v lists the files each check used",
        bundle.collector.describe(),
        bundle.container,
        bundle.path
    )
}

/// `-v`: each file and what it fed, then each kind not collected.
pub(crate) fn details(bundle: &BundleSource) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(from) = &bundle.collected_at_from {
        lines.push(format!("{}: collection time from the {from}", bundle.path));
    }
    for file in &bundle.files {
        let objects = file
            .objects
            .iter()
            .map(|(kind, n)| format!("{n} {kind}"))
            .collect::<Vec<_>>()
            .join(", ");
        let objects = if objects.is_empty() {
            "nothing k3sdoctor uses".to_string()
        } else {
            objects
        };
        lines.push(format!(
            "{}: read {} ({objects}) for {}",
            bundle.path,
            file.path,
            if file.feeds.is_empty() {
                "no check".to_string()
            } else {
                file.feeds.join(", ")
            }
        ));
    }
    for gap in &bundle.not_collected {
        lines.push(format!(
            "{}: no {} in {} ({}): {} did not run on it",
            bundle.path,
            gap.kind,
            gap.file,
            gap.reason,
            gap.feeds.join(", ")
        ));
    }
    lines
}
