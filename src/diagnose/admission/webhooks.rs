//! `webhook-fail-closed-down` and `webhook-blocks-control-plane`: fail-closed admission
//! webhooks in the path of the control plane's writes, with their backend judged the way the
//! apiserver resolves it (spec upgrades-admission.md §3): no Service, or no ready endpoint in
//! what this apiserver version reads, is an immediate rejection under `failurePolicy: Fail`.

use std::collections::BTreeSet;

use super::control_plane_writes::{ControlPlaneWrite, WriteTarget, control_plane_writes};
use super::rule_match::{NAMESPACE_NAME_LABEL, Verdict, judge};
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::admission_webhook::{Backend, WebhookFacts};
use crate::model::cluster_state::ClusterState;
use crate::model::webhook_backends::{Seen, sources_read};

/// What `check` learns about the webhooks.
#[derive(Debug, Default)]
pub(crate) struct WebhookJudgement {
    pub findings: Vec<Finding>,
    /// Why the check did not run at all.
    pub not_checked: Option<String>,
    /// The webhooks whose backend could not be judged, and why.
    pub unjudged: Vec<String>,
    /// The writes a fail-closed webhook that is down certainly matches: their failures
    /// follow from it.
    pub blocked: BTreeSet<WriteTarget>,
}

/// Whether a webhook's backend answers, as far as the objects tell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum BackendState {
    Down(String),
    Up(String),
    Unjudged(String),
}

pub(crate) fn analyse_webhooks(state: &ClusterState, distro: Distro) -> WebhookJudgement {
    let Some(webhooks) = state.webhooks.as_read() else {
        let why = match state.webhooks.why_not() {
            Some(why) => why.to_string(),
            None => "webhook configurations not read".to_string(),
        };
        return WebhookJudgement {
            not_checked: Some(why),
            ..WebhookJudgement::default()
        };
    };
    let writes = control_plane_writes(state, distro);
    let mut judgement = WebhookJudgement::default();
    for webhook in webhooks.iter().filter(|w| w.fail_closed) {
        let matched: Vec<(&ControlPlaneWrite, Verdict)> = writes
            .iter()
            .map(|w| (w, judge(webhook, w)))
            .filter(|(_, v)| v.matches_at_all())
            .collect();
        if matched.is_empty() {
            continue;
        }
        let backend = backend_state(state, webhook);
        if let BackendState::Unjudged(why) = &backend {
            judgement
                .unjudged
                .push(format!("{}: {why}", webhook.describe()));
        }
        if let BackendState::Down(_) = backend {
            judgement.blocked.extend(
                matched
                    .iter()
                    .filter(|(_, v)| *v == Verdict::Matches)
                    .map(|(w, _)| w.target),
            );
        }
        judgement
            .findings
            .push(finding(webhook, &matched, &backend));
    }
    judgement
}

/// The Service's state by the apiserver versions of the control-plane Nodes: each
/// apiserver resolves the Service itself, so the backend is down if it is down for any.
fn backend_state(state: &ClusterState, webhook: &WebhookFacts) -> BackendState {
    let (namespace, name) = match &webhook.backend {
        Backend::Service { namespace, name } => (namespace.as_str(), name.as_str()),
        Backend::Url(url) => {
            return BackendState::Unjudged(format!(
                "its backend is a URL ({url}), which the API cannot show answering"
            ));
        }
        Backend::Missing => return BackendState::Down("it names no backend".into()),
    };
    let backends = &state.webhook_backends;
    let service = format!("Service {namespace}/{name}");
    match backends.service(namespace, name) {
        Seen::Absent => return BackendState::Down(format!("{service} does not exist")),
        Seen::NotRead(why) => return BackendState::Unjudged(format!("{service} not read: {why}")),
        Seen::Present(_) => {}
    }
    let (reads_endpoints, reads_slices, known) = sources_read(state.nodes());
    let endpoints = (
        "Endpoints",
        "apiservers before 1.33 read",
        ready(backends.endpoints(namespace, name)),
    );
    let slices = (
        "EndpointSlices",
        "apiservers from 1.33 read",
        ready(backends.slices(namespace, name)),
    );
    let mut sources = Vec::new();
    if reads_endpoints {
        sources.push(endpoints);
    }
    if reads_slices {
        sources.push(slices);
    }
    let down: Vec<String> = sources
        .iter()
        .filter(|(_, _, r)| *r == Ok(false))
        .map(|(kind, who, _)| format!("{kind}, which {who}"))
        .collect();
    let not_read: Vec<String> = sources
        .iter()
        .filter_map(|(kind, _, r)| r.as_ref().err().map(|why| format!("{kind}: {why}")))
        .collect();
    let all_down = down.len() == sources.len();
    // Without a version, only what every source agrees on is a verdict.
    if !down.is_empty() && (known || all_down) {
        return BackendState::Down(format!(
            "{service} has no ready endpoint (in its {})",
            down.join("; ")
        ));
    }
    if down.is_empty() && not_read.is_empty() {
        return BackendState::Up(format!("{service} has ready endpoints"));
    }
    let mut why = not_read;
    if !known {
        why.push("the apiserver's version is unknown (no control-plane Node read)".into());
    }
    BackendState::Unjudged(format!("{service}: {}", why.join("; ")))
}

