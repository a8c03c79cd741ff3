use serde_json::json;

use super::*;
use crate::diagnose::test_cluster::TestCluster;
use crate::model::admission_webhook::ConfigurationKind;
use crate::model::collected::Collected;
use crate::model::webhook_backends::{BackendObjects, WebhookBackends};

/// A fail-closed (unset policy) webhook on Leases, backed by Service `gk/svc`.
fn lease_webhook(extra: serde_json::Value) -> Vec<WebhookFacts> {
    let mut hook = json!({"name": "leases.example.com",
        "clientConfig": {"service": {"namespace": "gk", "name": "svc"}},
        "rules": [{"operations": ["UPDATE"], "apiGroups": ["coordination.k8s.io"],
                   "apiVersions": ["v1"], "resources": ["leases"]}]});
    if let (Some(hook), Some(extra)) = (hook.as_object_mut(), extra.as_object()) {
        hook.extend(extra.clone());
    }
    let object = json!({"metadata": {"name": "block-leases"}, "webhooks": [hook]});
    WebhookFacts::from_configuration(ConfigurationKind::Validating, &object).unwrap()
}

/// Services, Endpoints and EndpointSlices read in `gk`, with `svc`'s ready counts.
fn backends(service: bool, endpoints: Option<usize>, slices: Option<usize>) -> WebhookBackends {
    let kind = |ready: Option<usize>| {
        let mut objects = BackendObjects::default();
        objects.read_namespace("gk");
        if let Some(n) = ready {
            objects.add("gk", "svc", n);
        }
        Collected::Read(objects)
    };
    WebhookBackends {
        services: kind(service.then_some(0)),
        endpoints: kind(endpoints),
        slices: kind(slices),
    }
}

fn cluster(version: &str, hooks: Vec<WebhookFacts>, backends: WebhookBackends) -> ClusterState {
    let mut state = TestCluster::k3s()
        .server("s1", version)
        .lease("k3s", "s1", 2)
        .lease("k3s-etcd", "s1", 2)
        .build();
    state.webhooks = Collected::Read(hooks);
    state.webhook_backends = backends;
    state
}

fn codes(judged: &WebhookJudgement) -> Vec<(FindingCode, Severity)> {
    judged
        .findings
        .iter()
        .map(|f| (f.code, f.severity))
        .collect()
}

#[test]
fn a_fail_closed_webhook_without_ready_endpoints_is_down_by_the_apiservers_source() {
    // Before 1.33 the apiserver reads Endpoints: none ready is down, whatever the slices say.
    let state = cluster(
        "v1.32.5+k3s1",
        lease_webhook(json!({})),
        backends(true, Some(0), Some(1)),
    );
    let judged = analyse_webhooks(&state, Distro::K3s);
    assert_eq!(
        codes(&judged),
        [(FindingCode::WebhookFailClosedDown, Severity::Error)]
    );
    let finding = &judged.findings[0];
    assert_eq!(
        finding.object,
        "ValidatingWebhookConfiguration block-leases"
    );
    assert!(
        finding
            .message
            .contains("Service gk/svc has no ready endpoint (in its Endpoints"),
        "{}",
        finding.message
    );
    assert!(
        finding.message.contains("Lease kube-system/k3s, k3s-etcd"),
        "{}",
        finding.message
    );
    assert!(
        finding.message.contains("kube-node-lease"),
        "{}",
        finding.message
    );
    assert!(
        finding
            .remediation
            .starts_with("kubectl get validatingwebhookconfiguration block-leases -o yaml")
    );
    assert!(
        finding
            .remediation
            .contains("kubectl delete validatingwebhookconfiguration block-leases")
    );
    assert!(judged.blocked.contains(&WriteTarget::LockLeases));
    // From 1.33 it reads EndpointSlices: ready there is up.
    let state = cluster(
        "v1.33.1+k3s1",
        lease_webhook(json!({})),
        backends(true, Some(0), Some(1)),
    );
    let judged = analyse_webhooks(&state, Distro::K3s);
    assert_eq!(
        codes(&judged),
        [(FindingCode::WebhookBlocksControlPlane, Severity::Warning)]
    );
    assert!(judged.blocked.is_empty());
    // No slice at all on 1.33: down.
    let state = cluster(
        "v1.33.1+k3s1",
        lease_webhook(json!({})),
        backends(true, Some(1), None),
    );
    assert_eq!(
        codes(&analyse_webhooks(&state, Distro::K3s)),
        [(FindingCode::WebhookFailClosedDown, Severity::Error)]
    );
}

#[test]
fn a_missing_service_is_down_only_where_services_were_read() {
    let state = cluster(
        "v1.30.1+k3s1",
        lease_webhook(json!({})),
        backends(false, None, None),
    );
    let judged = analyse_webhooks(&state, Distro::K3s);
    assert_eq!(
        codes(&judged),
        [(FindingCode::WebhookFailClosedDown, Severity::Error)]
    );
    assert!(
        judged.findings[0]
            .message
            .contains("Service gk/svc does not exist")
    );
    let mut refused = backends(false, None, None);
    refused.services = Collected::Refused("needs get services: `k3sdoctor rbac read-only`".into());
    let state = cluster("v1.30.1+k3s1", lease_webhook(json!({})), refused);
    let judged = analyse_webhooks(&state, Distro::K3s);
    assert_eq!(
        codes(&judged),
        [(FindingCode::WebhookBlocksControlPlane, Severity::Warning)]
    );
    assert_eq!(judged.unjudged.len(), 1);
    assert!(
        judged.unjudged[0].contains("needs get services"),
        "{:?}",
        judged.unjudged
    );
}

