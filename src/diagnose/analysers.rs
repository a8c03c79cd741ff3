//! The analysers `check` runs, as one table: each returns its findings and whether it ran, so a
//! collection that was not read shows as "not checked", never as healthy.

use crate::model::collected::Collected;
use crate::model::datastore::Datastore;
use jiff::Timestamp;
use serde::Serialize;

use super::admission::webhooks::analyse_webhooks;
use super::control_plane::apiserver_endpoints::{self, analyse_apiserver_endpoints};
use super::control_plane::cert_expiry::{
    analyse_cert_expiry, events_not_checked, unmonitored_servers,
};
use super::control_plane::connection_certificates::analyse_connection_certificates;
use super::control_plane::etcd_config_drift::analyse_etcd_config_drift;
use super::control_plane::etcd_members::voter_not_published;
use super::control_plane::membership::analyse_membership;
use super::control_plane::node_args_secrets::analyse_node_args_secrets;
use super::control_plane::node_passwords::{
    analyse_node_passwords, analyse_serving_cert_static, secrets_not_checked,
};
use super::control_plane::packaged_charts::analyse_packaged_charts;
use super::control_plane::secrets_encryption::analyse_secrets_encryption;
use super::control_plane::secrets_reencrypt::analyse_secrets_reencrypt;
use super::datastore::analyse_datastore;
use super::finding::Finding;
use super::leases::LeaseAnalysis;
use super::leases::lock_status::{self, LockState};
use super::snapshots::SnapshotAnalysis;
use super::snapshots::snapshot_files::{analyse_snapshot_files, missing_input};
use super::snapshots::snapshot_reconcile_stalled::analyse_reconcile_stalled;
use super::snapshots::snapshot_s3::analyse_s3_snapshots;
use super::upgrades::plan_stuck::analyse_upgrade_plans;
use super::upgrades::version_skew::analyse_version_skew;
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::configmap_listing::Listed;

/// Whether an analyser ran, and why not.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckRun {
    pub name: &'static str,
    pub ran: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl CheckRun {
    pub(super) fn of(name: &'static str, not_run: Option<impl Into<String>>) -> CheckRun {
        CheckRun {
            name,
            ran: not_run.is_none(),
            note: not_run.map(Into::into).unwrap_or_default(),
        }
    }
}

/// What every analyser reads: the cluster, and the two analyses others build on (the lock
/// verdict, and the ConfigMap comparison when the CRD exists) made once beforehand.
pub(super) struct Inputs<'a> {
    pub state: &'a ClusterState,
    pub distro: Distro,
    pub now: Timestamp,
    pub leases: &'a LeaseAnalysis,
    pub snapshots: Option<&'a SnapshotAnalysis>,
}

/// One analyser's findings, and its line in `checks` (`None` for a check listed only when it
/// could not judge).
pub(super) struct Analysed {
    pub findings: Vec<Finding>,
    pub run: Option<CheckRun>,
}

type Analyser = fn(&Inputs) -> Analysed;

/// Every analyser, in the order `check` lists them and their findings.
pub(super) const ANALYSERS: [Analyser; 20] = [
    leases,
    lock_presence,
    snapshots,
    membership,
    etcd_voter,
    etcd_config,
    snapshot_schedule,
    snapshot_files,
    apiserver_endpoints,
    secrets_encryption,
    connection_certificates,
    certificates,
    secrets_reencrypt,
    node_passwords,
    serving_cert_static,
    packaged_charts,
    admission_webhooks,
    datastore,
    upgrade_plans,
    version_skew,
];

/// The analysers of ETCDSnapshotFiles beyond the ConfigMap comparison, for `snapshots
/// list|diff`.
pub(super) const SNAPSHOT_FILE_ANALYSERS: [Analyser; 2] = [snapshot_schedule, snapshot_files];

fn leases(i: &Inputs) -> Analysed {
    Analysed {
        findings: i.leases.findings.clone(),
        run: Some(CheckRun::of("leases", None::<String>)),
    }
}

