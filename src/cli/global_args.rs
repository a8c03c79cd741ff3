//! The global flags (kubectl's spellings) and the value types only they use.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use jiff::Timestamp;

use super::bundle_size;
use super::value_parsers::{parse_namespace, parse_now, parse_request_timeout};
use crate::render::OutputFormat;

/// Flags accepted before or after the subcommand, spelled as kubectl spells them. `--help`
/// lists them after the subcommand's own options, under their own heading.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use; repeat it to read several clusters at once (check, leases).
    #[arg(long, global = true, value_name = "NAME", action = clap::ArgAction::Append)]
    pub context: Vec<String>,

    /// The address and port of the API server, in place of the kubeconfig's.
    #[arg(long, global = true, value_name = "URL")]
    pub server: Option<String>,

    /// The kubeconfig cluster to use, in place of the context's.
    #[arg(long, global = true, value_name = "NAME")]
    pub cluster: Option<String>,

    /// The kubeconfig user to use, in place of the context's.
    #[arg(long, global = true, value_name = "NAME")]
    pub user: Option<String>,

    /// Bearer token for the API server, in place of the user's credentials.
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,

    /// A CA certificate file (PEM) to verify the API server with.
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        conflicts_with = "insecure_skip_tls_verify"
    )]
    pub certificate_authority: Option<PathBuf>,

    /// Do not verify the API server's certificate (insecure).
    #[arg(long, global = true)]
    pub insecure_skip_tls_verify: bool,

    /// The user to impersonate (needs the `impersonate` verb).
    #[arg(long = "as", global = true, value_name = "USER")]
    pub impersonate: Option<String>,

    /// A group to impersonate; repeatable; needs --as.
    #[arg(long = "as-group", global = true, value_name = "GROUP", requires = "impersonate", action = clap::ArgAction::Append)]
    pub impersonate_group: Vec<String>,

    /// The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so
    /// only kube-system is accepted (kubectl's -n, for muscle memory).
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE", value_parser = parse_namespace)]
    pub namespace: Option<String>,

    /// How long to wait for one API request (e.g. 10s, 1m; 0 = no limit).
    #[arg(long, global = true, value_name = "DURATION", default_value = "30s", value_parser = parse_request_timeout)]
    pub request_timeout: RequestTimeout,

    /// Output format.
    #[arg(short = 'o', long = "output", global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,

    /// Which product runs the cluster (auto: from the lock names, then the node versions).
    #[arg(long, global = true, value_enum, default_value_t = DistroChoice::Auto)]
    pub distro: DistroChoice,

    /// Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable.
    #[arg(long = "from-file", global = true, value_name = "PATH")]
    pub from_file: Vec<PathBuf>,

    /// Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB).
    #[arg(long, global = true, value_name = "SIZE", default_value = "2GiB", value_parser = bundle_size::parse)]
    pub max_bundle_size: u64,

    /// Stop reading a support bundle past this many entries (in archives, and files and folders under a folder).
    #[arg(long, global = true, value_name = "N", default_value_t = crate::input::limits::DEFAULT_MAX_ENTRIES, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_bundle_entries: u64,

    /// The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp).
    #[arg(long, global = true, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<Timestamp>,

    /// More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Print nothing for table output; rely on the exit code.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Print only the rows of tables, as kubectl's --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict.
    #[arg(long, global = true)]
    pub no_headers: bool,

    /// When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

impl GlobalArgs {
    /// kubectl's connection flags, for `input::connect`.
    pub fn connection_overrides(&self) -> crate::input::connect::connection_overrides::Overrides {
        crate::input::connect::connection_overrides::Overrides {
            server: self.server.clone(),
            cluster: self.cluster.clone(),
            user: self.user.clone(),
            token: self.token.clone(),
            certificate_authority: self.certificate_authority.clone(),
            insecure_skip_tls_verify: self.insecure_skip_tls_verify,
            impersonate: self.impersonate.clone(),
            impersonate_groups: self.impersonate_group.clone(),
        }
    }

    /// The `--context` of a single-cluster run; `None` when not given or given several times.
    pub fn single_context(&self) -> Option<&str> {
        match self.context.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DistroChoice {
    Auto,
    K3s,
    Rke2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// `--request-timeout`; `None` means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTimeout(pub Option<Duration>);
