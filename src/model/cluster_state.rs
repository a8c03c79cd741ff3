//! Everything k3sdoctor read about one cluster, from whichever source: what the readers in
//! `input/` fill and the analysers judge.

use crate::model::server_metrics::ServerMetrics;
use std::path::PathBuf;
use std::sync::Arc;

use jiff::Timestamp;

use crate::distro::Distro;
use crate::model::admission_webhook::WebhookFacts;
use crate::model::apiserver_endpoints::PublishedAddresses;
use crate::model::bundle_provenance::BundleSource;
use crate::model::collected::Collected;
use crate::model::configmap::ConfigMapFacts;
use crate::model::configmap_listing::ConfigMapListing;
use crate::model::kine_probe::KineProbe;
use crate::model::lease::LeaseFacts;
use crate::model::node::NodeFacts;
use crate::model::node_event::NodeEvent;
use crate::model::packaged_charts::PackagedCharts;
use crate::model::rancher::view::RancherView;
use crate::model::secret_metadata::SecretMeta;
use crate::model::served_certificates::ConnectionCertificates;
use crate::model::snapshot_file::SnapshotFile;
use crate::model::source_gap::SourceGap;
use crate::model::upgrade_plans::UpgradePlans;
use crate::model::webhook_backends::WebhookBackends;

/// Everything k3sdoctor read. A collection is `None` when it was not read (a dump that lacks
/// it), which is different from read and empty: checks that need it must say so rather than
/// report a healthy result.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClusterState {
    pub origin: Origin,
    pub nodes: Option<Vec<NodeFacts>>,
    /// Whether the kubelets' heartbeats were read into the Nodes (only the repairs ask).
    pub heartbeats: Collected<()>,
    /// Leases in kube-system.
    pub leases: Option<Vec<LeaseFacts>>,
    /// ConfigMaps in kube-system that k3sdoctor reads (lock copies, snapshot records).
    pub configmaps: Option<Vec<ConfigMapFacts>>,
    /// ETCDSnapshotFiles; `None` when not read (not asked for, or not in the dump). Shared,
    /// so that `serve`'s store, each evaluation's state and the report rows hold one copy.
    pub snapshot_files: Option<Vec<Arc<SnapshotFile>>>,
    /// The API server does not serve `k3s.cattle.io/v1` ETCDSnapshotFiles (CRD not installed).
    pub snapshot_crd_missing: bool,
    /// The addresses the `kubernetes` Service publishes in `default`.
    pub apiserver_addresses: Collected<PublishedAddresses>,
    /// core/v1 Events in `default` about Nodes (the cert monitor's, the re-encryption
    /// controller's).
    pub node_events: Collected<Vec<NodeEvent>>,
    /// The metadata of the Secrets in kube-system (node passwords, the serving certificate),
    /// never their data; refused without the opt-in `rbac secrets-metadata` role.
    pub secret_metadata: Collected<Vec<SecretMeta>>,
    /// `helm.cattle.io/v1` HelmCharts in kube-system (k3s's and RKE2's packaged components)
    /// and helm-controller's Jobs there.
    pub packaged_charts: Collected<PackagedCharts>,
    /// system-upgrade-controller's Plans, their Jobs and its ConfigMap, in the Plans'
    /// namespaces.
    pub upgrade_plans: Collected<UpgradePlans>,
    /// Every webhook of the Validating- and MutatingWebhookConfigurations.
    pub webhooks: Collected<Vec<WebhookFacts>>,
    /// The Services those webhooks name, and their Endpoints and EndpointSlices.
    pub webhook_backends: WebhookBackends,
    /// Each server's datastore metrics (its apiserver's `/metrics`, etcd's `:2381/metrics`).
    pub server_metrics: Collected<Vec<ServerMetrics>>,
    /// Whether kine still serves a revision written long ago (live, on a cluster without
    /// etcd, when an old enough revision was found); `None`: not probed.
    pub kine_probe: Option<KineProbe>,
    /// The newest time found in the objects: the default `now` for a dump.
    pub newest_timestamp: Option<Timestamp>,
    /// Which object and field [`newest_timestamp`](Self::newest_timestamp) came from, e.g.
    /// `Lease kube-system/k3s spec.renewTime`.
    pub newest_timestamp_from: Option<String>,
    /// The API server's clock when it was read (its `Date` header): the default `now` live.
    pub server_time: Option<Timestamp>,
    /// Things worth telling the user about how the state was read (duplicates, skipped objects).
    pub notes: Vec<String>,
    /// Kinds a support bundle does not hold, with the file that would have and why.
    pub gaps: Vec<SourceGap>,
    /// The file Leases were read from when it names their holders only (a `kubectl get
    /// leases` table): who holds each lock is known, whether it is still renewed is not.
    pub holders_only: Option<String>,
    /// The file Nodes were read from when it is a `kubectl get nodes` table: names, roles,
    /// readiness and versions only, so the checks of etcd members' annotations and finalizers
    /// are not made from it.
    pub nodes_from_table: Option<String>,
    /// The file ETCDSnapshotFiles were read from when it is a `kubectl get etcdsnapshotfiles`
    /// table: names, nodes, locations and sizes only (no times, finalizers, metadata, S3
    /// settings or errors), so the checks that need those report "not checked".
    pub snapshots_from_table: Option<String>,
    /// That table may list only what one server sees (`etcd-snapshot ls`): entries without a
    /// row are not judged orphaned.
    pub snapshots_partial: bool,
    /// What pasted `kubectl get configmaps` tables showed: which snapshot ConfigMaps exist and
    /// their entry counts, never their entries. Read only where `configmaps` lacks the object.
    pub configmap_listing: Option<ConfigMapListing>,
    /// The support bundles read: collector, collection time, files used.
    pub bundles: Vec<BundleSource>,
    /// Rancher's side of this cluster; `None` when Rancher is not involved (no proxy URL,
    /// no `--rancher-*` flag).
    pub rancher: Option<RancherView>,
    /// The client and serving certificates of the live connection; `None` for a dump.
    pub certificates: Option<ConnectionCertificates>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Origin {
    #[default]
    Unknown,
    Live {
        server: String,
    },
    Dump {
        paths: Vec<PathBuf>,
    },
}

