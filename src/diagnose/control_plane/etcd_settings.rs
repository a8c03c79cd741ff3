//! An etcd server's snapshot settings as its `<prog>.io/node-args` shows them, with k3s's
//! defaults for what the annotation leaves out (only flags that were set appear;
//! `pkg/cli/cmds/server.go` holds the defaults). Pure.

use jiff::SignedDuration;

use crate::distro::Distro;
use crate::model::cron_schedule::DEFAULT_SCHEDULE;
use crate::model::kinds::Kind;
use crate::model::node::NodeFacts;
use crate::model::node_args::NodeArgs;

/// `--etcd-snapshot-reconcile-interval`'s default.
pub(crate) const DEFAULT_RECONCILE_INTERVAL: SignedDuration = SignedDuration::from_mins(10);
/// `--etcd-snapshot-retention` and `--etcd-s3-retention`'s default (`defaultSnapshotRentention`).
pub(crate) const DEFAULT_RETENTION: i64 = 5;

/// One etcd server and the settings it runs with.
pub(crate) struct EtcdServer<'a> {
    pub node: &'a NodeFacts,
    /// `None` when the Node carries no readable node-args: its settings are unknown.
    pub args: Option<NodeArgs>,
}

impl EtcdServer<'_> {
    fn value(&self, flag: &str) -> Option<&str> {
        self.args.as_ref()?.value(flag)
    }

    pub(crate) fn snapshots_enabled(&self) -> bool {
        !self
            .args
            .as_ref()
            .is_some_and(|a| a.enabled("etcd-disable-snapshots"))
    }

    pub(crate) fn s3_enabled(&self) -> bool {
        self.args.as_ref().is_some_and(|a| a.enabled("etcd-s3"))
    }

    pub(crate) fn schedule(&self) -> &str {
        self.value("etcd-snapshot-schedule-cron")
            .unwrap_or(DEFAULT_SCHEDULE)
    }

    /// The interval, and whether it was set (else the default).
    pub(crate) fn reconcile_interval(&self) -> SignedDuration {
        self.args
            .as_ref()
            .and_then(|a| a.duration("etcd-snapshot-reconcile-interval"))
            .filter(|d| d.is_positive())
            .unwrap_or(DEFAULT_RECONCILE_INTERVAL)
    }

    pub(crate) fn snapshot_name(&self) -> &str {
        self.value("etcd-snapshot-name").unwrap_or("etcd-snapshot")
    }

    /// `--etcd-snapshot-retention` when set.
    pub(crate) fn snapshot_retention_set(&self) -> Option<i64> {
        self.args.as_ref()?.number("etcd-snapshot-retention")
    }

    /// `--etcd-s3-retention` when set.
    pub(crate) fn s3_retention_set(&self) -> Option<i64> {
        self.args.as_ref()?.number("etcd-s3-retention")
    }

    pub(crate) fn local_retention(&self) -> i64 {
        self.snapshot_retention_set().unwrap_or(DEFAULT_RETENTION)
    }
}

/// The etcd members that run snapshots' bookkeeping: etcd role, not removed, not being
/// deleted. Agentless servers have no Node and so are not here (nor judged).
pub(crate) fn etcd_servers(nodes: &[NodeFacts], distro: Distro) -> Vec<EtcdServer<'_>> {
    nodes
        .iter()
        .filter(|n| n.is_etcd_member() && !n.deleting)
        .map(|node| EtcdServer {
            node,
            args: node.node_args(distro).and_then(Result::ok),
        })
        .collect()
}

/// `5m`, `1h30m`, `10m`: a duration as k3s's flags spell it.
pub(crate) fn go_duration(d: SignedDuration) -> String {
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

/// Object references for Nodes, by name.
pub(crate) fn node_refs<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<crate::diagnose::object_ref::ObjectRef> {
    names
        .into_iter()
        .filter_map(|n| crate::diagnose::object_ref::ObjectRef::new(Kind::Node.name(), None, n))
        .collect()
}
