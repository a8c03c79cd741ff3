//! What to do about a stuck upgrade, by what the Plan shows of its controller's version:
//! system-upgrade-controller up to v0.13.4 re-creates a failed Job by itself; from
//! v0.15.3/v0.16.0 (rancher/system-upgrade-controller#369) it does not, and the Plan must be
//! edited to retry. Deleting a failing Plan leaves its nodes cordoned (#71).

use crate::model::upgrade_job::UpgradeJobFacts;
use crate::model::upgrade_plan::PlanFacts;

/// What the Plan's status tells of the controller that wrote it (k3sdoctor reads no
/// Deployment, so this is all it knows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SucGeneration {
    /// No `Complete` condition: before v0.13.3 (PR #292), which re-creates failed Jobs.
    RecreatesJobs,
    /// `Complete=False/JobFailed`: v0.15.3/v0.16.0 or later, which does not.
    EditToRetry,
    /// A `Complete` condition without JobFailed: v0.13.3 or later, either behaviour.
    Unknown,
}

impl SucGeneration {
    pub(crate) fn of(plan: &PlanFacts) -> SucGeneration {
        match &plan.complete {
            None => SucGeneration::RecreatesJobs,
            Some(_) if plan.job_failed().is_some() => SucGeneration::EditToRetry,
            Some(_) => SucGeneration::Unknown,
        }
    }
}

/// The remediation: the Job's logs while it lasts, how to retry for that SUC, and the
/// uncordon a cordoned node needs once the upgrade is given up.
pub(crate) fn next_step(
    plan: &PlanFacts,
    node: &str,
    job: Option<&UpgradeJobFacts>,
    cordoned: bool,
    generation: SucGeneration,
) -> String {
    let ns = &plan.namespace;
    let look = match job {
        Some(job) => format!(
            "kubectl -n {ns} logs job/{}; fix what it names, then ",
            job.name
        ),
        None => format!(
            "the Job is gone: read the k3s or rke2 service log on {node}, fix the cause, then "
        ),
    };
    let edit = format!(
        "edit the Plan to retry (kubectl -n {ns} edit plan {}: SUC v0.15.3 and later do not \
         re-create a failed Job)",
        plan.name
    );
    let retry = match generation {
        SucGeneration::RecreatesJobs => {
            "SUC before v0.13.3 re-creates the failed Job by itself".to_string()
        }
        SucGeneration::EditToRetry => edit,
        SucGeneration::Unknown => format!(
            "{edit}; SUC up to v0.13.4 re-creates it by itself (the SUC version is unknown: \
             k3sdoctor does not read its Deployment)"
        ),
    };
    let uncordon = if cordoned {
        format!(
            "; if you give up the upgrade, kubectl uncordon {node} (deleting the Plan leaves it cordoned)"
        )
    } else {
        String::new()
    };
    format!("{look}{retry}{uncordon}")
}
