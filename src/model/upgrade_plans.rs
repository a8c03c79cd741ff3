//! What the upgrade-plans check reads: system-upgrade-controller's Plans, the Jobs it runs
//! for them and its `default-controller-env` ConfigMap, all in the Plans' namespaces.

use serde_json::Value;

use super::helm_chart::text;
use super::upgrade_job::UpgradeJobFacts;
use super::upgrade_plan::PlanFacts;

/// The ConfigMap SUC's Deployment takes its environment from (`envFrom`), in its own
/// namespace, which is where it looks for Plans.
pub(crate) const CONTROLLER_ENV: &str = "default-controller-env";
/// The key that sets every Job's `activeDeadlineSeconds` (the shipped manifest: "900").
pub(crate) const DEADLINE_KEY: &str = "SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS";

/// The Plans and what judges them. `plans` is `None` when not read (a dump with only SUC's
/// Jobs); `jobs` and `controller_env` when those were not (the Plans' own status and their
/// Nodes' cordons are still judged).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UpgradePlans {
    pub plans: Option<Vec<PlanFacts>>,
    pub jobs: Option<Vec<UpgradeJobFacts>>,
    pub controller_env: Option<Vec<ControllerEnv>>,
    /// The API server does not serve `upgrade.cattle.io/v1` Plans: SUC is not installed.
    pub crd_missing: bool,
}

/// The deadline `default-controller-env` sets, in one namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ControllerEnv {
    pub namespace: String,
    /// `SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS` as written, when set.
    pub job_deadline: Option<String>,
}

impl ControllerEnv {
    /// The facts of the ConfigMap; `None` for any other object.
    pub(crate) fn from_json(object: &Value) -> Option<ControllerEnv> {
        let meta = object.get("metadata");
        if text(meta, "name").as_deref() != Some(CONTROLLER_ENV) {
            return None;
        }
        Some(ControllerEnv {
            namespace: text(meta, "namespace").unwrap_or_default(),
            job_deadline: text(object.get("data"), DEADLINE_KEY),
        })
    }
}

impl UpgradePlans {
    /// The controller's ConfigMap in `namespace`, when read.
    pub(crate) fn env_in(&self, namespace: &str) -> Option<&ControllerEnv> {
        self.controller_env
            .as_deref()?
            .iter()
            .find(|e| e.namespace == namespace)
    }

    /// The Plans' namespaces, each once: where the Jobs and the ConfigMap are read.
    pub(crate) fn namespaces(plans: &[PlanFacts]) -> Vec<String> {
        let mut namespaces: Vec<String> = plans.iter().map(|p| p.namespace.clone()).collect();
        namespaces.sort();
        namespaces.dedup();
        namespaces
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_controllers_configmap_is_kept() {
        let env = ControllerEnv::from_json(&json!({
            "metadata": {"name": CONTROLLER_ENV, "namespace": "system-upgrade"},
            "data": {DEADLINE_KEY: "900", "SYSTEM_UPGRADE_JOB_BACKOFF_LIMIT": "99"}
        }))
        .unwrap();
        assert_eq!(env.job_deadline.as_deref(), Some("900"));
        let other = json!({"metadata": {"name": "k3s", "namespace": "kube-system"}});
        assert_eq!(ControllerEnv::from_json(&other), None);
        let plans = UpgradePlans {
            controller_env: Some(vec![env]),
            ..UpgradePlans::default()
        };
        assert!(plans.env_in("system-upgrade").is_some());
        assert!(plans.env_in("cattle-system").is_none());
    }
}
