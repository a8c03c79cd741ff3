//! The flags that select a fleet of clusters rather than one.

use clap::Args;

use std::time::Duration;

use super::value_parsers::{parse_regex, parse_request_timeout};
use super::{GlobalArgs, RequestTimeout};

/// Selecting several clusters (`check` and `leases`): every context, a pattern, or
/// `--context` repeated; each is read with its own client, concurrently.
#[derive(Debug, Clone, Default, Args)]
pub struct FleetArgs {
    /// Read every context of the kubeconfig (the KUBECONFIG files merged as kubectl merges them).
    #[arg(long, conflicts_with = "contexts")]
    pub all_contexts: bool,

    /// Read the contexts whose name matches this regular expression (anywhere in the name; anchor it with ^ and $).
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub contexts: Option<regex::Regex>,

    /// Read every cluster Rancher manages whose name or id matches REGEX (all without it), through Rancher's proxy with the current Rancher context's credentials.
    #[arg(long, value_name = "REGEX", num_args = 0..=1, default_missing_value = "", value_parser = parse_regex, conflicts_with_all = ["all_contexts", "contexts"])]
    pub rancher_clusters: Option<regex::Regex>,

    /// Read at most this many clusters at once [default: 16].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub parallel: Option<u16>,

    /// With --rancher-clusters: how long a cluster may take to give its first answer through Rancher before it is reported unreachable (Rancher takes 20-40 s to say that a cluster's agent is disconnected; 0 = no limit) [default: 10s].
    #[arg(long, value_name = "DURATION", value_parser = parse_request_timeout)]
    pub cluster_timeout: Option<RequestTimeout>,

    /// A cluster that cannot be read is a warning row instead of exit 3.
    #[arg(long)]
    pub ignore_unreachable: bool,
}

impl FleetArgs {
    pub const DEFAULT_PARALLEL: u16 = 16;
    /// A connected cluster's first answer through Rancher takes well under a second; one whose
    /// agent is gone takes Rancher 20-40 s to report.
    pub const DEFAULT_CLUSTER_TIMEOUT: Duration = Duration::from_secs(10);

    /// `--cluster-timeout`, else the default; `None`: no limit.
    pub fn cluster_timeout(&self) -> Option<Duration> {
        match &self.cluster_timeout {
            Some(given) => given.0,
            None => Some(Self::DEFAULT_CLUSTER_TIMEOUT),
        }
    }

    /// Whether this run reads a fleet rather than one cluster.
    pub fn selects_fleet(&self, global: &GlobalArgs) -> bool {
        self.all_contexts
            || self.contexts.is_some()
            || self.rancher_clusters.is_some()
            || global.context.len() > 1
    }
}
