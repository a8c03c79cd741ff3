//! The management-cluster objects around a downstream cluster's records (rancher/rancher
//! `pkg/controllers/managementuser/snapshotbackpopulate/`):
//! which clusters Rancher provisions, whether it administers them, the CAPI Machines local
//! snapshots need, a restore in progress, the backpopulate Feature and Rancher's version.

use serde_json::Value;

use super::{ADMINISTRATED_ANNOTATION, DEFAULT_WORKSPACE, string_map, text};

/// `clusters.provisioning.cattle.io`: the cluster as Rancher's UI lists it.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ProvisioningCluster {
    pub namespace: String,
    pub name: String,
    /// `status.clusterName`: the management cluster id (`c-m-…`), the proxy path's id.
    pub cluster_id: Option<String>,
    /// No `spec.rkeConfig`: imported, not provisioned by Rancher.
    pub imported: bool,
}

impl ProvisioningCluster {
    pub(crate) fn from_json(v: &Value) -> ProvisioningCluster {
        ProvisioningCluster {
            namespace: text(v, "/metadata/namespace").unwrap_or_default(),
            name: text(v, "/metadata/name").unwrap_or_default(),
            cluster_id: text(v, "/status/clusterName").filter(|s| !s.is_empty()),
            imported: v.pointer("/spec/rkeConfig").is_none_or(Value::is_null),
        }
    }

    pub(crate) fn reference(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// `clusters.management.cattle.io` (cluster-scoped, `c-m-…` or `local`).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ManagementCluster {
    pub id: String,
    pub display_name: Option<String>,
    /// `provisioning.cattle.io/administrated: "true"`: Rancher's snapshot controllers run for it.
    pub administrated: bool,
    pub workspace: String,
    /// `status.conditions[type=Connected]`: `None` when Rancher does not say.
    pub connected: Option<bool>,
    pub ready: Option<bool>,
    /// The message of the first of Connected/Ready that is not True.
    pub not_ready_message: Option<String>,
}

impl ManagementCluster {
    pub(crate) fn from_json(v: &Value) -> ManagementCluster {
        let annotations = string_map(v, "/metadata/annotations");
        let conditions: Vec<&Value> = v
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .map(|c| c.iter().collect())
            .unwrap_or_default();
        let condition = |kind: &str| {
            conditions
                .iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
                .copied()
        };
        let is_true = |c: Option<&Value>| {
            c.and_then(|c| c.get("status")?.as_str())
                .map(|s| s == "True")
        };
        let message = ["Connected", "Ready"]
            .iter()
            .filter_map(|k| condition(k))
            .filter(|c| c.get("status").and_then(Value::as_str) != Some("True"))
            .find_map(|c| {
                c.get("message")
                    .or_else(|| c.get("reason"))
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty())
                    .map(str::to_string)
            });
        ManagementCluster {
            id: text(v, "/metadata/name").unwrap_or_default(),
            display_name: text(v, "/spec/displayName").filter(|s| !s.is_empty()),
            administrated: annotations
                .get(ADMINISTRATED_ANNOTATION)
                .map(String::as_str)
                == Some("true"),
            workspace: text(v, "/spec/fleetWorkspaceName")
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| DEFAULT_WORKSPACE.to_string()),
            connected: is_true(condition("Connected")),
            ready: is_true(condition("Ready")),
            not_ready_message: message,
        }
    }

    /// Rancher says the downstream cluster cannot be reached: its agent is not connected.
    pub(crate) fn disconnected(&self) -> bool {
        self.connected == Some(false)
    }
}

/// `machines.cluster.x-k8s.io`: what a local snapshot's node must have for Rancher (2.11–2.14).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct CapiMachine {
    pub namespace: String,
    pub name: String,
    pub cluster: Option<String>,
    pub machine_id: Option<String>,
    /// `status.nodeRef.name`: the downstream Node.
    pub node: Option<String>,
    /// Its `PlanApplied` condition, which Rancher sets False once the agent has failed the
    /// plan `max-failures` times.
    pub plan_applied: Option<MachineCondition>,
}

/// One condition of a CAPI Machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MachineCondition {
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub since: Option<jiff::Timestamp>,
}