/// A lock absent from an input that cannot show it, on an unknown version.
fn lock_presence(i: &Inputs) -> Analysed {
    let unjudged: Vec<&str> = i
        .leases
        .locks
        .iter()
        .filter(|l| l.state == LockState::Unknown)
        .map(|l| l.name.as_str())
        .collect();
    let datastore_unknown = match &i.leases.cluster.datastore {
        Datastore::Unknown(why) => Some(format!(
            "the datastore is not known ({why}); a single server on sqlite elects no leader"
        )),
        _ => None,
    };
    let run = lock_status::unjudgeable(i.state, i.leases.cluster.lock_style)
        .map(str::to_string)
        .or(datastore_unknown)
        .filter(|_| !unjudged.is_empty())
        .map(|why| {
            let note = format!(
                "{} not found, which cannot be judged: {why}",
                unjudged.join(" and ")
            );
            CheckRun::of("lock-presence", Some(note))
        });
    Analysed {
        findings: Vec::new(),
        run,
    }
}

/// Whether the ConfigMap comparison had both sides to compare.
pub(super) fn snapshots_ran(state: &ClusterState, analysis: &SnapshotAnalysis) -> bool {
    // A pasted ConfigMap table that shows the snapshot ConfigMap (or its absence) counts.
    let listed = state
        .configmap_listing
        .as_ref()
        .is_some_and(|l| l.shows(&analysis.configmap) != Listed::NotShown);
    state.snapshot_files.is_some() && (state.configmaps.is_some() || listed)
}

fn snapshots(i: &Inputs) -> Analysed {
    let Some(analysis) = i.snapshots else {
        let note = "the ETCDSnapshotFile CRD is not installed (releases before Oct 2023)";
        return Analysed {
            findings: Vec::new(),
            run: Some(CheckRun::of("snapshots", Some(note))),
        };
    };
    let ran = snapshots_ran(i.state, analysis);
    Analysed {
        findings: analysis.findings.clone(),
        run: Some(CheckRun::of("snapshots", (!ran).then_some("not in dump"))),
    }
}

fn membership(i: &Inputs) -> Analysed {
    Analysed {
        findings: analyse_membership(i.state, i.distro, i.now),
        run: Some(CheckRun::of(
            "membership",
            i.state.nodes.is_none().then_some("not in dump"),
        )),
    }
}

/// Listed only for etcd members whose version does not publish `EtcdIsVoter` (before the
/// November 2023 releases): their learners and etcd controllers are not checked, which is not
/// healthy. The findings themselves come with membership's.
fn etcd_voter(i: &Inputs) -> Analysed {
    let note = i.state.nodes.as_deref().and_then(voter_not_published);
    Analysed {
        findings: Vec::new(),
        run: note.map(|n| CheckRun::of("etcd-voter", Some(n))),
    }
}

/// The servers' flags as node-args shows them: secrets in the annotation, drift between
/// etcd servers. Needs only Nodes.
fn etcd_config(i: &Inputs) -> Analysed {
    let ran = i.state.nodes.is_some();
    let mut findings = Vec::new();
    if ran {
        findings = analyse_node_args_secrets(i.state, i.distro);
        findings.extend(analyse_etcd_config_drift(i.state, i.distro));
    }
    Analysed {
        findings,
        run: Some(CheckRun::of(
            "etcd-config",
            (!ran).then_some("Nodes not read"),
        )),
    }
}

/// Whether each etcd server keeps its snapshots' bookkeeping and S3 as its flags promise.
/// Needs Nodes and ETCDSnapshotFiles.
fn snapshot_schedule(i: &Inputs) -> Analysed {
    let state = i.state;
    let not_run = if state.snapshot_crd_missing {
        Some("the ETCDSnapshotFile CRD is not installed (releases before Oct 2023)")
    } else if state.nodes.is_none() {
        Some("Nodes not read")
    } else if state.snapshot_files.is_none() {
        Some("ETCDSnapshotFiles not read")
    } else {
        None
    };
    let mut findings = Vec::new();
    if not_run.is_none() {
        findings = analyse_reconcile_stalled(state, i.distro, i.now);
        findings.extend(analyse_s3_snapshots(state, i.distro, i.now));
    }
    Analysed {
        findings,
        run: Some(CheckRun::of("snapshot-schedule", not_run)),
    }
}