impl Origin {
    pub(crate) fn is_dump(&self) -> bool {
        matches!(self, Origin::Dump { .. })
    }
}

impl ClusterState {
    /// Why the input lacks `kind` (`Node`, `Lease`, `ConfigMap`, `ETCDSnapshotFile`), when a
    /// support bundle's reader knows.
    pub(crate) fn gap(&self, kind: &str) -> Option<&SourceGap> {
        self.gaps.iter().find(|g| g.kind == kind)
    }

    /// The time the support bundle records as its collection (the newest, when several are
    /// read), with where it was read.
    pub(crate) fn collected_at(&self) -> Option<(Timestamp, String)> {
        self.bundles
            .iter()
            .filter_map(|b| Some((b.collected_at?, b.collected_at_from.clone()?)))
            .max_by_key(|(t, _)| *t)
    }

    pub(crate) fn lease(&self, name: &str) -> Option<&LeaseFacts> {
        self.leases.as_ref()?.iter().find(|l| l.name == name)
    }

    pub(crate) fn configmap(&self, name: &str) -> Option<&ConfigMapFacts> {
        self.configmaps.as_ref()?.iter().find(|c| c.name == name)
    }

    pub(crate) fn nodes(&self) -> &[NodeFacts] {
        self.nodes.as_deref().unwrap_or_default()
    }

    /// Why an explicit `--distro` cannot be right: every Node that reports a version reports the
    /// other product's (`+k3s1` against `--distro rke2`, or the reverse). `None` when any Node
    /// agrees, or none reports a version.
    pub(crate) fn distro_contradiction(&self, chosen: Distro) -> Option<String> {
        let versions: Vec<(&str, String)> = self
            .nodes()
            .iter()
            .filter_map(|n| Some((n.name.as_str(), n.version.as_ref()?.to_string())))
            .collect();
        let distros: Vec<Option<Distro>> = self
            .nodes()
            .iter()
            .filter_map(|n| n.version.as_ref().map(|v| v.distro()))
            .collect();
        let other = match chosen {
            Distro::K3s => Distro::Rke2,
            Distro::Rke2 => Distro::K3s,
        };
        if distros.is_empty() || distros.iter().any(|d| *d != Some(other)) {
            return None;
        }
        let (first_node, first_version) = &versions[0];
        let more = match versions.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        Some(format!(
            "--distro {}, but every Node reports {} version ({first_version} on {first_node}{more}); drop \
             --distro or pass --distro {}",
            chosen.prog(),
            match other {
                Distro::K3s => "a K3s",
                Distro::Rke2 => "an RKE2",
            },
            other.prog()
        ))
    }

    /// `--distro auto`: the lock names first (a cluster has the locks of the product that
    /// runs it), then the ConfigMap-only locks of old versions, then the node versions.
    pub(crate) fn detect_distro(&self) -> Option<Distro> {
        let from_leases = self
            .leases
            .iter()
            .flatten()
            .find_map(|l| Distro::owning_lock(&l.name));
        let from_configmaps = || {
            self.configmaps
                .iter()
                .flatten()
                .filter(|c| c.leader_record().is_some())
                .find_map(|c| Distro::owning_lock(&c.name))
        };
        let from_nodes = || {
            self.nodes()
                .iter()
                .filter(|n| n.is_server())
                .chain(self.nodes())
                .find_map(|n| n.version.as_ref()?.distro())
        };
        from_leases.or_else(from_configmaps).or_else(from_nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::TestCluster;

    #[test]
    fn an_explicit_distro_that_no_node_runs_is_a_contradiction() {
        let k3s = TestCluster::k3s()
            .server("s1", "v1.29.4+k3s1")
            .server("s2", "v1.29.4+k3s1")
            .build();
        let line = k3s.distro_contradiction(Distro::Rke2).unwrap();
        assert_eq!(
            line,
            "--distro rke2, but every Node reports a K3s version (v1.29.4+k3s1 on s1 and 1 more); drop \
             --distro or pass --distro k3s"
        );
        assert!(k3s.distro_contradiction(Distro::K3s).is_none());
        let mixed = TestCluster::k3s()
            .server("s1", "v1.29.4+k3s1")
            .server("r1", "v1.29.5+rke2r1")
            .build();
        assert!(mixed.distro_contradiction(Distro::Rke2).is_none());
        assert!(
            ClusterState::default()
                .distro_contradiction(Distro::Rke2)
                .is_none()
        );
    }
}
