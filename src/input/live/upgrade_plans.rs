//! system-upgrade-controller's Plans, read across namespaces (they live wherever SUC runs:
//! `system-upgrade` in the k3s and RKE2 docs, `cattle-system` under Rancher, anything an
//! operator chose), then in each Plan's namespace only SUC's Jobs (by their
//! `upgrade.cattle.io/plan` label) and its `default-controller-env` ConfigMap (by name). It
//! takes no `ClusterState`, so callers run it beside reads that fill one.

use futures::future::join_all;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde_json::Value;

use super::refusal::{first_refusal, refusal};
use super::{Connection, PAGE_SIZE, ReadError, Trace, get_opt_in, list_with};
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::kinds::Kind;
use crate::model::upgrade_job::{PLAN_LABEL, UpgradeJobFacts};
use crate::model::upgrade_plan::PlanFacts;
use crate::model::upgrade_plans::{CONTROLLER_ENV, ControllerEnv, UpgradePlans};

/// The answer to the reads: what was read (with a note per object that could not be), or why
/// not.
#[derive(Debug, Clone)]
pub(super) enum UpgradePlansRead {
    Read(UpgradePlans, Vec<String>),
    /// The API server refused a read (403).
    Refused(String),
}

impl UpgradePlansRead {
    pub(super) fn fill(self, state: &mut ClusterState) {
        match self {
            UpgradePlansRead::Read(plans, notes) => {
                state.upgrade_plans = Collected::Read(plans);
                state.notes.extend(notes);
            }
            UpgradePlansRead::Refused(why) => state.upgrade_plans = Collected::Refused(why),
        }
    }
}

/// What `upgrade-plans` says when the API server refuses a read.
const FORBIDDEN: &str = "needs list plans.upgrade.cattle.io and jobs, and get configmap \
     default-controller-env, in the Plans' namespaces: `k3sdoctor rbac read-only` prints the role";

pub(super) fn plan_resource() -> ApiResource {
    let row = Kind::Plan.row();
    ApiResource {
        group: row.group().into(),
        version: row.version().into(),
        api_version: row.api_version.into(),
        kind: row.name.into(),
        plural: row.plural.into(),
    }
}

/// `LIST /apis/upgrade.cattle.io/v1/plans` as JSON, paged. `Ok(None)` when the API server
/// does not serve Plans (404: SUC is not installed).
pub(super) async fn list_plans(
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<Option<Vec<Value>>, ReadError> {
    let api: Api<DynamicObject> = Api::all_with(conn.client.clone(), &plan_resource());
    let params = ListParams::default().limit(PAGE_SIZE);
    let to_json = |o: DynamicObject| serde_json::to_value(o).unwrap_or_default();
    match list_with(
        &api,
        "list plans.upgrade.cattle.io",
        conn,
        trace,
        to_json,
        params,
    )
    .await
    {
        Ok(plans) => Ok(Some(plans)),
        Err(e) if e.http_status == Some(404) => {
            trace(
                "plans.upgrade.cattle.io is not served: system-upgrade-controller is not installed",
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// SUC's Jobs in `namespace`, as JSON.
pub(super) async fn list_upgrade_jobs(
    conn: &Connection,
    namespace: &str,
    trace: Trace<'_>,
) -> Result<Vec<Value>, ReadError> {
    let api: Api<Job> = Api::namespaced(conn.client.clone(), namespace);
    let action = format!("list jobs.batch in {namespace} labelled {PLAN_LABEL}");
    let params = ListParams::default().labels(PLAN_LABEL).limit(PAGE_SIZE);
    let to_json = |o: Job| serde_json::to_value(o).unwrap_or_default();
    list_with(&api, &action, conn, trace, to_json, params).await
}

/// SUC's ConfigMap in `namespace`, as JSON, when there is one.
pub(super) async fn get_controller_env(
    conn: &Connection,
    namespace: &str,
    trace: Trace<'_>,
) -> Result<Option<Value>, ReadError> {
    let api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), namespace);
    let found = get_opt_in(&api, namespace, CONTROLLER_ENV, "configmap", conn, trace).await?;
    Ok(found.map(|c| serde_json::to_value(c).unwrap_or_default()))
}

/// The Plans, then each namespace's Jobs and ConfigMap, a namespace at a time (a cluster runs
/// one SUC, rarely two). A 403 is an answer (a role granted before this check), as is a 404
/// for the Plans.
pub(super) async fn read_upgrade_plans(
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<UpgradePlansRead, ReadError> {
    let refused =
        |e: &ReadError| refusal(e, trace, "upgrade-plans not checked", |_| FORBIDDEN.into());
    let plans = match list_plans(conn, trace).await {
        Ok(Some(plans)) => plans,
        Ok(None) => {
            let missing = UpgradePlans {
                plans: Some(Vec::new()),
                crd_missing: true,
                ..UpgradePlans::default()
            };
            return Ok(UpgradePlansRead::Read(missing, Vec::new()));
        }
        Err(e) => return refused(&e).map(UpgradePlansRead::Refused).ok_or(e),
    };
    let mut notes = Vec::new();
    let plans: Vec<PlanFacts> = plans
        .iter()
        .filter_map(|o| {
            PlanFacts::from_json(o)
                .map_err(|why| notes.push(format!("skipped a Plan: {why}")))
                .ok()
        })
        .collect();
    let namespaces = UpgradePlans::namespaces(&plans);
    let reads = join_all(namespaces.iter().map(|ns| async move {
        tokio::join!(
            list_upgrade_jobs(conn, ns, trace),
            get_controller_env(conn, ns, trace)
        )
    }))
    .await;
    let errors = reads
        .iter()
        .flat_map(|(jobs, env)| [jobs.as_ref().err(), env.as_ref().err()]);
    if let Some(why) = first_refusal(errors).and_then(refused) {
        return Ok(UpgradePlansRead::Refused(why));
    }
    let (mut jobs, mut envs) = (Vec::new(), Vec::new());
    for (found_jobs, env) in reads {
        for job in found_jobs? {
            match UpgradeJobFacts::from_json(&job) {
                Ok(job) => jobs.extend(job),
                Err(why) => notes.push(format!("skipped a Job: {why}")),
            }
        }
        envs.extend(env?.as_ref().and_then(ControllerEnv::from_json));
    }
    let read = UpgradePlans {
        plans: Some(plans),
        jobs: Some(jobs),
        controller_env: Some(envs),
        crd_missing: false,
    };
    Ok(UpgradePlansRead::Read(read, notes))
}
