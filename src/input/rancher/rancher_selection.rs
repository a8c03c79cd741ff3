//! Every management-cluster object read, and picking the one downstream cluster they are
//! compared with: by `--rancher-cluster`, by the proxy URL's id, or by the snapshots both
//! sides name.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::RancherState;
use crate::model::cluster_state::ClusterState;
use crate::model::rancher::machine_plan::MachinePlan;
use crate::model::rancher::management::{
    CapiMachine, ControlPlane, ManagementCluster, ProvisioningCluster, feature_enabled,
    setting_value,
};
use crate::model::rancher::rancher_version::RancherVersion;
use crate::model::rancher::snapshot_record::SnapshotRecord;
use crate::model::rancher::{BACKPOPULATE_FEATURE, SERVER_VERSION_SETTING};

/// What the management cluster (or its dump) holds, for every cluster. A collection is
/// `None` when it was not read.
#[derive(Debug, Clone, Default)]
pub(crate) struct ManagementObjects {
    pub source: String,
    pub kubectl_target: String,
    pub version: Option<String>,
    pub backpopulate: Option<bool>,
    pub provisioning: Option<Vec<ProvisioningCluster>>,
    pub management: Option<Vec<ManagementCluster>>,
    pub records: Option<Vec<SnapshotRecord>>,
    pub machines: Option<Vec<CapiMachine>>,
    pub control_planes: Option<Vec<ControlPlane>>,
    /// The machines' plan Secrets (opt-in), hashed and their data dropped as read.
    pub machine_plans: Option<Vec<MachinePlan>>,
}

/// The kinds k3sdoctor reads there, by `apiVersion` group and `kind`.
pub(crate) const RANCHER_KINDS: [(&str, &str, &str); 8] = [
    (
        "rke.cattle.io",
        "ETCDSnapshot",
        "etcdsnapshots.rke.cattle.io",
    ),
    (
        "provisioning.cattle.io",
        "Cluster",
        "clusters.provisioning.cattle.io",
    ),
    (
        "management.cattle.io",
        "Cluster",
        "clusters.management.cattle.io",
    ),
    ("cluster.x-k8s.io", "Machine", "machines.cluster.x-k8s.io"),
    (
        "rke.cattle.io",
        "RKEControlPlane",
        "rkecontrolplanes.rke.cattle.io",
    ),
    (
        "management.cattle.io",
        "Feature",
        "features.management.cattle.io",
    ),
    (
        "management.cattle.io",
        "Setting",
        "settings.management.cattle.io",
    ),
    // Only those of type rke.cattle.io/machine-plan are kept, and only their plan's hash.
    ("", "Secret", "secrets"),
];

impl ManagementObjects {
    /// Marks the kind `resource` (e.g. `machines.cluster.x-k8s.io`) read, even when empty.
    pub(crate) fn mark_read(&mut self, resource: &str) {
        match resource {
            "etcdsnapshots.rke.cattle.io" => _ = self.records.get_or_insert_with(Vec::new),
            "clusters.provisioning.cattle.io" => _ = self.provisioning.get_or_insert_with(Vec::new),
            "clusters.management.cattle.io" => _ = self.management.get_or_insert_with(Vec::new),
            "machines.cluster.x-k8s.io" => _ = self.machines.get_or_insert_with(Vec::new),
            "rkecontrolplanes.rke.cattle.io" => {
                _ = self.control_planes.get_or_insert_with(Vec::new)
            }
            "secrets" => _ = self.machine_plans.get_or_insert_with(Vec::new),
            _ => {}
        }
    }

    /// Takes in what `other` read (another workspace, read at the same time).
    pub(crate) fn absorb(&mut self, other: ManagementObjects) {
        fn join<T>(into: &mut Option<Vec<T>>, from: Option<Vec<T>>) {
            if let Some(items) = from {
                into.get_or_insert_with(Vec::new).extend(items);
            }
        }
        join(&mut self.records, other.records);
        join(&mut self.provisioning, other.provisioning);
        join(&mut self.management, other.management);
        join(&mut self.machines, other.machines);
        join(&mut self.control_planes, other.control_planes);
        join(&mut self.machine_plans, other.machine_plans);
        self.version = self.version.take().or(other.version);
        self.backpopulate = self.backpopulate.or(other.backpopulate);
    }

