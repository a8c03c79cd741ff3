//! `serve`'s own flags.

use clap::Args;

use super::SuppressArgs;
use super::value_parsers::{self, parse_listen, parse_regex};

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The address and port to serve the endpoints on (`:9810`: every interface, as in Go).
    #[arg(long, value_name = "ADDR:PORT", default_value = "0.0.0.0:9810", value_parser = parse_listen)]
    pub listen: std::net::SocketAddr,

    /// How to write the log on stderr: text, or one JSON object per line.
    #[arg(long, value_enum, default_value_t = crate::monitor::log::LogFormat::Text)]
    pub log_format: crate::monitor::log::LogFormat,

    #[command(flatten)]
    pub suppress: SuppressArgs,

    /// Who may read /metrics and /report: kubernetes (a bearer token the API server accepts, of an account allowed to get the path: a TokenReview and a SubjectAccessReview, cached briefly) or none (anyone who reaches the port). /healthz and /readyz are always open. docs/monitoring.md.
    #[arg(long, value_enum, value_name = "MODE", env = "K3SDOCTOR_METRICS_AUTH", default_value_t = crate::monitor::access::MetricsAuth::Kubernetes)]
    pub metrics_auth: crate::monitor::access::MetricsAuth,

    /// Repair a split unattended: off, dry-run (gates, plan and one WouldMoveLock Event per split, no write) or on (the move leases follow --fix makes, after --heal-after, when every gate holds). docs/heal.md.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = crate::heal::heal_policy::HealMode::Off)]
    pub heal: crate::heal::heal_policy::HealMode,

    /// Watch every cluster Rancher manages whose name or id matches REGEX (all without it) instead of one cluster: checked in rounds through Rancher's proxy with the Rancher context's credentials, every series labelled with `cluster`. docs/rancher.md.
    #[arg(long, value_name = "REGEX", num_args = 0..=1, default_missing_value = "", value_parser = parse_regex)]
    pub rancher_clusters: Option<regex::Regex>,

    /// With --rancher-clusters: how often a round checks every cluster [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = value_parsers::parse_period)]
    pub interval: Option<std::time::Duration>,

    /// How long a split must last (on the API server's clock, across at least three evaluations) before it is healed.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = value_parsers::parse_period)]
    pub heal_after: std::time::Duration,

    /// At most one heal per this period; a split back within it is reported, not healed, and the period doubles (up to 24h; reset after a day without a split).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = value_parsers::parse_period)]
    pub heal_cooldown: std::time::Duration,
}