fn snapshot_files(i: &Inputs) -> Analysed {
    Analysed {
        // It judges what it can without every input (empty records from the CRs alone).
        findings: analyse_snapshot_files(i.state, i.distro, i.now, i.leases),
        run: Some(CheckRun::of("snapshot-files", missing_input(i.state))),
    }
}

fn apiserver_endpoints(i: &Inputs) -> Analysed {
    Analysed {
        findings: analyse_apiserver_endpoints(i.state, i.distro, i.now),
        run: Some(CheckRun::of(
            "apiserver-endpoints",
            apiserver_endpoints::not_checked(i.state),
        )),
    }
}

/// The servers' secrets-encryption stage and config hash agree. Servers
/// that publish no hash have encryption off (k3s writes it only with --secrets-encryption):
/// judged, with a note, not "not checked".
fn secrets_encryption(i: &Inputs) -> Analysed {
    let run = |findings, note: Option<String>| Analysed {
        findings,
        run: Some(CheckRun {
            name: "secrets-encryption",
            ran: i.state.nodes.is_some(),
            note: note.unwrap_or_default(),
        }),
    };
    match analyse_secrets_encryption(i.state, i.distro) {
        Ok(findings) => run(findings, None),
        Err(why) => run(Vec::new(), Some(why)),
    }
}

/// The connection's client and serving certificates. Live only, so a dump
/// does not list the check at all (it never could); what a live read could not see (a proxy
/// in between) is a note.
fn connection_certificates(i: &Inputs) -> Analysed {
    match analyse_connection_certificates(i.state, i.distro, i.now) {
        Ok((findings, notes)) => Analysed {
            findings,
            run: Some(CheckRun {
                name: "connection-certificates",
                ran: true,
                note: notes.join("; "),
            }),
        },
        Err(_) => Analysed {
            findings: Vec::new(),
            run: None,
        },
    }
}

/// The cert monitor's Events. Servers older than the monitor publish none:
/// a note, never "fine".
fn certificates(i: &Inputs) -> Analysed {
    let (note, ran) = match (
        events_not_checked(i.state),
        unmonitored_servers(i.state, i.distro),
    ) {
        (Some(why), _) => (why, false),
        (None, Some((note, every))) => (note, !every),
        (None, None) => (String::new(), true),
    };
    Analysed {
        findings: analyse_cert_expiry(i.state, i.distro, i.now),
        run: Some(CheckRun {
            name: "certificates",
            ran,
            note,
        }),
    }
}

/// The re-encryption controller's Events beside the servers' stage.
fn secrets_reencrypt(i: &Inputs) -> Analysed {
    let not_run = events_not_checked(i.state).or_else(|| {
        i.state
            .nodes
            .is_none()
            .then(|| "Nodes not read".to_string())
    });
    Analysed {
        findings: analyse_secrets_reencrypt(i.state, i.distro, i.now),
        run: Some(CheckRun::of("secrets-reencrypt", not_run)),
    }
}

/// Node password Secrets whose Node is gone, from the Secrets' metadata
/// (the opt-in `rbac secrets-metadata` role).
fn node_passwords(i: &Inputs) -> Analysed {
    let not_run = secrets_not_checked(i.state).or_else(|| {
        i.state
            .nodes
            .is_none()
            .then(|| "Nodes not read".to_string())
    });
    Analysed {
        findings: analyse_node_passwords(i.state, i.distro, i.now),
        run: Some(CheckRun::of("node-passwords", not_run)),
    }
}

/// A serving certificate frozen by `listener.cattle.io/static`, from the
/// same metadata.
fn serving_cert_static(i: &Inputs) -> Analysed {
    Analysed {
        findings: analyse_serving_cert_static(i.state, i.distro),
        run: Some(CheckRun::of(
            "serving-cert-static",
            secrets_not_checked(i.state),
        )),
    }
}