    /// Keeps `object` when it is one of [`RANCHER_KINDS`]; `false` otherwise.
    pub(crate) fn add(&mut self, object: &Value) -> bool {
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let group = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|v| v.split_once('/'))
            .map_or("", |(g, _)| g);
        let name = object.pointer("/metadata/name").and_then(Value::as_str);
        match (group, kind) {
            ("rke.cattle.io", "ETCDSnapshot") => {
                push(&mut self.records, SnapshotRecord::from_json(object));
            }
            ("provisioning.cattle.io", "Cluster") => {
                push(
                    &mut self.provisioning,
                    ProvisioningCluster::from_json(object),
                );
            }
            ("management.cattle.io", "Cluster") => {
                push(&mut self.management, ManagementCluster::from_json(object));
            }
            ("cluster.x-k8s.io", "Machine") => {
                push(&mut self.machines, CapiMachine::from_json(object))
            }
            ("rke.cattle.io", "RKEControlPlane") => {
                push(&mut self.control_planes, ControlPlane::from_json(object));
            }
            ("management.cattle.io", "Feature") if name == Some(BACKPOPULATE_FEATURE) => {
                self.backpopulate = feature_enabled(object);
            }
            ("management.cattle.io", "Setting") if name == Some(SERVER_VERSION_SETTING) => {
                self.version = setting_value(object);
            }
            ("management.cattle.io", "Feature" | "Setting") => {}
            ("", "Secret") => match MachinePlan::from_secret_json(object) {
                Some(plan) => push(&mut self.machine_plans, plan),
                None => return false,
            },
            _ => return false,
        }
        true
    }

    /// The clusters this source knows: provisioning Clusters, else the records' labels.
    pub(crate) fn clusters(&self) -> Vec<ProvisioningCluster> {
        if let Some(clusters) = &self.provisioning {
            return clusters.clone();
        }
        let labelled: BTreeSet<(String, String)> = self
            .records
            .iter()
            .flatten()
            .filter_map(|r| Some((r.namespace.clone(), r.cluster()?.to_string())))
            .collect();
        labelled
            .into_iter()
            .map(|(namespace, name)| ProvisioningCluster {
                namespace,
                name,
                ..ProvisioningCluster::default()
            })
            .collect()
    }

    /// Rancher's side of one cluster: `wanted` names it (name, `namespace/name`, id or display
    /// name); else the only cluster, or the one whose records name the downstream snapshots.
    pub(crate) fn select(
        &self,
        wanted: Option<&str>,
        down: &ClusterState,
    ) -> Result<RancherState, String> {
        let clusters = self.clusters();
        let shown = || {
            let names: Vec<String> = clusters
                .iter()
                .map(ProvisioningCluster::reference)
                .collect();
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        };
        let picked = match wanted {
            Some(wanted) => clusters
                .iter()
                .find(|c| self.names(c).iter().any(|n| n == wanted))
                .ok_or_else(|| format!("holds no cluster named {wanted} (it holds {})", shown()))?,
            None if clusters.len() == 1 => &clusters[0],
            None => self.by_overlap(&clusters, down).ok_or_else(|| {
                format!(
                    "holds {} clusters ({}) and none is told by the snapshots both sides name: \
                     pick one with --rancher-cluster NAME",
                    clusters.len(),
                    shown()
                )
            })?,
        };
        Ok(self.state_of(picked))
    }

    /// The names `--rancher-cluster` accepts for `cluster`.
    fn names(&self, cluster: &ProvisioningCluster) -> Vec<String> {
        let mut names = vec![cluster.name.clone(), cluster.reference()];
        names.extend(cluster.cluster_id.clone());
        names.extend(
            self.management_of(cluster)
                .and_then(|m| m.display_name.clone()),
        );
        names
    }

    fn management_of(&self, cluster: &ProvisioningCluster) -> Option<&ManagementCluster> {
        let id = cluster.cluster_id.as_deref()?;
        self.management.iter().flatten().find(|m| m.id == id)
    }

    /// The cluster whose records name the most downstream snapshots, when one does.
    fn by_overlap<'a>(
        &self,
        clusters: &'a [ProvisioningCluster],
        down: &ClusterState,
    ) -> Option<&'a ProvisioningCluster> {
        let downstream: BTreeSet<&str> = down
            .snapshot_files
            .iter()
            .flatten()
            .flat_map(|f| [&*f.name, &*f.snapshot_name])
            .chain(
                down.configmaps
                    .iter()
                    .flatten()
                    .flat_map(|c| c.data.keys().map(String::as_str)),
            )
            .collect();
        let mut score: BTreeMap<(String, String), usize> = BTreeMap::new();
        for r in self.records.iter().flatten() {
            let named = [r.snapshot_name.as_deref(), r.file.name.as_deref()]
                .into_iter()
                .flatten()
                .any(|n| downstream.contains(n));
            if named && let Some(cluster) = r.cluster() {
                *score
                    .entry((r.namespace.clone(), cluster.to_string()))
                    .or_default() += 1;
            }
        }
        let best = score.values().max().copied()?;
        let mut top = score.iter().filter(|(_, s)| **s == best);
        let ((namespace, name), _) = top.next()?;
        if top.next().is_some() {
            return None;
        }
        clusters
            .iter()
            .find(|c| &c.namespace == namespace && &c.name == name)
    }

    /// Rancher's side of one cluster, its objects filtered to it.
    pub(crate) fn state_of(&self, cluster: &ProvisioningCluster) -> RancherState {
        let mine =
            |ns: &str, name: Option<&str>| ns == cluster.namespace && name == Some(&cluster.name);
        let (version, version_note) = self.version();
        let mut gaps = Vec::new();
        let mut gap = |missing: bool, what: &str, resource: &str| {
            if missing {
                gaps.push(format!(
                    "{what} were not read (add `kubectl get {resource} -A -o yaml` from the management cluster)"
                ));
            }
        };
        gap(
            self.records.is_none(),
            "Rancher's snapshot records",
            "etcdsnapshots.rke.cattle.io",
        );
        gap(
            self.management.is_none(),
            "the management Clusters",
            "clusters.management.cattle.io",
        );
        gap(
            self.machines.is_none(),
            "the CAPI Machines",
            "machines.cluster.x-k8s.io",
        );
        gap(
            self.control_planes.is_none(),
            "the RKEControlPlanes",
            "rkecontrolplanes.rke.cattle.io",
        );
        RancherState {
            source: self.source.clone(),
            kubectl_target: self.kubectl_target.clone(),
            version,
            version_note,
            backpopulate: self.backpopulate,
            provisioning: cluster.clone(),
            management: self.management_of(cluster).cloned(),
            records: self.records.as_ref().map(|records| {
                records
                    .iter()
                    .filter(|r| mine(&r.namespace, r.cluster()))
                    .cloned()
                    .collect()
            }),
            machines: self.machines.as_ref().map(|machines| {
                machines
                    .iter()
                    .filter(|m| mine(&m.namespace, m.cluster.as_deref()))
                    .cloned()
                    .collect()
            }),
            control_plane: self
                .control_planes
                .iter()
                .flatten()
                .find(|cp| mine(&cp.namespace, Some(&cp.name)))
                .cloned(),
            machine_plans: self.machine_plans.as_ref().map(|plans| {
                plans
                    .iter()
                    .filter(|p| mine(&p.namespace, p.cluster.as_deref()))
                    .cloned()
                    .collect()
            }),
            gaps,
        }
    }

    /// Rancher's version from its Setting, else a lower bound told by the records' shape.
    fn version(&self) -> (Option<RancherVersion>, Option<String>) {
        if let Some(v) = self.version.as_deref().and_then(RancherVersion::parse) {
            return (Some(v), None);
        }
        let records = self.records.iter().flatten();
        let guess = |minor: u64, patch: u64, text: &str| RancherVersion {
            major: 2,
            minor,
            patch,
            text: text.to_string(),
        };
        let (guess, shape) = if records.clone().any(|r| r.restore_modes.is_some()) {
            (
                Some(guess(14, 0, "2.14 or later")),
                "restore-mode-options annotations",
            )
        } else if records.clone().any(|r| r.snapshot_name.is_some()) {
            // Past the 2.11 loops: a guess must not claim a known bug.
            (
                Some(guess(11, 4, "2.11 or later")),
                "snapshot-name annotations",
            )
        } else if records.clone().any(|r| r.legacy_reconciled) {
            (
                Some(guess(10, 4, "2.10 or earlier")),
                "snapshotbackpopulate-reconciled annotations",
            )
        } else {
            (None, "")
        };
        let unread = match &self.version {
            Some(text) => format!(
                "settings.management.cattle.io/server-version says `{text}`, which is no version"
            ),
            None => "settings.management.cattle.io/server-version was not read".to_string(),
        };
        let note = match &guess {
            Some(v) => format!("Rancher {v}, told by the records' {shape}: {unread}"),
            None => format!("Rancher's version is unknown ({unread}); the 2.11+ rules are used"),
        };
        (guess, Some(note))
    }
}

fn push<T>(list: &mut Option<Vec<T>>, item: T) {
    list.get_or_insert_with(Vec::new).push(item);
}
