//! `upgrade-plan-stuck`: a system-upgrade-controller Plan whose upgrade of a node has not
//! finished in time. Judged from what outlives the Job, since SUC deletes a failed Job after
//! its TTL and, from v0.15.3/v0.16.0 (rancher/system-upgrade-controller#369), does not create
//! it again: the node in `status.applying`, its cordon and that cordon's age, the Plan's
//! `Complete=False/JobFailed`, and a failed Job while it is still there.

use jiff::Timestamp;

use super::job_deadline::Deadline;
use super::next_step::{SucGeneration, next_step};
use crate::age;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::line_cap::{LONGEST_QUOTE, cap_at};
use crate::model::helm_job::JobState;
use crate::model::node::NodeFacts;
use crate::model::upgrade_job::UpgradeJobFacts;
use crate::model::upgrade_plan::PlanFacts;
use crate::model::upgrade_plans::UpgradePlans;

const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// Why one node's upgrade by one Plan is stuck.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stall {
    /// The Job is there and failed (or is about to: `FailureTarget`).
    JobFailed { reason: String, message: String },
    /// The Job is gone; the Plan's `Complete` condition still says it failed.
    PlanSaysFailed { message: String },
    /// The Job still runs past its deadline (the Job controller should have failed it).
    PastDeadline { running_since: Timestamp },
    /// No Job, the node still in `applying` and not labelled done, for longer than a Job may
    /// run: it failed and was deleted after its TTL, or was never made.
    NoJob {
        since: Timestamp,
        dated_by: &'static str,
    },
}

/// One node a Plan is upgrading.
struct Upgrade<'a> {
    plan: &'a PlanFacts,
    node_name: String,
    node: Option<&'a NodeFacts>,
    job: Option<&'a UpgradeJobFacts>,
    deadline: Deadline,
}

impl Upgrade<'_> {
    fn is_server(&self) -> bool {
        self.node.map_or(
            self.plan.selects_control_plane,
            NodeFacts::runs_control_plane,
        )
    }

    fn cordoned_since(&self) -> Option<Option<Timestamp>> {
        self.node.and_then(|n| n.cordon).map(|c| c.since)
    }

    fn labelled_done(&self) -> bool {
        let label = self.plan.node_label();
        let value = self.node.and_then(|n| n.labels.get(&label));
        value.is_some() && value == self.plan.latest_hash.as_ref()
    }
}

/// The findings about every Plan `read` holds.
pub(crate) fn analyse_upgrade_plans(
    read: &UpgradePlans,
    nodes: &[NodeFacts],
    now: Timestamp,
) -> Vec<Finding> {
    let plans = read.plans.as_deref().unwrap_or_default();
    let jobs = read.jobs.as_deref().unwrap_or_default();
    let mut stuck: Vec<(Upgrade, Stall)> = Vec::new();
    for plan in plans {
        for node_name in nodes_in_play(plan, jobs, nodes) {
            let node = nodes.iter().find(|n| n.name == node_name);
            let job = newest_job(plan, &node_name, jobs);
            let upgrade = Upgrade {
                deadline: Deadline::of(job, plan, read),
                plan,
                node_name,
                node,
                job,
            };
            if let Some(stall) = judge(&upgrade, now) {
                stuck.push((upgrade, stall));
            }
        }
    }
    let stuck_plans: Vec<&PlanFacts> = stuck.iter().map(|(u, _)| u.plan).collect();
    stuck
        .iter()
        .map(|(upgrade, stall)| {
            let waits_on = blocking_server_plan(upgrade, plans);
            let finding = finding(upgrade, stall, waits_on, now);
            match waits_on {
                Some(server) if stuck_plans.iter().any(|p| p.key() == server.key()) => {
                    finding.caused_by(Some(FindingCode::UpgradePlanStuck))
                }
                _ => finding,
            }
        })
        .collect()
}

/// The Nodes (by name) a Plan is working on: its `applying` hostnames, the nodes of its failed
/// Jobs, and the node its `JobFailed` message names.
fn nodes_in_play(plan: &PlanFacts, jobs: &[UpgradeJobFacts], nodes: &[NodeFacts]) -> Vec<String> {
    let by_hostname = |hostname: &String| {
        nodes
            .iter()
            .find(|n| n.labels.get(HOSTNAME_LABEL) == Some(hostname))
            .map_or_else(|| hostname.clone(), |n| n.name.clone())
    };
    let mut names: Vec<String> = plan.applying.iter().map(by_hostname).collect();
    names.extend(
        jobs.iter()
            .filter(|j| j.namespace == plan.namespace && j.plan == plan.name && j.failed())
            .map(|j| j.node.clone()),
    );
    names.extend(plan.job_failed().and_then(|c| failed_node(&c.message)));
    let mut seen = std::collections::BTreeSet::new();
    names.retain(|n| !n.is_empty() && seen.insert(n.clone()));
    names
}

/// The node of `Job <ns>/<job> failed on Node <node>: <reason>: <message>` (SUC's message).
fn failed_node(message: &str) -> Option<String> {
    let rest = message.split_once(" failed on Node ")?.1;
    Some(rest.split(':').next()?.trim().to_string())
}

fn newest_job<'a>(
    plan: &PlanFacts,
    node: &str,
    jobs: &'a [UpgradeJobFacts],
) -> Option<&'a UpgradeJobFacts> {
    jobs.iter()
        .filter(|j| j.namespace == plan.namespace && j.plan == plan.name && j.node == node)
        .max_by_key(|j| j.started)
}