/// The HelmCharts in kube-system and their install Jobs. Without the Jobs
/// (a dump that lacks them) the charts' own Failed conditions are still judged, with a note.
fn packaged_charts(i: &Inputs) -> Analysed {
    let state = i.state;
    let read = state.packaged_charts.as_read();
    let Some(charts) = read.and_then(|p| p.charts.as_ref()) else {
        let why = match &state.packaged_charts {
            // A dump that holds the Jobs and not the HelmCharts.
            Collected::Read(_) => "not in dump".to_string(),
            // serve reads them every minute; until its first read, nothing is known.
            Collected::NotAsked => "HelmCharts not read yet (serve reads them every minute)".into(),
            lacking => lacking.why_not().unwrap_or_default().to_string(),
        };
        return Analysed {
            findings: Vec::new(),
            run: Some(CheckRun::of("packaged-charts", Some(why))),
        };
    };
    let jobs = read.and_then(|p| p.jobs.as_deref());
    Analysed {
        findings: analyse_packaged_charts(charts, jobs, i.now),
        run: Some(CheckRun {
            name: "packaged-charts",
            ran: true,
            note: if jobs.is_none() {
                "Jobs in kube-system not in dump: helmchart-stuck not judged".to_string()
            } else {
                String::new()
            },
        }),
    }
}

/// Fail-closed admission webhooks that match the control plane's writes, and their backends.
fn admission_webhooks(i: &Inputs) -> Analysed {
    let judged = analyse_webhooks(i.state, i.distro);
    let note = match (judged.not_checked, &i.state.webhooks) {
        (Some(_), Collected::NotAsked) => {
            Some("webhook configurations not read yet (serve reads them every minute)".to_string())
        }
        (Some(why), _) => Some(why),
        (None, _) => None,
    };
    let mut run = CheckRun::of("admission-webhooks", note);
    if run.ran && !judged.unjudged.is_empty() {
        run.note = format!("backend not checked: {}", judged.unjudged.join("; "));
    }
    Analysed {
        findings: judged.findings,
        run: Some(run),
    }
}

/// The datastore from each server's metrics: quota, fragmentation, kine's compaction, latency.
fn datastore(i: &Inputs) -> Analysed {
    let datastore = &i.leases.cluster.datastore;
    match analyse_datastore(i.state, datastore, i.distro, i.now, &i.leases.locks) {
        Ok((findings, notes)) => Analysed {
            findings,
            run: Some(CheckRun {
                name: "datastore",
                ran: true,
                note: notes.join("; "),
            }),
        },
        Err(why) => Analysed {
            findings: Vec::new(),
            run: Some(CheckRun::of("datastore", Some(why))),
        },
    }
}

/// system-upgrade-controller's Plans. Not installed (no Plan CRD) is no fault: judged, with a
/// note. Without the Jobs or the ConfigMap (a dump that lacks them) the Plans' status and their
/// Nodes' cordons are judged, with a note.
fn upgrade_plans(i: &Inputs) -> Analysed {
    let state = i.state;
    let Some(read) = state.upgrade_plans.as_read() else {
        let why = match &state.upgrade_plans {
            Collected::NotAsked => "Plans not read yet (serve reads them every minute)".into(),
            lacking => lacking.why_not().unwrap_or_default().to_string(),
        };
        return Analysed {
            findings: Vec::new(),
            run: Some(CheckRun::of("upgrade-plans", Some(why))),
        };
    };
    let mut notes = Vec::new();
    if read.crd_missing {
        notes.push(
            "system-upgrade-controller is not installed (no plans.upgrade.cattle.io CRD): nothing to judge"
                .to_string(),
        );
    }
    let has_plans = read.plans.as_ref().is_some_and(|p| !p.is_empty());
    if has_plans && read.jobs.is_none() {
        notes.push(format!(
            "SUC's Jobs not in dump (add `kubectl get jobs -A -l {}`): judged from the Plans and Nodes",
            crate::model::upgrade_job::PLAN_LABEL
        ));
    }
    if has_plans && state.nodes.is_none() {
        notes.push("Nodes not read: cordons and roles unknown".to_string());
    }
    Analysed {
        findings: analyse_upgrade_plans(read, state.nodes(), i.now),
        run: Some(CheckRun {
            name: "upgrade-plans",
            ran: true,
            note: notes.join("; "),
        }),
    }
}

/// The version-skew policy, from the Nodes' kubelet versions.
fn version_skew(i: &Inputs) -> Analysed {
    Analysed {
        findings: analyse_version_skew(i.state.nodes()),
        run: Some(CheckRun::of(
            "version-skew",
            i.state.nodes.is_none().then_some("Nodes not read"),
        )),
    }
}