impl MachineCondition {
    fn of(machine: &Value, kind: &str) -> Option<MachineCondition> {
        let condition = machine
            .pointer("/status/conditions")?
            .as_array()?
            .iter()
            .find(|c| c["type"] == kind)?;
        Some(MachineCondition {
            status: text(condition, "/status").unwrap_or_default(),
            reason: text(condition, "/reason").filter(|r| !r.is_empty()),
            message: text(condition, "/message").filter(|m| !m.is_empty()),
            since: text(condition, "/lastTransitionTime").and_then(|t| t.parse().ok()),
        })
    }
}

impl CapiMachine {
    pub(crate) fn from_json(v: &Value) -> CapiMachine {
        let labels = string_map(v, "/metadata/labels");
        CapiMachine {
            namespace: text(v, "/metadata/namespace").unwrap_or_default(),
            name: text(v, "/metadata/name").unwrap_or_default(),
            cluster: labels
                .get("cluster.x-k8s.io/cluster-name")
                .cloned()
                .or_else(|| text(v, "/spec/clusterName")),
            machine_id: labels.get("rke.cattle.io/machine-id").cloned(),
            node: text(v, "/status/nodeRef/name"),
            plan_applied: MachineCondition::of(v, "PlanApplied"),
        }
    }
}

/// `rkecontrolplanes.rke.cattle.io`: a restore runs while spec and status generations differ.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ControlPlane {
    pub namespace: String,
    pub name: String,
    pub restore_wanted: Option<i64>,
    pub restore_done: Option<i64>,
    /// The snapshot a restore asks for, when one is asked for.
    pub restore_snapshot: Option<String>,
}

impl ControlPlane {
    pub(crate) fn from_json(v: &Value) -> ControlPlane {
        let generation = |p: &str| v.pointer(p).and_then(Value::as_i64);
        ControlPlane {
            namespace: text(v, "/metadata/namespace").unwrap_or_default(),
            name: text(v, "/metadata/name").unwrap_or_default(),
            restore_wanted: generation("/spec/etcdSnapshotRestore/generation"),
            restore_done: generation("/status/etcdSnapshotRestore/generation"),
            restore_snapshot: text(v, "/spec/etcdSnapshotRestore/name").filter(|s| !s.is_empty()),
        }
    }

    /// Rancher postpones record reconciles while this is true (2.11–2.14: the
    /// RKEControlPlane's `etcdSnapshotRestore` generations differ; re-queued each minute).
    pub(crate) fn restore_in_progress(&self) -> bool {
        self.restore_wanted.unwrap_or(0) != self.restore_done.unwrap_or(0)
    }
}

/// `features.management.cattle.io`: `spec.value` when set, else `status.default`.
pub(crate) fn feature_enabled(v: &Value) -> Option<bool> {
    v.pointer("/spec/value")
        .and_then(Value::as_bool)
        .or_else(|| v.pointer("/status/default").and_then(Value::as_bool))
}

/// `settings.management.cattle.io`: `value` when set, else `default`.
pub(crate) fn setting_value(v: &Value) -> Option<String> {
    text(v, "/value")
        .filter(|s| !s.is_empty())
        .or_else(|| text(v, "/default").filter(|s| !s.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_disconnected_cluster_says_why() {
        let c = ManagementCluster::from_json(&json!({
            "metadata": {"name": "c-m-gone", "annotations": {"provisioning.cattle.io/administrated": "true"}},
            "spec": {"displayName": "edge"},
            "status": {"conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Connected", "status": "False", "message": "cluster agent disconnected"}]}
        }));
        assert!(c.administrated && c.disconnected());
        assert_eq!(c.workspace, "fleet-default");
        assert_eq!(
            c.not_ready_message.as_deref(),
            Some("cluster agent disconnected")
        );
    }

    #[test]
    fn the_feature_value_overrides_its_default() {
        assert_eq!(
            feature_enabled(&json!({"spec": {"value": null}, "status": {"default": true}})),
            Some(true)
        );
        assert_eq!(
            feature_enabled(&json!({"spec": {"value": false}, "status": {"default": true}})),
            Some(false)
        );
        assert_eq!(
            setting_value(&json!({"value": "", "default": "v2.11.3"})).as_deref(),
            Some("v2.11.3")
        );
    }

    #[test]
    fn a_restore_runs_while_generations_differ() {
        let cp = ControlPlane::from_json(
            &json!({"spec": {"etcdSnapshotRestore": {"generation": 2, "name": "x"}},
            "status": {"etcdSnapshotRestore": {"generation": 1}}}),
        );
        assert!(cp.restore_in_progress());
        assert!(!ControlPlane::from_json(&json!({})).restore_in_progress());
    }
}