fn judge(upgrade: &Upgrade, now: Timestamp) -> Option<Stall> {
    // Labelled with the latest hash: done, whatever an older Job left behind.
    if upgrade.labelled_done() {
        return None;
    }
    let deadline = upgrade.deadline.duration();
    match upgrade.job.map(|j| &j.state) {
        Some(JobState::Failed {
            reason, message, ..
        }) => {
            return Some(Stall::JobFailed {
                reason: reason.clone(),
                message: message.clone(),
            });
        }
        Some(JobState::Running) => {
            let started = upgrade.job.and_then(|j| j.started)?;
            return (now.duration_since(started) > deadline?).then_some(Stall::PastDeadline {
                running_since: started,
            });
        }
        Some(JobState::Complete) => return None,
        None => {}
    }
    let said_failed = upgrade
        .plan
        .job_failed()
        .filter(|c| failed_node(&c.message).as_deref() == Some(upgrade.node_name.as_str()));
    if let Some(condition) = said_failed {
        return Some(Stall::PlanSaysFailed {
            message: condition.message.clone(),
        });
    }
    // Dated by the cordon SUC put on it, else by when the Plan began to sync the Job.
    let (since, dated_by) = match upgrade.cordoned_since() {
        Some(Some(since)) => (since, "cordoned"),
        _ => {
            let syncing = upgrade
                .plan
                .complete
                .as_ref()
                .filter(|c| c.status == "False")?;
            (syncing.since?, "the Plan not Complete")
        }
    };
    (now.duration_since(since) > deadline?).then_some(Stall::NoJob { since, dated_by })
}

/// The server Plan an agent's upgrade waits on in `prepare`, while that Plan still applies:
/// the one its `prepare` names, else a control-plane Plan of the same namespace.
fn blocking_server_plan<'a>(upgrade: &Upgrade, plans: &'a [PlanFacts]) -> Option<&'a PlanFacts> {
    if upgrade.is_server() {
        return None;
    }
    let same_namespace = plans
        .iter()
        .filter(|p| p.namespace == upgrade.plan.namespace && p.name != upgrade.plan.name);
    let mut candidates = same_namespace.filter(|p| match &upgrade.plan.prepare_waits_on {
        Some(name) => &p.name == name,
        None => p.selects_control_plane,
    });
    candidates.find(|p| !p.applying.is_empty())
}

fn finding(
    upgrade: &Upgrade,
    stall: &Stall,
    waits_on: Option<&PlanFacts>,
    now: Timestamp,
) -> Finding {
    let plan = upgrade.plan;
    let role = if upgrade.is_server() {
        "server"
    } else {
        "node"
    };
    let target = plan
        .latest_version
        .as_deref()
        .map(|v| format!(" to {v}"))
        .unwrap_or_default();
    let ago = |t: Timestamp| age::short(now.duration_since(t));
    let job_name = upgrade
        .job
        .map(|j| format!("Job {}/{}", j.namespace, j.name));
    let what = match stall {
        Stall::JobFailed { reason, message } => format!(
            "{} failed: {reason}: {}",
            job_name.clone().unwrap_or_default(),
            cap_at(message, LONGEST_QUOTE)
        ),
        Stall::PlanSaysFailed { message } => format!(
            "the Plan's Complete condition says JobFailed ({}); the Job is gone (deleted after its TTL)",
            cap_at(message, LONGEST_QUOTE)
        ),
        Stall::PastDeadline { running_since } => format!(
            "{} has run for {}, past its deadline",
            job_name.clone().unwrap_or_default(),
            ago(*running_since)
        ),
        Stall::NoJob { since, dated_by } => format!(
            "still in status.applying, not labelled {}={}, and no Job for it ({dated_by} {} ago): \
             the Job failed and was deleted after its TTL, or was never made",
            plan.node_label(),
            plan.latest_hash.as_deref().unwrap_or("?"),
            ago(*since)
        ),
    };
    let cordon = match upgrade.cordoned_since() {
        Some(Some(since)) => format!(
            "; {} is left cordoned since {since} ({} ago)",
            upgrade.node_name,
            ago(since)
        ),
        Some(None) => format!("; {} is left cordoned", upgrade.node_name),
        None => String::new(),
    };
    let waiting = waits_on
        .map(|server| {
            format!(
                "; server Plan {} is still applying on {}: agent Jobs wait in prepare until it \
                 is done, so that Plan is the one stuck",
                server.key(),
                server.applying.join(", ")
            )
        })
        .unwrap_or_default();
    let failed = matches!(
        stall,
        Stall::JobFailed { .. } | Stall::PlanSaysFailed { .. }
    );
    let severity = if upgrade.is_server() && (failed || upgrade.cordoned_since().is_some()) {
        Severity::Error
    } else {
        Severity::Warning
    };
    let message = format!(
        "the upgrade of {role} {}{target} has not finished: {what}; Job deadline {}{cordon}{waiting}",
        upgrade.node_name,
        upgrade.deadline.describe(),
    );
    let step = next_step(
        plan,
        &upgrade.node_name,
        upgrade
            .job
            .filter(|_| !matches!(stall, Stall::NoJob { .. })),
        upgrade.cordoned_since().is_some(),
        SucGeneration::of(plan),
    );
    Finding::new(
        severity,
        FindingCode::UpgradePlanStuck,
        format!("Plan {}", plan.key()),
        message,
    )
    .fix(step)
}

#[cfg(test)]
mod tests;