/// Ready endpoints (`Ok(true)`), none or no object (`Ok(false)`), or not read.
fn ready(seen: Seen) -> Result<bool, String> {
    match seen {
        Seen::Present(n) => Ok(n > 0),
        Seen::Absent => Ok(false),
        Seen::NotRead(why) => Err(why),
    }
}

fn finding(
    webhook: &WebhookFacts,
    matched: &[(&ControlPlaneWrite, Verdict)],
    backend: &BackendState,
) -> Finding {
    let certain = matched.iter().any(|(_, v)| *v == Verdict::Matches);
    let writes: Vec<String> = matched
        .iter()
        .map(|(w, v)| match v {
            Verdict::MayMatch(why) => format!("{} (may match: {})", w.what, why.join("; ")),
            _ => w.what.clone(),
        })
        .collect();
    let verb = if certain { "matches" } else { "may match" };
    let object = format!("{} {}", webhook.kind.name(), webhook.configuration);
    let resource = webhook.kind.resource();
    let cfg = &webhook.configuration;
    let exclude = format!(
        "or add a namespaceSelector excluding kube-system ({NAMESPACE_NAME_LABEL} NotIn \
         [kube-system, kube-node-lease])"
    );
    let (code, severity, state, fix) = match backend {
        BackendState::Down(why) => (
            FindingCode::WebhookFailClosedDown,
            if certain {
                Severity::Error
            } else {
                Severity::Warning
            },
            format!("is down: {why}; the apiserver rejects every write it {verb}"),
            format!(
                "kubectl get {resource} {cfg} -o yaml; restore its backend{}, or set \
                 failurePolicy: Ignore on webhook {}, {exclude}; in an emergency: kubectl delete \
                 {resource} {cfg}",
                service_hint(webhook),
                webhook.name
            ),
        ),
        BackendState::Up(why) | BackendState::Unjudged(why) => (
            FindingCode::WebhookBlocksControlPlane,
            Severity::Warning,
            format!(
                "fails closed in the path of the control plane ({why}): when its backend fails or \
                 hangs, every write it {verb} fails"
            ),
            format!(
                "kubectl get {resource} {cfg} -o yaml; set failurePolicy: Ignore on webhook {}, \
                 {exclude}",
                webhook.name
            ),
        ),
    };
    Finding::new(
        severity,
        code,
        object,
        format!(
            "webhook {} (failurePolicy Fail) {state}: {}",
            webhook.name,
            writes.join("; ")
        ),
    )
    .fix(fix)
}

/// ` (kubectl -n NS get service,endpoints NAME)` for a Service backend.
fn service_hint(webhook: &WebhookFacts) -> String {
    match &webhook.backend {
        Backend::Service { namespace, name } => format!(
            " (kubectl -n {namespace} get service/{name} endpoints/{name}, and the pods behind it)"
        ),
        _ => String::new(),
    }
}

/// Which findings follow from writes a down webhook blocks: the locks not renewed, the
/// snapshot controller not writing. Those without a cause of their own hang under it.
pub(crate) fn link_blocked_writes(findings: &mut [Finding], blocked: &BTreeSet<WriteTarget>) {
    if blocked.is_empty() {
        return;
    }
    let blocks = |targets: &[WriteTarget]| targets.iter().any(|t| blocked.contains(t));
    for finding in findings.iter_mut().filter(|f| f.caused_by.is_none()) {
        let caused = match finding.code {
            FindingCode::LeaseExpired | FindingCode::LeaseReleased | FindingCode::LeaseMissing => {
                blocks(&[WriteTarget::LockLeases, WriteTarget::LockConfigMaps])
            }
            FindingCode::LeaseHolderNotReady => {
                blocks(&[WriteTarget::NodeStatus, WriteTarget::NodeHeartbeats])
            }
            FindingCode::SnapshotControllerIdle => blocks(&[WriteTarget::SnapshotFiles]),
            FindingCode::SnapshotMissingFromConfigmap | FindingCode::SnapshotReconcileStalled => {
                blocks(&[WriteTarget::SnapshotConfigMap])
            }
            _ => false,
        };
        if caused {
            finding.caused_by = Some(FindingCode::WebhookFailClosedDown);
        }
    }
}

#[cfg(test)]
mod tests;