#[test]
fn ignore_and_unmatched_webhooks_say_nothing_and_url_webhooks_cannot_be_judged() {
    let ignore = cluster(
        "v1.30.1+k3s1",
        lease_webhook(json!({"failurePolicy": "Ignore"})),
        backends(false, None, None),
    );
    assert!(analyse_webhooks(&ignore, Distro::K3s).findings.is_empty());
    let elsewhere = cluster(
        "v1.30.1+k3s1",
        lease_webhook(json!({"namespaceSelector": {"matchExpressions": [{"key":
            "kubernetes.io/metadata.name", "operator": "NotIn",
            "values": ["kube-system", "kube-node-lease"]}]}})),
        backends(false, None, None),
    );
    assert!(
        analyse_webhooks(&elsewhere, Distro::K3s)
            .findings
            .is_empty()
    );
    let url = cluster(
        "v1.30.1+k3s1",
        lease_webhook(json!({"clientConfig": {"url": "https://policy.example.com/validate"}})),
        backends(false, None, None),
    );
    let judged = analyse_webhooks(&url, Distro::K3s);
    assert_eq!(
        codes(&judged),
        [(FindingCode::WebhookBlocksControlPlane, Severity::Warning)]
    );
    assert!(
        judged.findings[0]
            .message
            .contains("is a URL (https://policy.example.com/validate)")
    );
}

#[test]
fn only_a_may_match_lowers_a_down_webhook_to_a_warning_and_links_nothing() {
    let state = cluster(
        "v1.30.1+k3s1",
        lease_webhook(json!({"matchConditions": [{"name": "c", "expression": "true"}]})),
        backends(true, Some(0), None),
    );
    let judged = analyse_webhooks(&state, Distro::K3s);
    assert_eq!(
        codes(&judged),
        [(FindingCode::WebhookFailClosedDown, Severity::Warning)]
    );
    assert!(
        judged.findings[0]
            .message
            .contains("may match: its 1 matchCondition (CEL)")
    );
    assert!(judged.blocked.is_empty());
}

#[test]
fn webhooks_not_read_are_not_checked() {
    let mut state = cluster("v1.30.1+k3s1", Vec::new(), backends(true, None, None));
    state.webhooks = Collected::NotInDump(
        "not in dump (add `kubectl get validatingwebhookconfigurations`)".into(),
    );
    let judged = analyse_webhooks(&state, Distro::K3s);
    assert!(judged.findings.is_empty());
    assert!(judged.not_checked.unwrap().starts_with("not in dump"));
}

#[test]
fn lease_and_snapshot_findings_without_a_cause_hang_under_the_down_webhook() {
    let expired = Finding::new(
        Severity::Error,
        FindingCode::LeaseExpired,
        "Lease kube-system/k3s",
        "x",
    );
    let split_cause = Finding::new(
        Severity::Error,
        FindingCode::SnapshotMissingFromConfigmap,
        "ETCDSnapshotFiles",
        "y",
    )
    .caused_by(Some(FindingCode::LeaseSplit));
    let idle = Finding::new(
        Severity::Error,
        FindingCode::SnapshotControllerIdle,
        "ETCDSnapshotFiles",
        "z",
    );
    let mut findings = vec![expired, split_cause, idle];
    link_blocked_writes(&mut findings, &BTreeSet::from([WriteTarget::LockLeases]));
    assert_eq!(
        findings[0].caused_by,
        Some(FindingCode::WebhookFailClosedDown)
    );
    assert_eq!(
        findings[1].caused_by,
        Some(FindingCode::LeaseSplit),
        "its own cause stays"
    );
    assert_eq!(
        findings[2].caused_by, None,
        "ETCDSnapshotFile writes are not blocked"
    );
}

#[test]
fn check_lists_the_expired_lock_under_the_down_webhook() {
    let mut state = TestCluster::k3s()
        .server("s1", "v1.30.4+k3s1")
        .lease("k3s", "s1", 600)
        .lease("k3s-etcd", "s1", 600)
        .build();
    state.webhooks = Collected::Read(lease_webhook(json!({})));
    state.webhook_backends = backends(true, Some(0), None);
    let analysis = crate::diagnose::check::analyse_check(
        &state,
        Distro::K3s,
        crate::diagnose::test_cluster::now(),
    );
    let webhook = analysis
        .findings
        .iter()
        .find(|f| f.finding.code == FindingCode::WebhookFailClosedDown)
        .expect("the webhook finding");
    assert!(
        webhook
            .children
            .iter()
            .any(|c| c.code == FindingCode::LeaseExpired),
        "{:#?}",
        analysis.findings
    );
    assert!(
        analysis
            .checks
            .iter()
            .any(|c| c.name == "admission-webhooks" && c.ran)
    );
}
